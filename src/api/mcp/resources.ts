/**
 * The MCP resources: the reference data and the app's own records an agent
 * needs to quote a part (technologies, materials with their colours,
 * production parameter fields, post-processing services, currencies,
 * catalogue models with their configurations, customers, projects).
 *
 * Each resource is one REST list endpoint, read through the same Downstream
 * operation with the endpoint's own query Schema, for the caller's app:
 * `mfg://<name>` reads the first page, its template
 * `mfg://<name>{?<filters>,limit,offset}` filters and pages as the REST query
 * does. The content is JSON: the page's records as the REST body has them,
 * with the total and the URI of the next page (the REST answer's
 * `X-Total-Count` and `Link`).
 *
 * Cache hints (MCP 2026-07-28 `ttlMs`, `cacheScope`): global reference data
 * is the same for every app and changes only on deploy, so it is public and
 * long-lived; an app's own reference data (materials, currencies with its
 * exchange rates, catalogue models) private for minutes; customers and
 * projects, which an integrator adds at any time, private for seconds.
 */
import { Duration, Schema } from "effect"
import type { HttpApiEndpoint } from "effect/http-api"
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from "../../domain/Resource.ts"
import { CatalogueModel } from "../../domain/resources/catalogue.ts"
import { Customer } from "../../domain/resources/Customer.ts"
import { Project } from "../../domain/resources/orders.ts"
import { Colour, Currency, Material, PostProcessingService, ProductionParameterField, Technology } from "../../domain/resources/reference.ts"
import { recordOf } from "../endpoints.ts"
import { endpointNamed } from "../Operations.ts"

export const RESOURCE_MIME_TYPE = "application/json"

/** The paging parameters every template takes, as the REST list query names them. */
export const PAGING_PARAMETERS = ["limit", "offset"] as const

/** How long a client may keep a read, and whether a cache shared between apps may (MCP 2026-07-28 caching). */
export interface CacheHint {
  readonly ttl: Duration.Duration
  readonly cacheScope: "public" | "private"
}

/** Written at engine start and the same for every app: changes only on deploy. */
const GLOBAL_REFERENCE: CacheHint = { ttl: Duration.hours(1), cacheScope: "public" }
/** The app's own reference data: changed by its administrators, now and then. */
const APP_REFERENCE: CacheHint = { ttl: Duration.minutes(5), cacheScope: "private" }
/** The app's customers and projects: an integrator adds them at any time. */
const APP_CONTEXT: CacheHint = { ttl: Duration.seconds(30), cacheScope: "private" }

interface Listed {
  readonly name: string
  readonly title: string
  readonly filters: ReadonlyArray<string>
  readonly record: Schema.Top
}

/** One resource: its URI, what it lists, and the REST list it reads. */
export interface McpResourceSpec {
  /** `mfg://<name>`: the first page; the template adds the query. */
  readonly uri: string
  /** The MCP resource name (`material`): the REST resource's path without its slash, unless that does not say what the records are. */
  readonly name: string
  readonly title: string
  readonly description: string
  /** `<group>.list`, the Downstream operation of the REST list endpoint. */
  readonly operation: string
  readonly endpoint: HttpApiEndpoint.Top
  /** The REST list's filters the template takes, besides `limit` and `offset`. */
  readonly filters: ReadonlyArray<string>
  /** The template: `mfg://<name>{?<filters>,limit,offset}` (RFC 6570 form-style query). */
  readonly uriTemplate: string
  readonly cache: CacheHint
  /** Each record comes with the colour records its `colourIds` name (`colours`). */
  readonly withColours: boolean
  /** The JSON content of a read: one page of records. */
  readonly content: Schema.Codec<unknown, unknown>
}

/** What every resource says of its content and paging. */
const PAGE_TEXT = `JSON \`{items, total, offset, limit, next?}\`: one page of records as the REST list answers them, at most ` +
  `${DEFAULT_PAGE_SIZE} unless \`limit\` says otherwise (at most ${MAX_PAGE_SIZE}); \`total\` counts every match and \`next\` is the URI ` +
  "of the next page (absent on the last)."

/** The content of a read: a page of `record`s. */
const pageOf = (record: Schema.Top) =>
  Schema.Struct({
    items: Schema.Array(record),
    total: Schema.Int.annotate({ description: "How many records match, on every page" }),
    offset: Schema.Int.annotate({ description: "How many matching records come before this page" }),
    limit: Schema.Int.annotate({ description: "The page size asked for" }),
    next: Schema.optional(Schema.String.annotate({ description: "The URI of the next page; absent on the last page" }))
  })

/** A material as read, with the colours its `colourIds` name. */
const MaterialWithColours = Schema.Struct({
  ...recordOf(Material).fields,
  colours: Schema.Array(recordOf(Colour)).annotate({
    description: "The colours of `colourIds`, in that order: a part of the material takes one of them as `colourId`. " +
      "None listed: any colour of `mfg://colour` (or none)."
  })
})

const resource = (
  listed: Listed & { readonly path: `/${string}` },
  options: {
    readonly group: string
    /** The MCP name when the REST path does not say what the records are (`/service`). */
    readonly name?: string
    readonly description: string
    readonly filters: ReadonlyArray<string>
    readonly cache: CacheHint
    readonly withColours?: boolean
  }
): McpResourceSpec => {
  const name = options.name ?? listed.path.slice(1)
  const uri = `mfg://${name}`
  const operation = `${options.group}.list`
  const endpoint = endpointNamed(operation) as HttpApiEndpoint.Top | undefined
  if (endpoint === undefined) throw new Error(`MCP resource ${uri}: ${operation} is not an operation of the contract`)
  for (const filter of options.filters) {
    if (!listed.filters.includes(filter)) throw new Error(`MCP resource ${uri}: ${filter} is not a filter of ${operation}`)
  }
  const withColours = options.withColours === true
  const parameters = [...options.filters, ...PAGING_PARAMETERS]
  const filtersText = options.filters.length === 0 ? "" : ` Filters (equality, repeatable): ${options.filters.map((filter) => `\`${filter}\``).join(", ")}.`
  return {
    uri,
    name,
    title: listed.title,
    description: `${options.description} ${PAGE_TEXT}${filtersText}`,
    operation,
    endpoint,
    filters: options.filters,
    uriTemplate: `${uri}{?${parameters.join(",")}}`,
    cache: options.cache,
    withColours,
    content: Schema.toCodecJson(pageOf(withColours ? MaterialWithColours : recordOf(listed))) as unknown as Schema.Codec<unknown, unknown>
  }
}

/** The resources, in the order an agent needs them to quote a part. */
export const MCP_RESOURCES: ReadonlyArray<McpResourceSpec> = [
  resource(Technology, {
    group: "technology",
    description: "Manufacturing technologies (FDM, SLA, SLS, MJF, CNC milling): a part's `technologyId` is one's `id`.",
    filters: ["name"],
    cache: GLOBAL_REFERENCE
  }),
  resource(Material, {
    group: "material",
    description: "The app's materials, each of one technology, with the colours it comes in (`colours`): a part's `materialId` is " +
      "the `id` of a material of the part's technology, its `colourId` one of the material's colours.",
    filters: ["technologyId"],
    cache: APP_REFERENCE,
    withColours: true
  }),
  resource(Colour, {
    group: "colour",
    description: "Colours: a part's `colourId` is one's `id` (one of its material's colours, when the material lists them).",
    filters: [],
    cache: GLOBAL_REFERENCE
  }),
  resource(ProductionParameterField, {
    group: "productionParameterField",
    description: "Production parameters of each technology (e.g. layer height) and their values: a part's " +
      "`productionParameterIds` maps a field's `name` to the `id` of one of its `values`; a field left out takes its `defaultValueId`.",
    filters: ["technologyId"],
    cache: GLOBAL_REFERENCE
  }),
  resource(PostProcessingService, {
    group: "service",
    name: "post-processing-service",
    description: "Post-processing services and their prices: a part's `serviceIds` lists services whose `technologyIds` include the " +
      "part's technology.",
    filters: [],
    cache: GLOBAL_REFERENCE
  }),
  resource(Currency, {
    group: "currency",
    description: "Currencies with the app's exchange rate to EUR: a quote's `currencyId` (create_ticket_quote) is one's `id`; " +
      "without one a quote is in its project's currency, else EUR.",
    filters: ["code"],
    cache: APP_REFERENCE
  }),
  resource(CatalogueModel, {
    group: "catalogueModel",
    description: "The app's catalogue models, each with its `configurations` (technology, material, colour, production " +
      "parameters): a part made from one has `catalogueModelConfigurationId` set to the configuration's `id` and the same " +
      "technology, material and colour, and its price at once (the model is analysed already).",
    filters: ["catalogueId"],
    cache: APP_REFERENCE
  }),
  resource(Customer, {
    group: "customer",
    description: "The app's customers: the companies or people that order parts. Each has projects (`mfg://project{?customerId}`).",
    filters: ["name", "email", "externalReference"],
    cache: APP_CONTEXT
  }),
  resource(Project, {
    group: "project",
    description: "The app's projects (orders), each of one customer (`customerId`): a ticket's `projectId` (create_ticket) is " +
      "one's `id`; its `currencyId` is the default currency of its quotes.",
    filters: ["customerId", "externalReference", "name"],
    cache: APP_CONTEXT
  })
]

/** The resource a URI reads (`mfg://material`, or with a query `mfg://material?technologyId=fdm`), if any. */
export const resourceOfUri = (uri: string): McpResourceSpec | undefined => {
  const base = uri.split("?")[0]
  return MCP_RESOURCES.find((spec) => spec.uri === base)
}
