/**
 * The public REST API, v1: every operation of the spec under /v1.
 *
 * `PublicContract` is the operations themselves (paths, schemas, errors): the
 * engine implements exactly these (src/contract/Operations.ts) and serves them as
 * EngineApi. `PublicApi` is the contract as the gateway serves it, with the
 * gateway's own operations (the request log, from the meter): every endpoint
 * annotated with the scope it needs (src/contract/Scopes.ts) and behind the
 * Incoming Secret middleware, applied once here.
 */
import { HttpApi, OpenApi } from "effect/http-api"
import { EngineErrorBody } from "../domain/Errors.ts"
import { IncomingSecretAuth } from "./Authorization.ts"
import { withEnginePassthrough } from "./EnginePassthrough.ts"
import { CatalogueGroup, CatalogueModelGroup } from "./groups/catalogue.ts"
import { CustomerGroup } from "./groups/customer.ts"
import { ModelFileGroup } from "./groups/modelFiles.ts"
import {
  ItemGroup,
  MeetingNoteGroup,
  ModelVersionGroup,
  ProductionNoteGroup,
  ProjectGroup,
  TicketGroup,
  TicketModelGroup,
  TicketQuoteGroup
} from "./groups/orders.ts"
import {
  MachineGroupGroup,
  MachinesGroup,
  PpsGroup,
  ReelGroupGroup,
  ReelsGroup,
  ReportMetricsGroup,
  ServiceJobGroup,
  ServiceJobProductionGroup
} from "./groups/production.ts"
import {
  AppGroup,
  BlankGroup,
  ColourGroup,
  CurrencyGroup,
  MaterialGroup,
  MaterialSeriesGroup,
  ProductionParameterFieldGroup,
  QuotationFormGroup,
  QuotationFormRegionGroup,
  ServiceGroup,
  SupplierGroup,
  TechnologyGroup,
  UserGroup
} from "./groups/reference.ts"
import { RequestLogGroup } from "./groups/requestLog.ts"
import { EventGroup, WebhookDeliveryGroup, WebhookEndpointGroup } from "./groups/webhooks.ts"
import { IDEMPOTENCY_CONVENTION, withIdempotencyKey } from "./IdempotencyKey.ts"
import { withIncomingSecret } from "./IncomingSecretDocument.ts"
import { withMcpEndpoint } from "./mcp/openapi.ts"
import { CONVENTIONS, documentTransform } from "./openapi.ts"
import { withResponseHeaders } from "./responseHeaders.ts"
import { withRequiredScopes } from "./Scopes.ts"

export const PublicContract = HttpApi.make("public-v1")
  .add(AppGroup, BlankGroup, CatalogueModelGroup, CatalogueGroup, ColourGroup, CurrencyGroup, CustomerGroup)
  .add(ItemGroup, MachineGroupGroup, MachinesGroup, MaterialSeriesGroup, MaterialGroup, MeetingNoteGroup)
  .add(ModelFileGroup, ModelVersionGroup, PpsGroup, TicketModelGroup, ProductionNoteGroup, ProductionParameterFieldGroup, ProjectGroup)
  .add(QuotationFormRegionGroup, QuotationFormGroup, TicketQuoteGroup, ReelGroupGroup, ReelsGroup, ReportMetricsGroup)
  .add(ServiceJobGroup, ServiceJobProductionGroup, ServiceGroup, SupplierGroup, TechnologyGroup, TicketGroup, UserGroup)
  .add(WebhookEndpointGroup, EventGroup, WebhookDeliveryGroup)
  .prefix("/v1")
  // A misspelt filter or field is a 400 naming it, not silently ignored; every problem of a request is named at once.
  .annotate(HttpApi.QueryParseOptions, { onExcessProperty: "error", errors: "all" })
  .annotate(HttpApi.PayloadParseOptions, { onExcessProperty: "error", errors: "all" })

/** What the gateway serves under /v1: the engine's contract and the gateway's own request log. */
const Served = PublicContract.add(RequestLogGroup.prefix("/v1"))

export class PublicApi extends withRequiredScopes(Served).middleware(IncomingSecretAuth)
  .annotateMerge(OpenApi.annotations({
    title: "Manufacturing engine public API",
    version: "1.0.0",
    // What the API is, then the conventions every operation follows (its errors, paging, retries...).
    description: "Customers, orders, tickets and parts of a manufacturing quoting and production engine. " +
      `Every call is authenticated with an Incoming Secret and metered.\n\n${CONVENTIONS}\n${IDEMPOTENCY_CONVENTION}`,
    // A commercial service: integrators use it under their service agreement.
    license: { name: "Proprietary", identifier: "LicenseRef-Proprietary" },
    servers: [{ url: "/", description: "This gateway, production or local alike (paths start with /v1)" }],
    transform: (spec) =>
      withResponseHeaders(Served)(withIdempotencyKey(Served)(withMcpEndpoint(withEnginePassthrough(withIncomingSecret(documentTransform(spec))))))
  }))
  .annotate(HttpApi.AdditionalSchemas, [EngineErrorBody])
{}

/** Every operation of the API by its id, `<group>.<endpoint>` (`customer.get`): what the meter names. */
export const PUBLIC_OPERATIONS: ReadonlySet<string> = new Set(
  Object.values(PublicContract.groups).flatMap((group) => Object.values(group.endpoints).map((endpoint) => `${group.identifier}.${endpoint.identifier}`))
)
