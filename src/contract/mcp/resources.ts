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
 * The event feed (`mfg://event`, GET /v1/event) is read the same way, but an
 * agent reading it wants what just happened, not the app's first events: a
 * read without `offset` answers its newest page, and the page is small, as
 * each event carries a whole record. The request log (`mfg://request-log`,
 * GET /v1/request-log) too, read from the gateway's meter rather than the
 * engine.
 *
 * Cache hints (MCP 2026-07-28 `ttlMs`, `cacheScope`): global reference data
 * is the same for every app and changes only on deploy, so it is public and
 * long-lived; an app's own reference data (materials, currencies with its
 * exchange rates, catalogue models) private for minutes; customers and
 * projects, which an integrator adds at any time, private for seconds; the
 * event feed grows with every change, so it is never fresh.
 */
import { Duration, Schema } from "effect"
import type { HttpApiEndpoint } from "effect/http-api"
import { Event } from "../../domain/events/Event.ts"
import { plainJsonCodec } from "../../domain/JsonCodec.ts"
import { RequestLogEntry, RequestLogQuery } from "../../domain/RequestLog.ts"
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from "../../domain/Resource.ts"
import { CatalogueModel } from "../../domain/resources/catalogue.ts"
import { Customer } from "../../domain/resources/Customer.ts"
import { Project } from "../../domain/resources/orders.ts"
import { Colour, Currency, Material, PostProcessingService, ProductionParameterField, Technology } from "../../domain/resources/reference.ts"
import { EventQuery } from "../../domain/resources/webhooks.ts"
import { recordOf } from "../endpoints.ts"
import { RequestLogGroup } from "../groups/requestLog.ts"
import { anyEndpoint, endpointNamed } from "../Operations.ts"

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
/** The app's events: every change adds one, so a read is stale at once. */
const APP_FEED: CacheHint = { ttl: Duration.zero, cacheScope: "private" }

/**
 * The `_meta` key of a tool result naming the events its call wrote (`[{id, type}]`): MCP 2026-07-28 `_meta`
 * keys are `<reverse-DNS prefix>/<name>`, and only prefixes whose second label is `modelcontextprotocol` or `mcp` are reserved.
 */
export const EVENTS_META = "io.mfg/events"

/** How many events a read of the feed answers unless its `limit` says otherwise: each carries a whole record. */
export const EVENT_PAGE_SIZE = 20

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
  /** Who answers the list: the engine (Downstream), or the gateway's meter (the request log). */
  readonly servedBy: "engine" | "meter"
  /** The REST list's filters the template takes, besides `limit` and `offset`. */
  readonly filters: ReadonlyArray<string>
  /** The page size of a read without `limit`. */
  readonly pageSize: number
  /** A read without `offset` answers the newest page (the list's last records) instead of the first. */
  readonly newestFirst: boolean
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

/** What the event feed says of its content and paging: the newest page unless `offset` says which. */
const FEED_TEXT = `JSON \`{items, total, offset, limit, next?}\`: one page of events as the REST list answers them, in the order ` +
  `written. Without \`offset\`, the newest page: the last ${EVENT_PAGE_SIZE} events unless \`limit\` says otherwise (at most ` +
  `${MAX_PAGE_SIZE}); \`offset\` reads the page from that position on. \`total\` counts every match and \`next\` is the URI of the ` +
  "next page (absent on the last)."

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

/** A resource, from what it reads and how: the REST list operation `<group>.list`, which must take `filters`. */
const specOf = (options: {
  readonly name: string
  readonly title: string
  readonly description: string
  readonly group: string
  /** The filters the REST list's query takes. */
  readonly accepted: ReadonlyArray<string>
  readonly filters: ReadonlyArray<string>
  readonly cache: CacheHint
  readonly withColours: boolean
  readonly record: Schema.Top
  readonly pageSize: number
  readonly newestFirst: boolean
  /** The gateway's own list endpoint, when the engine does not serve it. */
  readonly gatewayEndpoint?: HttpApiEndpoint.Top | undefined
}): McpResourceSpec => {
  const uri = `mfg://${options.name}`
  const operation = `${options.group}.list`
  const endpoint = options.gatewayEndpoint ?? endpointNamed(operation) as HttpApiEndpoint.Top | undefined
  if (endpoint === undefined) throw new Error(`MCP resource ${uri}: ${operation} is not an operation of the contract`)
  for (const filter of options.filters) {
    if (!options.accepted.includes(filter)) throw new Error(`MCP resource ${uri}: ${filter} is not a filter of ${operation}`)
  }
  const parameters = [...options.filters, ...PAGING_PARAMETERS]
  return {
    uri,
    name: options.name,
    title: options.title,
    description: options.description,
    operation,
    endpoint,
    servedBy: options.gatewayEndpoint === undefined ? "engine" : "meter",
    filters: options.filters,
    pageSize: options.pageSize,
    newestFirst: options.newestFirst,
    // A name with brackets (`createdAt[from]`) is percent-encoded, as an RFC 6570 variable name may be.
    uriTemplate: `${uri}{?${parameters.map(encodeURIComponent).join(",")}}`,
    cache: options.cache,
    withColours: options.withColours,
    content: plainJsonCodec(pageOf(options.record))
  }
}

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
  const withColours = options.withColours === true
  const filtersText = options.filters.length === 0 ? "" : ` Filters (equality, repeatable): ${options.filters.map((filter) => `\`${filter}\``).join(", ")}.`
  return specOf({
    name: options.name ?? listed.path.slice(1),
    title: listed.title,
    description: `${options.description} ${PAGE_TEXT}${filtersText}`,
    group: options.group,
    accepted: listed.filters,
    filters: options.filters,
    cache: options.cache,
    withColours,
    record: withColours ? MaterialWithColours : recordOf(listed),
    pageSize: DEFAULT_PAGE_SIZE,
    newestFirst: false
  })
}

/** The URI of the app's event feed. */
export const EVENT_FEED_URI = "mfg://event"

/** The app's event feed (GET /v1/event): what changed, newest page first. */
const eventFeed = (): McpResourceSpec =>
  specOf({
    name: EVENT_FEED_URI.slice("mfg://".length),
    title: "Event",
    description: "The app's events: every change the engine made to its tickets, quotes, parts, service jobs, PPS records and " +
      "reels, the same events its webhooks deliver (`id`, `type`, `createdAt`, `appId`, `data`: `data.object` is the record as " +
      "read right after the change, `data.previousState` the state it left, for the events that move one). A tool call that wrote events names them in its " +
      `result's \`_meta\` (\`${EVENTS_META}\`). ${FEED_TEXT} Filters: \`type\` (repeatable: any of the types, e.g. ` +
      "`ticket_quote.accepted`) and `requestId` (the events one call wrote: its `X-Request-Id`).",
    group: "event",
    accepted: Object.keys(EventQuery.fields),
    filters: ["type", "requestId"],
    cache: APP_FEED,
    withColours: false,
    record: Event,
    pageSize: EVENT_PAGE_SIZE,
    newestFirst: true
  })

/** The URI of the app's request log. */
export const REQUEST_LOG_URI = "mfg://request-log"

/** The app's calls (GET /v1/request-log), from the gateway's meter: newest page first, as the event feed. */
const requestLog = (): McpResourceSpec =>
  specOf({
    name: REQUEST_LOG_URI.slice("mfg://".length),
    title: "Request log",
    description: "The app's own calls in this secret's mode, as metered: `requestId` (an answer's `X-Request-Id`), `createdAt`, " +
      "`method`, `route`, `operation` (`mcp.<tool>` for a tool call), `status`, `errorType`, `durationMs`, `secretId`, `clientAddress`; " +
      "status, error type and duration are null for a moment after a call. Never a secret's value or a body. " +
      `JSON \`{items, total, offset, limit, next?}\`: one page of calls, oldest first. Without \`offset\`, the newest page: the last ` +
      `${EVENT_PAGE_SIZE} calls unless \`limit\` says otherwise (at most ${MAX_PAGE_SIZE}); \`offset\` reads the page from that ` +
      "position on. `total` counts every match and `next` is the URI of the next page (absent on the last). Filters: `requestId`, " +
      "`operation`, `status`, `secretId` (repeatable) and `createdAt` (a date, or `createdAt[from]` and `createdAt[to]`). " +
      "Reading it is metered, but a read never lists itself.",
    group: "requestLog",
    accepted: Object.keys(RequestLogQuery.fields),
    filters: ["requestId", "operation", "status", "secretId", "createdAt", "createdAt[from]", "createdAt[to]"],
    cache: APP_FEED,
    withColours: false,
    record: RequestLogEntry,
    pageSize: EVENT_PAGE_SIZE,
    newestFirst: true,
    gatewayEndpoint: anyEndpoint(RequestLogGroup.endpoints.list)
  })

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
  }),
  eventFeed(),
  requestLog()
]

/** The resource a URI reads (`mfg://material`, or with a query `mfg://material?technologyId=fdm`), if any. */
export const resourceOfUri = (uri: string): McpResourceSpec | undefined => {
  const base = uri.split("?")[0]
  return MCP_RESOURCES.find((spec) => spec.uri === base)
}

/**
 * A quote as a PDF (A4, the same bytes for the same quote), as `GET
 * /v1/ticket-quote/{id}` answers it to `Accept: application/pdf`: one
 * `application/pdf` blob, for an agent that speaks only MCP to hand the
 * customer the quote it made.
 */
export const QUOTE_PDF = {
  uriTemplate: "mfg://ticket-quote/{id}/pdf",
  name: "ticket-quote-pdf",
  title: "Ticket quote as a PDF",
  description: "A ticket quote as a PDF (A4): the quote's `id` (create_ticket_quote, list_ticket_quotes) in the URI. The content is one " +
    "`application/pdf` blob, the same bytes for the same quote.",
  mimeType: "application/pdf",
  /** The REST operation it reads (its scope is the read's: src/contract/Scopes.ts). */
  operation: "ticketQuote.get",
  /** The quote's id in a URI of the template, or undefined when the URI is none of its. */
  idOf: (uri: string): string | undefined => /^mfg:\/\/ticket-quote\/([^/?#]+)\/pdf$/.exec(uri)?.[1]
} as const
