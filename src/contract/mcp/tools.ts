/**
 * The 9 MCP tools: each is one REST endpoint of the public API, with that
 * endpoint's own Schemas (nothing is declared twice).
 *
 * A tool's arguments are the endpoint's path parameters, query parameters and
 * body fields side by side in one object; its input schema (JSON Schema
 * 2020-12) is derived from those three Schemas, its output schema from the
 * endpoint's success Schema. The tool calls the same Downstream operation
 * (`<group>.<endpoint>`), so `structuredContent` is the REST response body.
 *
 * The body is decoded as the REST endpoint decodes it (its JSON codec), so an
 * update tool takes the record as read, its read-only fields ignored. Rules
 * across fields (the model source's `oneOf`) come from the body's decoded
 * side, where its Schema checks them. What an agent is told differs from the
 * REST wording only where it must: each id argument says which MCP resource
 * or tool gives it, and no text names a REST path.
 *
 * Arguments are validated here, with the endpoint's Schemas, so that invalid
 * arguments come back as a tool error (`isError: true`) naming every field at
 * fault, as the MCP specification asks, and not as a JSON-RPC protocol error.
 */
import { Effect, Schema, SchemaIssue, type SchemaRepresentation } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { type HttpApiEndpoint, HttpApiSchema } from "effect/http-api"
import { BadRequest, type DownstreamError, FieldProblem } from "../../domain/Errors.ts"
import { plainJsonCodec } from "../../domain/JsonCodec.ts"
import { DATE_FIELDS, MAX_DATE_LENGTH } from "../../domain/Resource.ts"
import { CurrentCaller } from "../Authorization.ts"
import { badRequestOf } from "../BadRequests.ts"
import { TicketGroup, TicketModelGroup, TicketQuoteGroup } from "../groups/orders.ts"
import { inputStructure, outputStructure } from "./toolSchemas.ts"

/** What a failed tool call answers: the REST error body, `{code, message, type}`, and `errors` for invalid arguments. */
export const ToolFailure = Schema.Struct({
  code: Schema.Int,
  message: Schema.String,
  type: Schema.String,
  errors: Schema.optional(Schema.Array(FieldProblem)),
  moreErrors: Schema.optional(Schema.Int)
}).annotate({ title: "Tool error", description: "The REST error body: `code` is the HTTP status the REST endpoint would answer." })
export type ToolFailure = typeof ToolFailure.Type

type Part = "params" | "query" | "payload"

interface JsonSchemaObject {
  readonly type?: unknown
  readonly properties?: Readonly<Record<string, unknown>>
  readonly required?: ReadonlyArray<string>
  readonly [key: string]: unknown
}

/** One part of an endpoint's input (path, query or body), as a JSON codec of its decoded type. */
interface InputPart {
  readonly part: Part
  readonly keys: ReadonlySet<string>
  /** The keys taken and dropped unread: the read-only fields of a record as read. */
  readonly ignored: ReadonlySet<string>
  readonly decode: (input: unknown) => Effect.Effect<unknown, Schema.SchemaError>
}

/**
 * How one tool maps to its endpoint, and what the MCP annotations say of it
 * (hints a client uses to decide whether to ask its user first).
 */
export interface McpToolSpec {
  readonly name: string
  readonly title: string
  /** For the agent: what the tool does and where its arguments come from; no REST path (an agent has only MCP). */
  readonly description: string
  /** The REST operation, e.g. `POST /v1/ticket/{ticketId}/quote` (docs/mcp.md). */
  readonly rest: string
  /** `<group>.<endpoint>`, the Downstream operation of the REST endpoint. */
  readonly operation: string
  readonly endpoint: HttpApiEndpoint.Top
  /** Changes nothing. */
  readonly readOnly: boolean
  /** May change or close what exists (not only add): a replace clears omitted fields, a quote supersedes the open one. */
  readonly destructive: boolean
  /** The same call again changes nothing more. */
  readonly idempotent: boolean
  /** Reaches outside the app's records: the engine downloads a model file from the URL given. */
  readonly openWorld: boolean
  /** The top-level arguments' descriptions for this tool, over ARGUMENT_SOURCES (the tool's own `id`, its filters). */
  readonly arguments?: Readonly<Record<string, string>>
  /** The REST endpoint answers an empty 200 for a missing record: the tool answers `null`. */
  readonly nullable?: boolean
  /** The tool changes one existing record, and takes `ifMatch` (the REST `If-Match`): the version it was read at. */
  readonly conditional?: boolean
  /**
   * The read whose representation the tool's records are (the REST read that answers the same record, and whose
   * `ETag` the result's `_meta` repeats); none when the tool answers no record of its own kind.
   */
  readonly recordRead?: HttpApiEndpoint.Top
}

const endpointOf = (group: { readonly identifier: string; readonly endpoints: object }, name: string) => {
  const endpoint = (group.endpoints as Readonly<Record<string, HttpApiEndpoint.Top>>)[name]
  if (endpoint === undefined) throw new Error(`MCP tools: no endpoint ${group.identifier}.${name}`)
  return { operation: `${group.identifier}.${name}`, endpoint }
}

const ticket = (name: string) => endpointOf(TicketGroup, name)
const ticketModel = (name: string) => endpointOf(TicketModelGroup, name)
const ticketQuote = (name: string) => endpointOf(TicketQuoteGroup, name)

/** The REST reads of the tools' records (a ticket has no `GET /ticket/{id}`: its lookup reads it by id). */
const quoteRead = ticketQuote("get").endpoint
const ticketRead = ticket("lookup").endpoint
const partRead = ticketModel("get").endpoint

/** Where an agent finds a ticket's id. */
const TICKET_ID = "the `id` of a `create_ticket` or `lookup_ticket` result"
const LIST_TEXT = "Filters (arrays of values) combine with AND; oldest first, paged by `limit` and `offset`."
const RECORD_AS_READ = "as a list or create result answers it, with your changes (read-only fields are ignored)"

/**
 * A list's date filters as the tools state them, said once in the tool's `$defs`: what the check accepts (a date or
 * a date-time of at most MAX_DATE_LENGTH characters, or null for none) and what each of the six selects, by its name.
 */
const DATE_FILTER = "DateFilter"
const DATE_FILTER_SCHEMA = {
  type: ["string", "null"],
  maxLength: MAX_DATE_LENGTH,
  anyOf: [{ format: "date" }, { format: "date-time" }],
  description: "A date (a whole UTC day) or date-time: `createdAt`, `updatedAt` on or at it, `[from]` at or after, `[to]` at or " +
    "before it (a date: by its end)"
}
const DATE_FILTERS: Readonly<Record<string, unknown>> = Object.fromEntries(
  DATE_FIELDS.flatMap((field) => [field, `${field}[from]`, `${field}[to]`]).map((name) => [name, { $ref: `#/$defs/${DATE_FILTER}` }])
)

/** The argument of a conditional tool naming the version of the record it changes. */
export const IF_MATCH = "ifMatch"

/**
 * A read-only field of a record as read, in an update tool's input: any
 * value, dropped. JSON Schema's `readOnly` says exactly that ("managed by the
 * owning authority ... attempts to modify it are expected to be ignored"), in
 * fewer bytes than a description repeated on each such field.
 */
const READ_ONLY_ARGUMENT = { readOnly: true }

const IF_MATCH_ARGUMENT = {
  type: "string",
  minLength: 1,
  maxLength: 1000,
  description: "The record's etag as read (`_meta[\"io.mfg/etag\"]`, a list's `io.mfg/etags`): if it changed since, code 412 and no change"
}

/** What an `If-Match` header holds: `*`, or entity tags separated by commas (RFC 9110). */
const ENTITY_TAG_LIST = /^\s*(\*|(W\/)?"[\x21\x23-\x7e\x80-\xff]*"(\s*,\s*(W\/)?"[\x21\x23-\x7e\x80-\xff]*")*)\s*$/
const isEntityTagList = (value: unknown): value is string => typeof value === "string" && value.length <= 1000 && ENTITY_TAG_LIST.test(value)

/** An `ifMatch` that is no entity tag, as the schema's own issue, naming the argument. */
const INVALID_IF_MATCH: SchemaIssue.Issue = new SchemaIssue.Pointer(
  [IF_MATCH],
  new SchemaIssue.InvalidValue({ message: "expected an etag as a result's _meta gives it (a quoted string, e.g. \"abc\"), or *" })
)

/** The 9 tools, in the order of the architecture page. */
export const TOOL_SPECS: ReadonlyArray<McpToolSpec> = [
  {
    name: "list_ticket_quotes",
    title: "List ticket quotes",
    description: `Lists the app's ticket quotes with their lines, total and state. ${LIST_TEXT} A \`sent\` quote past its \`validUntil\` ` +
      "reads as `expired`.",
    rest: "GET /v1/ticket-quote",
    ...ticketQuote("list"),
    readOnly: true,
    destructive: false,
    idempotent: true,
    openWorld: false,
    recordRead: quoteRead,
    arguments: {
      ids: "Only the quotes with these `id`s",
      ticketId: `Only the quotes of these tickets (each ${TICKET_ID})`,
      state: "Only the quotes in one of these states"
    }
  },
  {
    name: "create_ticket_quote",
    title: "Create and send a ticket quote",
    description: "Prices the ticket's parts and items into a new quote in state `sent` and moves the ticket to `quoted`. The ticket " +
      "must be `draft` or `quoted`, with parts or items, every part priced. The ticket's open quote, if any, becomes `superseded` " +
      "(final). Currency: `currencyId`, else the project's, else EUR. `quantityOptions` " +
      "(`[{ticketModelId, quantities: [1, 10, 100]}]`) offers a part at several quantities (its line's `options`).",
    rest: "POST /v1/ticket/{ticketId}/quote",
    ...ticket("quote"),
    readOnly: false,
    // A newer quote supersedes the ticket's open one, for good.
    destructive: true,
    idempotent: false,
    openWorld: false,
    recordRead: quoteRead,
    arguments: { ticketId: `The ticket to quote: ${TICKET_ID}` }
  },
  {
    name: "update_ticket_quote",
    title: "Replace a ticket quote",
    description: `Replaces a \`sent\` quote: pass it ${RECORD_AS_READ}. Omitted optional fields (\`notes\`) are cleared. ` +
      "`state` `accepted` records the customer's acceptance (the newest sent quote, still valid; the ticket becomes `accepted`), " +
      "`rejected` the refusal; both are final. To accept, send it as read with `state` changed and its etag: " +
      "`{...quote, \"state\": \"accepted\", \"ifMatch\": <its _meta etag>}`; the engine's fields (`number`, `total`, " +
      "`exchangeRate`, `pdfUrl`, timestamps, a line's `total`) may be left out, any sent must be as read. While `sent`, a line's " +
      "`description` and `unitPrice` may change; lines cannot be added, removed or re-pointed.",
    rest: "PUT /v1/ticket-quote/{id}",
    ...ticketQuote("replace"),
    readOnly: false,
    // Omitted optional fields are cleared, and an accepted or rejected quote is final.
    destructive: true,
    idempotent: true,
    openWorld: false,
    recordRead: quoteRead,
    conditional: true,
    arguments: {
      id: "The quote to replace: the `id` of a `create_ticket_quote` or `list_ticket_quotes` result",
      ticketId: "The quoted ticket's id, as the quote reads it; it cannot change",
      currencyId: "The quote's currency id, as the quote reads it; it cannot change"
    }
  },
  {
    name: "lookup_ticket",
    title: "Look up a ticket",
    description: "Finds the ticket whose id, number (T-000042) or external reference is `identifier`, with its state. Answers null when there is none.",
    rest: "GET /v1/ticket/lookup",
    ...ticket("lookup"),
    readOnly: true,
    destructive: false,
    idempotent: true,
    openWorld: false,
    recordRead: ticketRead,
    nullable: true,
    arguments: { identifier: "The ticket's id, number (T-000042) or external reference" }
  },
  {
    name: "create_ticket",
    title: "Create a ticket",
    description: "Creates a ticket in state `draft` in a customer's project (order). Answers the ticket with its `id` and number " +
      "(T-000042): its parts are added with `create_part`, then `create_ticket_quote` quotes it.",
    rest: "POST /v1/ticket",
    ...ticket("create"),
    readOnly: false,
    destructive: false,
    idempotent: false,
    openWorld: false,
    recordRead: ticketRead
  },
  {
    name: "send_ticket_to_production",
    title: "Send a ticket to production",
    description: "Sends an `accepted` ticket (its quote accepted with `update_ticket_quote`) to production: its parts become service " +
      "jobs, one per technology (and machine group), with a production record per part. The ticket moves to `in_production`, " +
      "no longer to change or be cancelled. Answers the jobs.",
    rest: "PUT /v1/ticket/{id}/send-to-production",
    ...ticket("sendToProduction"),
    readOnly: false,
    // The ticket leaves the states in which it can change or be cancelled; a second call is refused and changes nothing.
    destructive: true,
    idempotent: true,
    openWorld: false,
    conditional: true,
    arguments: { id: `The ticket to send, its quote accepted: ${TICKET_ID}` }
  },
  {
    name: "list_parts",
    title: "List parts",
    description: `Lists the app's parts (ticket models) with their geometry, production times and prices (null until analysed and priced). ${LIST_TEXT}`,
    rest: "GET /v1/ticket-model",
    ...ticketModel("list"),
    readOnly: true,
    destructive: false,
    idempotent: true,
    openWorld: false,
    recordRead: partRead,
    arguments: {
      ids: "Only the parts with these `id`s",
      ticketId: `Only the parts of these tickets (each ${TICKET_ID})`,
      technologyId: "Only the parts of these technologies: technology ids from the `mfg://technology` resource",
      materialId: "Only the parts of these materials: material ids from the `mfg://material{?technologyId}` resource"
    }
  },
  {
    name: "create_part",
    title: "Create a part",
    description: "Adds a part (ticket model) to a `draft` or `quoted` ticket from one model source: a model file URL with the " +
      "technology, a material and optionally colour, production parameters and services; or a catalogue configuration, which " +
      "brings them all (any given must agree). Answers the part, analysed and priced. On a `quoted` ticket the open quote " +
      "becomes `superseded` and the ticket `draft` again.",
    rest: "POST /v1/ticket-model",
    ...ticketModel("create"),
    readOnly: false,
    // On a quoted ticket the open quote is superseded, for good.
    destructive: true,
    idempotent: false,
    openWorld: true,
    recordRead: partRead,
    arguments: { ticketId: `The \`draft\` or \`quoted\` ticket the part is for: ${TICKET_ID}` }
  },
  {
    name: "update_part",
    title: "Replace a part",
    description: `Replaces a part: pass it ${RECORD_AS_READ}. Omitted optional fields are cleared; a new \`modelEndpoint\` is ` +
      "downloaded and analysed, and the part priced again. Only while its ticket is `draft` or `quoted` (a `quoted` ticket's open " +
      "quote becomes `superseded`, the ticket `draft` again).",
    rest: "PUT /v1/ticket-model/{id}",
    ...ticketModel("replace"),
    readOnly: false,
    // Omitted optional fields are cleared; on a quoted ticket the open quote is superseded.
    destructive: true,
    idempotent: true,
    openWorld: true,
    recordRead: partRead,
    conditional: true,
    arguments: {
      id: "The part to replace: the `id` of a `create_part` or `list_parts` result",
      ticketId: `The part's ticket, as read (another \`draft\` or \`quoted\` one moves it): ${TICKET_ID}`
    }
  }
]

/**
 * What each id argument refers to and where an agent finds it, by argument
 * name, at any depth (a quote's `lines[].ticketModelId`): the REST wording
 * names REST lists, an agent has the MCP resources and tools.
 */
const ARGUMENT_SOURCES: Readonly<Record<string, string>> = {
  ticketId: `The ticket: ${TICKET_ID}`,
  projectId: "A project (order) `id` from `mfg://project{?customerId}` (the customers are in `mfg://customer`)",
  technologyId: "The part's technology: an `id` from `mfg://technology`",
  materialId: "A material of the technology: an `id` from `mfg://material{?technologyId}`",
  colourId: "One of the material's `colours` (`mfg://material{?technologyId}`), else any of `mfg://colour`",
  modelEndpoint: "One model source (else `catalogueModelConfigurationId`): a public http(s) URL of an STL, 3MF or OBJ file to analyse",
  catalogueModelConfigurationId: "The other model source: the `id` of a `configurations` entry of a model in `mfg://catalogue-model`",
  productionParameterIds: "Field `name` → the `id` of one of its `values` (`mfg://production-parameter-field{?technologyId}`); a " +
    "field left out takes its default",
  serviceIds: "Service `id`s from `mfg://post-processing-service` for the part's technology (in its `technologyIds`)",
  currencyId: "The quote's currency: a currency `id` from `mfg://currency`",
  ticketModelId: "A part of the ticket (the `id` of a `create_part` or `list_parts` result); on a quote's line, keep it as read",
  itemId: "The ticket item this line prices, as the quote reads it: keep it"
}

/** The endpoint's Schema for one part of its input, if it has that part. */
const partSchema = (endpoint: HttpApiEndpoint.Top, part: Part): Schema.Top | undefined => {
  if (part === "params") return endpoint.params as Schema.Top | undefined
  if (part === "query") return endpoint.query as Schema.Top | undefined
  const json = (endpoint.payload as ReadonlyMap<string, { readonly schemas: ReadonlyArray<Schema.Top> }>).get("application/json")
  return json?.schemas[0]
}

/** A JSON codec of the decoded type: what the HttpApi hands the REST handler, as JSON (a path or query parameter's typed value). */
const jsonCodec = (schema: Schema.Top) => plainJsonCodec(Schema.toType(schema))

/** The body's JSON codec, as the HttpApi decodes a REST body: a replace takes the record as read. */
const wireCodec = (schema: Schema.Top) => plainJsonCodec(schema)

/** How the tool decodes one part: the path and query as typed JSON values, the body as the REST endpoint reads it. */
const codecOf = (part: Part, schema: Schema.Top) => part === "payload" ? wireCodec(schema) : jsonCodec(schema)

/** The JSON Schema of an input codec: objects closed, as the tool's decoding refuses unknown fields at any depth. */
const jsonSchemaOf = (codec: Schema.Top) => {
  const document = Schema.toJsonSchemaDocument(codec, { onExcessProperty: "error" })
  return { schema: document.schema as JsonSchemaObject, definitions: document.definitions as Record<string, unknown> }
}

const failureOf = (error: BadRequest): ToolFailure => ({
  code: error.code,
  message: error.message,
  type: error.type,
  ...(error.errors === undefined ? {} : { errors: error.errors }),
  ...(error.moreErrors === undefined ? {} : { moreErrors: error.moreErrors })
})

type Json = Record<string, unknown>
const isJson = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * The rules across fields of a part's JSON Schema (the `allOf` its checks
 * give, e.g. the model source's `oneOf`): of its decoded side too, where a
 * body that accepts the record as read checks them.
 */
const rulesOf = (json: JsonSchemaObject, decoded: JsonSchemaObject): ReadonlyArray<unknown> => [
  ...(Array.isArray(json.allOf) ? json.allOf : []),
  ...(Array.isArray(decoded.allOf) ? decoded.allOf : [])
]

/** A body's properties, the writable ones (its decoded side's) first: what the record as read adds comes last. */
const writableFirst = (json: JsonSchemaObject, decoded: JsonSchemaObject): ReadonlyArray<readonly [string, unknown]> => {
  const entries = Object.entries(json.properties ?? {})
  const writable = new Set(Object.keys(decoded.properties ?? {}))
  return [...entries.filter(([key]) => writable.has(key)), ...entries.filter(([key]) => !writable.has(key))]
}

/**
 * Keywords that describe a schema without constraining it: a rule carries the body's own title and description,
 * and its branches' titles name what the properties' descriptions say (the model source's).
 */
const ANNOTATION_KEYWORDS = new Set(["title", "description", "examples", "$comment"])

/** A rule's constraints only: its annotations left out at any depth (a `properties` map's keys are names, kept). */
const constraintsOf = (value: unknown, isProperties = false): unknown => {
  if (Array.isArray(value)) return value.map((item) => constraintsOf(item))
  if (!isJson(value)) return value
  return Object.fromEntries(
    Object.entries(value).filter(([key]) => isProperties || !ANNOTATION_KEYWORDS.has(key)).map((
      [key, inner]
    ) => [key, constraintsOf(inner, !isProperties && key === "properties")])
  )
}

/** Rules as the input schema states them: a single `oneOf` at the top (where clients look for a choice), any other in `allOf`. */
const placeRules = (rules: ReadonlyArray<unknown>): Record<string, unknown> => {
  const constraints = rules.flatMap((rule) => {
    const kept = constraintsOf(rule)
    return isJson(kept) && Object.keys(kept).length > 0 ? [kept] : []
  })
  const distinct = [...new Map(constraints.map((rule) => [JSON.stringify(rule), rule])).values()]
  const choices = distinct.filter((rule) => Object.keys(rule).length === 1 && Array.isArray(rule.oneOf))
  const choice = choices.length === 1 ? choices[0] : undefined
  const rest = distinct.filter((rule) => rule !== choice)
  return { ...(choice === undefined ? {} : { oneOf: choice.oneOf }), ...(rest.length > 0 ? { allOf: rest } : {}) }
}

/**
 * An optional field whose value may be null (a read-only field as read):
 * `anyOf [anyOf [value, null], null]` as the one `anyOf [value, null]`,
 * its description kept.
 */
const flattened = (schema: Json): Json => {
  const members = Array.isArray(schema.anyOf) ? schema.anyOf : []
  const isNull = (member: unknown) => isJson(member) && member.type === "null" && Object.keys(member).length === 1
  const [inner, ...rest] = members
  if (members.length !== 2 || !rest.every(isNull) || !isJson(inner) || !Array.isArray(inner.anyOf) || !inner.anyOf.some(isNull)) return schema
  const { anyOf: _, ...outer } = schema
  return { ...outer, ...inner }
}

/** A property's schema with `description`: on its value's schema when the property is `anyOf [value, null]` (where the value's own is). */
const described = (schema: unknown, description: string): Json => {
  if (!isJson(schema)) return { description }
  const members = Array.isArray(schema.anyOf) ? schema.anyOf : []
  const values = members.filter((member) => !(isJson(member) && member.type === "null"))
  if (values.length === 1 && isJson(values[0])) {
    return { ...schema, anyOf: members.map((member) => member === values[0] ? { ...(member as Json), description } : member) }
  }
  return { ...schema, description }
}

/** Each property of an object schema's `properties`, with ARGUMENT_SOURCES' description where it names the property. */
const propertiesWithSources = (properties: Json): Json =>
  Object.fromEntries(
    Object.entries(properties).map(([name, property]) => {
      const inner = withSources(property)
      const source = ARGUMENT_SOURCES[name]
      const flat = isJson(inner) ? flattened(inner) : inner
      return [name, source === undefined ? flat : described(flat, source)]
    })
  )

/** `schema` with ARGUMENT_SOURCES' descriptions on the properties they name, at any depth (objects, arrays, `anyOf` members). */
const withSources = (schema: unknown): unknown => {
  if (Array.isArray(schema)) return schema.map(withSources)
  if (!isJson(schema)) return schema
  return Object.fromEntries(
    Object.entries(schema).map(([key, value]) => [key, key === "properties" && isJson(value) ? propertiesWithSources(value) : withSources(value)])
  )
}

/** The argument that is in no part of the tool's input, as the schema's own "unexpected key" issue. */
const unknownArgument = (key: string): SchemaIssue.Issue => new SchemaIssue.Pointer([key], new SchemaIssue.UnexpectedKey(Schema.Unknown.ast))

/**
 * Only a named schema (an `identifier`) that occurs more than once is a
 * reference: said once in the tool's own `$defs` (a located finding's three
 * points), anything else inline where it is used.
 */
const sharedOnly: SchemaRepresentation.ReferencePolicy = ({ identifier, occurrences }) => occurrences > 1 ? identifier : undefined

/** An answer's JSON Schema, self-contained: its shared parts in its own `$defs`. */
const outputSchemaOf = (success: Schema.Top): Json => {
  const document = Schema.toJsonSchemaDocument(success, { referencePolicy: sharedOnly })
  const definitions = document.definitions as Json
  return { ...(document.schema as Json), ...(Object.keys(definitions).length > 0 ? { $defs: definitions } : {}) }
}

/** The `$defs` names a schema refers to (`#/$defs/<name>`), those they refer to included. */
const referencedDefinitions = (schema: unknown, definitions: Json): ReadonlySet<string> => {
  const names = new Set<string>()
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) return value.forEach(visit)
    if (!isJson(value)) return
    const ref = value.$ref
    if (typeof ref === "string" && ref.startsWith("#/$defs/")) {
      const name = decodeURIComponent(ref.slice("#/$defs/".length))
      if (!names.has(name)) {
        names.add(name)
        visit(definitions[name])
      }
    }
    Object.values(value).forEach(visit)
  }
  visit(schema)
  return names
}

/** Everything a tool needs, derived from its endpoint once. */
export const deriveTool = (spec: McpToolSpec) => {
  const parts: Array<InputPart> = []
  const properties: Record<string, unknown> = {}
  const required: Array<string> = []
  const defs: Record<string, unknown> = {}
  const rules: Array<unknown> = []
  for (const part of ["params", "query", "payload"] as const) {
    const schema = partSchema(spec.endpoint, part)
    if (schema === undefined) continue
    const codec = codecOf(part, schema)
    const { definitions, schema: json } = jsonSchemaOf(codec)
    if (json.type !== "object" || json.properties === undefined) {
      throw new Error(`MCP tool ${spec.name}: the ${part} of ${spec.operation} is not an object`)
    }
    // The decoded side: what the endpoint's handler receives, with the checks across fields.
    const decoded = part === "payload" ? jsonSchemaOf(jsonCodec(schema)).schema : json
    const own = new Set<string>()
    const ignored = new Set<string>()
    for (const [key, value] of writableFirst(json, decoded)) {
      // A replace body may carry the record's `id` back as read; the tool takes it once, as the path's.
      const optionalEcho = part === "payload" && key in properties && !(json.required ?? []).includes(key)
      if (optionalEcho) continue
      if (key in properties) throw new Error(`MCP tool ${spec.name}: argument "${key}" is both in the path, query or body`)
      // What the record as read adds to the writable fields (timestamps, geometry, prices): taken, whatever it holds, and dropped.
      const readOnly = part === "payload" && decoded.properties !== undefined && !(key in decoded.properties)
      const isDateFilter = part === "query" && key in DATE_FILTERS
      properties[key] = readOnly ? READ_ONLY_ARGUMENT : isDateFilter ? DATE_FILTERS[key] : value
      if (isDateFilter) defs[DATE_FILTER] = DATE_FILTER_SCHEMA
      if (readOnly) ignored.add(key)
      own.add(key)
    }
    required.push(...(json.required ?? []))
    rules.push(...rulesOf(json, decoded))
    Object.assign(defs, definitions)
    const decode = Schema.decodeUnknownEffect(codec)
    parts.push({
      part,
      keys: own,
      ignored,
      decode: (input) => decode(input, { onExcessProperty: "error", errors: "all" })
    })
  }
  if (spec.conditional === true) properties[IF_MATCH] = IF_MATCH_ARGUMENT
  // The definitions the arguments use: a read-only field's (taken whatever it holds) are not said.
  const used = referencedDefinitions({ properties, rules }, defs)
  const usedDefs = Object.fromEntries(Object.entries(defs).filter(([name]) => used.has(name)))
  const argumentText = spec.arguments ?? {}
  const inputSchema = inputStructure({
    type: "object",
    properties: Object.fromEntries(
      Object.entries(propertiesWithSources(properties)).map(([name, property]) => {
        const text = argumentText[name]
        return [name, text === undefined ? property : described(property, text)]
      })
    ),
    ...(required.length > 0 ? { required } : {}),
    ...placeRules(rules),
    additionalProperties: false,
    ...(Object.keys(usedDefs).length > 0 ? { $defs: withSources(usedDefs) } : {})
  })
  for (const name of Object.keys(argumentText)) {
    if (!(name in properties)) throw new Error(`MCP tool ${spec.name}: no argument "${name}" to describe`)
  }

  const body = [...spec.endpoint.success].find((schema) => !HttpApiSchema.isNoContent(schema.ast))
  if (body === undefined) throw new Error(`MCP tool ${spec.name}: ${spec.operation} has no response body`)
  const success: Schema.Top = spec.nullable === true ? Schema.NullOr(body) : body
  const decodeAnswer = Schema.decodeUnknownEffect(jsonCodec(success))
  const outputSchema = outputStructure(outputSchemaOf(success))

  /**
   * The tool's arguments, split and decoded into the engine request the REST
   * endpoint would send, and the version `ifMatch` names (a conditional tool's).
   */
  const decodeArguments = Effect.fnUntraced(function*(args: unknown) {
    const input = args ?? {}
    if (typeof input !== "object" || Array.isArray(input)) {
      return yield* Effect.fail(failureOf(BadRequest.of("The arguments must be a JSON object")))
    }
    const { [IF_MATCH]: ifMatchArgument, ...record } = input as Record<string, unknown>
    const ifMatch = spec.conditional === true ? ifMatchArgument : undefined
    // Every problem of every argument at once, as the REST endpoint's 400 lists them.
    const issues: Array<SchemaIssue.Issue> = Object.keys(record).filter((key) => !parts.some((part) => part.keys.has(key))).map(unknownArgument)
    if (spec.conditional !== true && ifMatchArgument !== undefined) issues.push(unknownArgument(IF_MATCH))
    if (ifMatch !== undefined && ifMatch !== null && !isEntityTagList(ifMatch)) issues.push(INVALID_IF_MATCH)
    const request: { params?: Record<string, unknown>; query?: Record<string, unknown>; payload?: unknown } = {}
    for (const part of parts) {
      const own = Object.fromEntries(Object.entries(record).filter(([key]) => part.keys.has(key) && !part.ignored.has(key)))
      const decoded = yield* Effect.result(part.decode(own))
      if (decoded._tag === "Failure") {
        issues.push(decoded.failure.issue)
        continue
      }
      if (part.part === "payload") request.payload = decoded.success
      else request[part.part] = decoded.success as Record<string, unknown>
    }
    if (issues.length > 0) return yield* Effect.fail(failureOf(badRequestOf(issues.map((issue) => ({ kind: "Payload", issue })))))
    return { request, ifMatch: typeof ifMatch === "string" ? ifMatch : undefined }
  })

  const mismatch: ToolFailure = {
    code: 502,
    message: `The engine's answer to ${spec.operation} does not match its schema`,
    type: "BadGateway"
  }
  /** The engine's answer checked against the success Schema, as the REST handler does. */
  const checkAnswer = (answer: unknown): Effect.Effect<unknown, ToolFailure> => decodeAnswer(answer).pipe(Effect.mapError(() => mismatch))

  const encodeJson = Schema.encodeUnknownEffect(plainJsonCodec(success))
  /**
   * The engine's answer checked and encoded as JSON in one pass, as the REST
   * handler does (ForwardHandlers): the tool result's structured content.
   */
  const encodeAnswer = (answer: unknown): Effect.Effect<unknown, ToolFailure> => encodeJson(answer).pipe(Effect.mapError(() => mismatch))

  /**
   * One record, answered with the very schema its REST read answers it with:
   * the result's text is then that read's body, and its entity tag the tag of
   * that text.
   */
  const readBody = spec.recordRead === undefined ? undefined : [...spec.recordRead.success].find((schema) => !HttpApiSchema.isNoContent(schema.ast))
  const answersItsRecord = readBody === body

  const tool = Tool.dynamic(spec.name, {
    description: spec.description,
    parameters: inputSchema,
    success,
    failure: ToolFailure,
    failureMode: "return"
  })
    .addDependency(CurrentCaller)
    .annotate(Tool.Title, spec.title)
    .annotate(Tool.Readonly, spec.readOnly)
    .annotate(Tool.Destructive, spec.destructive)
    .annotate(Tool.Idempotent, spec.idempotent)
    .annotate(Tool.OpenWorld, spec.openWorld)

  return { spec, tool, inputSchema, outputSchema, success, decodeArguments, checkAnswer, encodeAnswer, answersItsRecord }
}

export type DerivedTool = ReturnType<typeof deriveTool>

/** The 9 tools, derived from their endpoints. */
export const McpTools: ReadonlyArray<DerivedTool> = TOOL_SPECS.map(deriveTool)

/** The tool kit of the MCP endpoint. */
export const McpToolkit = Toolkit.make(...McpTools.map((derived) => derived.tool))

/** The tool names, for metering (`mcp.<tool name>`). */
export const TOOL_NAMES: ReadonlySet<string> = new Set(TOOL_SPECS.map((spec) => spec.name))

/** The tools whose REST operation is a GET: they change nothing. */
export const READ_ONLY_TOOLS: ReadonlySet<string> = new Set(
  TOOL_SPECS.filter((spec) => spec.endpoint.method === "GET").map((spec) => spec.name)
)

/** A downstream failure as a tool error: the REST error body, unchanged. */
export const downstreamFailure = (error: DownstreamError): ToolFailure => ({
  code: error.code,
  message: error.message,
  type: error.type
})
