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
 * Arguments are validated here, with the endpoint's Schemas, so that invalid
 * arguments come back as a tool error (`isError: true`) naming the field, as
 * the MCP specification asks, and not as a JSON-RPC protocol error.
 */
import { Effect, Schema, SchemaIssue } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { type HttpApiEndpoint, HttpApiSchema } from "effect/http-api"
import { BadRequest, type DownstreamError, FieldProblem } from "../../domain/Errors.ts"
import { CurrentCaller } from "../Authorization.ts"
import { badRequestOf } from "../BadRequests.ts"
import type { DecodedInput } from "../EngineCall.ts"
import { TicketGroup, TicketModelGroup, TicketQuoteGroup } from "../groups/orders.ts"

/** What a failed tool call answers: the REST error body, `{code, message, type}`, and `errors` for invalid arguments. */
export const ToolFailure = Schema.Struct({
  code: Schema.Int,
  message: Schema.String,
  type: Schema.String,
  errors: Schema.optional(Schema.Array(FieldProblem))
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
  readonly decode: (input: unknown) => Effect.Effect<unknown, Schema.SchemaError>
}

/** How one tool maps to its endpoint. */
export interface McpToolSpec {
  readonly name: string
  readonly title: string
  readonly description: string
  /** The REST operation, e.g. `POST /v1/ticket/{ticketId}/quote`. */
  readonly rest: string
  /** `<group>.<endpoint>`, the Downstream operation of the REST endpoint. */
  readonly operation: string
  readonly endpoint: HttpApiEndpoint.Top
  readonly readOnly: boolean
  readonly idempotent: boolean
  /** The REST endpoint answers an empty 200 for a missing record: the tool answers `null`. */
  readonly nullable?: boolean
}

const endpointOf = (group: { readonly identifier: string; readonly endpoints: object }, name: string) => {
  const endpoint = (group.endpoints as Readonly<Record<string, HttpApiEndpoint.Top>>)[name]
  if (endpoint === undefined) throw new Error(`MCP tools: no endpoint ${group.identifier}.${name}`)
  return { operation: `${group.identifier}.${name}`, endpoint }
}

const ticket = (name: string) => endpointOf(TicketGroup, name)
const ticketModel = (name: string) => endpointOf(TicketModelGroup, name)
const ticketQuote = (name: string) => endpointOf(TicketQuoteGroup, name)

/** The 9 tools, in the order of the architecture page. */
export const TOOL_SPECS: ReadonlyArray<McpToolSpec> = [
  {
    name: "list_ticket_quotes",
    title: "List ticket quotes",
    description: "Lists the app's ticket quotes, filtered like GET /v1/ticket-quote (ids, ticketId, dates, limit, offset).",
    rest: "GET /v1/ticket-quote",
    ...ticketQuote("list"),
    readOnly: true,
    idempotent: true
  },
  {
    name: "create_ticket_quote",
    title: "Create and send a ticket quote",
    description:
      "Prices the ticket's parts and items into a quote, in the ticket's currency unless overridden, and sends it. Same as POST /v1/ticket/{ticketId}/quote.",
    rest: "POST /v1/ticket/{ticketId}/quote",
    ...ticket("quote"),
    readOnly: false,
    idempotent: false
  },
  {
    name: "update_ticket_quote",
    title: "Replace a ticket quote",
    description:
      "Whole-record replacement of a ticket quote: every required field must be present, omitted optional fields are cleared. Same as PUT /v1/ticket-quote/{id}.",
    rest: "PUT /v1/ticket-quote/{id}",
    ...ticketQuote("replace"),
    readOnly: false,
    idempotent: true
  },
  {
    name: "lookup_ticket",
    title: "Look up a ticket",
    description: "Finds the ticket whose id, number or external reference is `identifier`. Answers null when there is none. Same as GET /v1/ticket/lookup.",
    rest: "GET /v1/ticket/lookup",
    ...ticket("lookup"),
    readOnly: true,
    idempotent: true,
    nullable: true
  },
  {
    name: "create_ticket",
    title: "Create a ticket",
    description: "Creates a ticket in a project (order). Same as POST /v1/ticket.",
    rest: "POST /v1/ticket",
    ...ticket("create"),
    readOnly: false,
    idempotent: false
  },
  {
    name: "send_ticket_to_production",
    title: "Send a ticket to production",
    description:
      "The ticket's parts become service jobs, one per technology (and machine group), each with a PPS record per part. Answers the jobs. Same as PUT /v1/ticket/{id}/send-to-production.",
    rest: "PUT /v1/ticket/{id}/send-to-production",
    ...ticket("sendToProduction"),
    readOnly: false,
    idempotent: false
  },
  {
    name: "list_parts",
    title: "List parts",
    description: "Lists the app's parts (ticket models), filtered like GET /v1/ticket-model (ids, ticketId, technologyId, materialId, dates, limit, offset).",
    rest: "GET /v1/ticket-model",
    ...ticketModel("list"),
    readOnly: true,
    idempotent: true
  },
  {
    name: "create_part",
    title: "Create a part",
    description:
      "Creates a part (ticket model) in a ticket from a model file URL (`modelEndpoint`) or a catalogue model configuration, with technology, material and quantity. Same as POST /v1/ticket-model.",
    rest: "POST /v1/ticket-model",
    ...ticketModel("create"),
    readOnly: false,
    idempotent: false
  },
  {
    name: "update_part",
    title: "Replace a part",
    description:
      "Whole-record replacement of a part (ticket model): every required field must be present, omitted optional fields are cleared. Same as PUT /v1/ticket-model/{id}.",
    rest: "PUT /v1/ticket-model/{id}",
    ...ticketModel("replace"),
    readOnly: false,
    idempotent: true
  }
]

/** The endpoint's Schema for one part of its input, if it has that part. */
const partSchema = (endpoint: HttpApiEndpoint.Top, part: Part): Schema.Top | undefined => {
  if (part === "params") return endpoint.params as Schema.Top | undefined
  if (part === "query") return endpoint.query as Schema.Top | undefined
  const json = (endpoint.payload as ReadonlyMap<string, { readonly schemas: ReadonlyArray<Schema.Top> }>).get("application/json")
  return json?.schemas[0]
}

/** A JSON codec of the decoded type: what the HttpApi hands the REST handler, as JSON. */
const jsonCodec = (schema: Schema.Top) => Schema.toCodecJson(Schema.toType(schema)) as unknown as Schema.Codec<unknown, unknown>

const jsonSchemaOf = (codec: Schema.Top) => {
  const document = Schema.toJsonSchemaDocument(codec)
  return { schema: document.schema as JsonSchemaObject, definitions: document.definitions as Record<string, unknown> }
}

const failureOf = (error: BadRequest): ToolFailure =>
  error.errors === undefined
    ? { code: error.code, message: error.message, type: error.type }
    : { code: error.code, message: error.message, type: error.type, errors: error.errors }

/** The argument that is in no part of the tool's input, as the schema's own "unexpected key" issue. */
const unknownArgument = (key: string): SchemaIssue.Issue => new SchemaIssue.Pointer([key], new SchemaIssue.UnexpectedKey(Schema.Unknown.ast))

/** Everything a tool needs, derived from its endpoint once. */
export const deriveTool = (spec: McpToolSpec) => {
  const parts: Array<InputPart> = []
  const properties: Record<string, unknown> = {}
  const required: Array<string> = []
  const defs: Record<string, unknown> = {}
  for (const part of ["params", "query", "payload"] as const) {
    const schema = partSchema(spec.endpoint, part)
    if (schema === undefined) continue
    const codec = jsonCodec(schema)
    const { definitions, schema: json } = jsonSchemaOf(codec)
    if (json.type !== "object" || json.properties === undefined) {
      throw new Error(`MCP tool ${spec.name}: the ${part} of ${spec.operation} is not an object`)
    }
    const own = new Set<string>()
    for (const [key, value] of Object.entries(json.properties)) {
      // A replace body may carry the record's `id` back as read; the tool takes it once, as the path's.
      const optionalEcho = part === "payload" && key in properties && !(json.required ?? []).includes(key)
      if (optionalEcho) continue
      if (key in properties) throw new Error(`MCP tool ${spec.name}: argument "${key}" is both in the path, query or body`)
      properties[key] = value
      own.add(key)
    }
    required.push(...(json.required ?? []))
    Object.assign(defs, definitions)
    const decode = Schema.decodeUnknownEffect(codec)
    parts.push({
      part,
      keys: own,
      decode: (input) => decode(input, { onExcessProperty: "error", errors: "all" })
    })
  }
  const inputSchema = {
    type: "object",
    properties,
    ...(required.length > 0 ? { required } : {}),
    additionalProperties: false,
    ...(Object.keys(defs).length > 0 ? { $defs: defs } : {})
  }

  const body = [...spec.endpoint.success].find((schema) => !HttpApiSchema.isNoContent(schema.ast))
  if (body === undefined) throw new Error(`MCP tool ${spec.name}: ${spec.operation} has no response body`)
  const success: Schema.Top = spec.nullable === true ? Schema.NullOr(body) : body
  const decodeAnswer = Schema.decodeUnknownEffect(jsonCodec(success))

  /** The tool's arguments, split and decoded into the engine request the REST endpoint would send. */
  const decodeArguments = (args: unknown): Effect.Effect<DecodedInput, ToolFailure> =>
    Effect.gen(function*() {
      const input = args ?? {}
      if (typeof input !== "object" || Array.isArray(input)) {
        return yield* Effect.fail(failureOf(BadRequest.of("The arguments must be a JSON object")))
      }
      const record = input as Record<string, unknown>
      // Every problem of every argument at once, as the REST endpoint's 400 lists them.
      const issues: Array<SchemaIssue.Issue> = Object.keys(record).filter((key) => !parts.some((part) => part.keys.has(key))).map(unknownArgument)
      const request: { params?: Record<string, unknown>; query?: Record<string, unknown>; payload?: unknown } = {}
      for (const part of parts) {
        const own = Object.fromEntries(Object.entries(record).filter(([key]) => part.keys.has(key)))
        const decoded = yield* Effect.result(part.decode(own))
        if (decoded._tag === "Failure") {
          issues.push(decoded.failure.issue)
          continue
        }
        if (part.part === "payload") request.payload = decoded.success
        else request[part.part] = decoded.success as Record<string, unknown>
      }
      if (issues.length > 0) return yield* Effect.fail(failureOf(badRequestOf(issues.map((issue) => ({ kind: "Payload", issue })))))
      return request
    })

  const mismatch: ToolFailure = {
    code: 502,
    message: `The engine's answer to ${spec.operation} does not match its schema`,
    type: "BadGateway"
  }
  /** The engine's answer checked against the success Schema, as the REST handler does. */
  const checkAnswer = (answer: unknown): Effect.Effect<unknown, ToolFailure> => decodeAnswer(answer).pipe(Effect.mapError(() => mismatch))

  const tool = Tool.dynamic(spec.name, {
    description: `${spec.description}\n\nREST equivalent: ${spec.rest}.`,
    parameters: inputSchema,
    success,
    failure: ToolFailure,
    failureMode: "return"
  })
    .addDependency(CurrentCaller)
    .annotate(Tool.Title, spec.title)
    .annotate(Tool.Readonly, spec.readOnly)
    .annotate(Tool.Destructive, false)
    .annotate(Tool.Idempotent, spec.idempotent)
    .annotate(Tool.OpenWorld, false)

  return { spec, tool, inputSchema, success, decodeArguments, checkAnswer }
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
