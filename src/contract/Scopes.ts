/**
 * The scope each operation needs: one table, by group and endpoint, that the
 * gateway checks (IncomingSecretGuard for REST, the tool and resource
 * handlers for MCP), that the OpenAPI document shows as `x-required-scope`
 * on every operation, and that docs/integration.md lists.
 *
 * The table covers every operation of the contract (Operations.ts checks it
 * against the contract's type: an operation added without a scope does not
 * compile) and the gateway's own (the request log). `withRequiredScopes`
 * annotates each endpoint of an API with its scope, as the `RequiredScope`
 * annotation the request path reads and the OpenAPI `x-required-scope`
 * field, so the document is derived from the same table.
 *
 * A quote's acceptance is the one operation whose scope depends on its body:
 * `PUT /ticket-quote/{id}` revises a quote with `quote`, and accepting it
 * (`state: "accepted"`) also needs `order`, which the engine checks where
 * it accepts (with the secret's spend limit).
 */
import { Context } from "effect"
import { type HttpApi, type HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import type { Scope } from "../domain/Grants.ts"

/** An operation's scope; `toAccept`: what accepting a quote needs besides it. */
export type ScopeRule = Scope | { readonly scope: Scope; readonly toAccept: Scope }

/** The scope of each operation, by group identifier and endpoint identifier. */
export const OPERATION_SCOPES = {
  app: { get: "read" },
  blank: { list: "read", create: "write", get: "read" },
  catalogueModel: { list: "read", create: "write", get: "read", replace: "write", remove: "write", configurationPriceBreaks: "read" },
  catalogue: { create: "write" },
  colour: { list: "read", get: "read" },
  currency: { list: "read", get: "read", setExchangeRate: "write" },
  customer: { list: "read", create: "write", get: "read", replace: "write" },
  item: { list: "read", create: "write", replace: "write", remove: "write", get: "read" },
  machineGroup: { list: "read", create: "write", get: "read", replace: "write", remove: "write" },
  machine: { list: "read", create: "write", get: "read", replace: "write", remove: "write", byProximity: "read", assignReels: "write" },
  materialSeries: { list: "read", get: "read", replace: "write", remove: "write" },
  material: { list: "read", create: "write", get: "read", replace: "write", remove: "write" },
  meetingNote: { list: "read", create: "write" },
  modelFile: { upload: "write", get: "read", content: "read" },
  modelVersion: { list: "read", get: "read", fieldsResolve: "read" },
  pps: { list: "read", get: "read" },
  ticketModel: {
    list: "read",
    create: "write",
    get: "read",
    replace: "write",
    remove: "write",
    fromCatalogue: "write",
    similarity: "read",
    priceBreaks: "read",
    getMachiningStrategy: "read",
    setMachiningStrategy: "write",
    setPostProcessing: "write"
  },
  productionNote: { list: "read", create: "write" },
  productionParameterField: { list: "read" },
  project: { lookup: "read", list: "read", create: "write", get: "read", replace: "write" },
  quotationFormRegion: { list: "read", create: "write", get: "read", replace: "write", remove: "write" },
  quotationForm: { list: "read", get: "read" },
  ticketQuote: { list: "read", get: "read", replace: { scope: "quote", toAccept: "order" } },
  reelGroup: { list: "read", replace: "write", create: "write", get: "read" },
  reel: { list: "read", replace: "write", listInGroup: "read", createInGroup: "write" },
  reportMetrics: { get: "read" },
  serviceJob: {
    list: "read",
    create: "write",
    get: "read",
    replace: "write",
    remove: "write",
    production: "read",
    updateProduction: "write",
    reassignTicketModels: "order",
    merge: "order",
    startTimeline: "order",
    stopTimeline: "order"
  },
  serviceJobProduction: { list: "read" },
  service: { list: "read", get: "read" },
  supplier: { list: "read", get: "read" },
  technology: { list: "read", get: "read" },
  ticket: { lookup: "read", create: "write", replace: "write", sendToProduction: "order", cancel: "write", quote: "quote" },
  user: { list: "read", get: "read" },
  webhookEndpoint: {
    list: "webhooks",
    create: "webhooks",
    get: "webhooks",
    replace: "webhooks",
    remove: "webhooks",
    test: "webhooks",
    rotateSecret: "webhooks"
  },
  event: { list: "read" },
  webhookDelivery: { list: "webhooks", redeliver: "webhooks" },
  requestLog: { list: "read" }
} as const satisfies Readonly<Record<string, Readonly<Record<string, ScopeRule>>>>

/** The scope an endpoint needs, as the request path reads it from the endpoint's annotations. */
export class RequiredScope extends Context.Service<RequiredScope, Scope>()("mfg/api/RequiredScope") {}

const ruleOf = (group: string, endpoint: string): ScopeRule | undefined =>
  (OPERATION_SCOPES as Readonly<Record<string, Readonly<Record<string, ScopeRule>> | undefined>>)[group]?.[endpoint]

const scopeOfRule = (rule: ScopeRule): Scope => typeof rule === "string" ? rule : rule.scope

/** The scope an operation (`<group>.<endpoint>`) needs, if the table names it. */
export const scopeOfOperation = (operation: string): Scope | undefined => {
  const [group, endpoint] = operation.split(".")
  const rule = group === undefined || endpoint === undefined ? undefined : ruleOf(group, endpoint)
  return rule === undefined ? undefined : scopeOfRule(rule)
}

/** What accepting a quote needs besides the scope of `PUT /ticket-quote/{id}`. */
export const SCOPE_TO_ACCEPT: Scope = OPERATION_SCOPES.ticketQuote.replace.toAccept

/** The OpenAPI fields of a rule, merged into the operation object of the document. */
const documentFields = (rule: ScopeRule): Record<string, unknown> =>
  typeof rule === "string"
    ? { "x-required-scope": rule }
    : { "x-required-scope": rule.scope, "x-required-scope-to-accept": rule.toAccept }

/** The endpoint with its scope: the `RequiredScope` annotation and the document's fields (kept beside any other override). */
const withScope = (group: string, endpoint: HttpApiEndpoint.Top): HttpApiEndpoint.Top => {
  const rule = ruleOf(group, endpoint.identifier)
  if (rule === undefined) throw new Error(`No scope for ${group}.${endpoint.identifier}: add it to OPERATION_SCOPES (src/contract/Scopes.ts)`)
  const override = Context.getOrUndefined(endpoint.annotations, OpenApi.Override)
  return endpoint.annotate(RequiredScope, scopeOfRule(rule)).annotate(OpenApi.Override, { ...override, ...documentFields(rule) })
}

/** `api` with every endpoint annotated with its scope; an endpoint the table does not name fails at once. */
export const withRequiredScopes = <Id extends string, Groups extends HttpApiGroup.Constraint>(
  api: HttpApi.HttpApi<Id, Groups>
): HttpApi.HttpApi<Id, Groups> => {
  const groups = Object.values<HttpApiGroup.Constraint>(api.groups).map((group) => {
    if (!HttpApiGroup.isHttpApiGroup(group)) throw new TypeError(`${group.identifier} is not an HttpApiGroup`)
    const endpoints = Object.values(group.endpoints).map((endpoint) => withScope(group.identifier, endpoint))
    const [first, ...rest] = endpoints
    return first === undefined ? group : group.add(first, ...rest)
  })
  const [first, ...rest] = groups
  // Each group is added again under its identifier, replacing the one it was: the API's groups are the same.
  return first === undefined ? api : api.add(first, ...rest) as HttpApi.HttpApi<Id, Groups>
}
