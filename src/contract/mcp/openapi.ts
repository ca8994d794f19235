/**
 * POST /v1/mcp in the OpenAPI document. The endpoint is served by effect/ai's
 * McpServer, not by the HttpApi, so the HttpApi cannot describe it: its
 * path item is derived here from Schemas of the JSON-RPC messages it takes
 * (tool names from the tool table, protocol versions from McpServer's
 * revisions) and added by the document transform. docs/mcp.md says the rest
 * (the errors' table, the resources and the prompt).
 */
import { Schema } from "effect"
import { McpProtocol } from "effect/ai"
import { Int32, SafeInteger } from "../../domain/Integers.ts"
import { IDEMPOTENCY_KEY_SCHEMA } from "../IdempotencyKey.ts"
import { TOOL_SPECS } from "./tools.ts"

type Json = Record<string, unknown>

/** The protocol revisions the endpoint serves, newest first. */
export const MCP_PROTOCOLS = [McpProtocol.v2026_07_28, McpProtocol.v2025_11_25] as const

export const MCP_OPERATION_ID = "mcp.post"
export const MCP_TAG = "MCP"

/** The longest string id a request may have: JSON-RPC sets no bound; a UUID is 36 characters. */
export const MAX_REQUEST_ID_LENGTH = 200
/** The longest method name a message may have (MCP's longest is 32 characters). */
export const MAX_METHOD_LENGTH = 100
/** The longest `Mcp-Name` header: a tool's or prompt's name, or a resource's URI (the endpoint's are short). */
export const MAX_NAME_HEADER_LENGTH = 2000

/**
 * A JSON-RPC request id as the endpoint takes it (McpDirect.isRequestId): a
 * string of at most MAX_REQUEST_ID_LENGTH characters, or an integer a JSON
 * number holds exactly, so that it reads back as it was sent. Any other id
 * is refused unrun (400, -32600).
 */
export const JsonRpcId = Schema.Union([Schema.String.check(Schema.isMaxLength(MAX_REQUEST_ID_LENGTH)), SafeInteger]).annotate({
  description: `The request id, echoed in the answer: a string of at most ${MAX_REQUEST_ID_LENGTH} characters, or an integer`
})

/**
 * A notification's method as the endpoint takes one (McpDirect.withoutIdAnswer):
 * `notifications/…`, at most MAX_METHOD_LENGTH characters; any other message
 * without an id is refused unrun (400, -32600).
 */
export const NotificationMethod = Schema.String.check(
  Schema.isMaxLength(MAX_METHOD_LENGTH),
  Schema.isPattern(/^notifications\//, { message: "expected notifications/…" })
).annotate({ description: "e.g. notifications/initialized; answered 202 with no body" })
const Meta = Schema.Record(Schema.String, Schema.Unknown).annotate({
  description: "Per-request metadata: in 2026-07-28, the protocol version and client capabilities; optionally a W3C `traceparent`"
})
const ToolName = Schema.Literals(TOOL_SPECS.map((spec) => spec.name)).annotate({ description: "One of the 9 tools (tools/list lists them)" })

const ToolCall = Schema.Struct({
  jsonrpc: Schema.Literal("2.0"),
  id: JsonRpcId,
  method: Schema.Literal("tools/call"),
  params: Schema.Struct({
    name: ToolName,
    arguments: Schema.optional(Schema.Record(Schema.String, Schema.Unknown)).annotate({
      description: "The REST endpoint's path parameters, query parameters and body fields in one object"
    }),
    _meta: Schema.optional(Meta)
  })
}).annotate({
  title: "MCP tools/call",
  examples: [{ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "lookup_ticket", arguments: { identifier: "T-000042" } } }]
})

const OtherRequest = Schema.Struct({
  jsonrpc: Schema.Literal("2.0"),
  id: JsonRpcId,
  method: Schema.Literals([
    "server/discover",
    "initialize",
    "ping",
    "tools/list",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "prompts/list",
    "prompts/get",
    "completion/complete"
  ]),
  params: Schema.optional(Schema.Record(Schema.String, Schema.Unknown))
}).annotate({ title: "MCP request", examples: [{ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }] })

const Notification = Schema.Struct({
  jsonrpc: Schema.Literal("2.0"),
  method: NotificationMethod,
  params: Schema.optional(Schema.Record(Schema.String, Schema.Unknown))
}).annotate({ title: "MCP notification" })

export const McpMessage = Schema.Union([ToolCall, OtherRequest, Notification]).annotate({
  title: "MCP message",
  description: "A JSON-RPC 2.0 request or notification of MCP 2026-07-28 (or 2025-11-25)"
})

export const McpAnswer = Schema.Union([
  Schema.Struct({
    jsonrpc: Schema.Literal("2.0"),
    id: JsonRpcId,
    result: Schema.Record(Schema.String, Schema.Unknown).annotate({
      description: "For tools/call: `content` (the JSON as text), `structuredContent` (the REST response body) and `isError` " +
        "(true for engine, downstream and argument errors, with the REST error body `{code, message, type}`)"
    })
  }).annotate({ title: "MCP result" }),
  Schema.Struct({
    jsonrpc: Schema.Literal("2.0"),
    id: Schema.optionalKey(JsonRpcId.annotate({ description: "The request's id; absent when it had none or could not be read" })),
    error: Schema.Struct({
      code: Int32.annotate({
        description: "-32700 not JSON, -32600 not a JSON-RPC request (or no id, or a refused body: 413, 415, 406, a foreign Origin), " +
          "-32020 a header missing or differing from the body, -32022 unsupported protocol version, -32601 unknown method, " +
          "-32602 invalid params, 429 the app's rate limit spent (the HTTP status as an application-defined code)"
      }),
      message: Schema.String,
      data: Schema.optionalKey(Schema.Unknown.annotate({ description: "Details of the error, when the server has any" }))
    })
  }).annotate({ title: "MCP error" })
])

/** The JSON Schema of `schema`, its definitions moved into the document's components. */
const jsonSchema = (schema: Schema.Top, schemas: Json): unknown => {
  const document = Schema.toJsonSchemaDocument(schema)
  for (const [name, definition] of Object.entries(document.definitions)) schemas[name] ??= definition
  return JSON.parse(JSON.stringify(document.schema).replaceAll("#/$defs/", "#/components/schemas/"))
}

const header = (name: string, description: string, schema: Json) => ({ name, in: "header", required: false, description, schema })

/**
 * The longest each header the endpoint reads may be, as the document states
 * it: a longer one is refused unrun (McpAuth; 400, -32600).
 */
export const MCP_HEADER_LIMITS = {
  "Mcp-Method": MAX_METHOD_LENGTH,
  "Mcp-Name": MAX_NAME_HEADER_LENGTH
} as const

/**
 * The path item of POST /v1/mcp; `schemas` receives the definitions it
 * refers to. Engine and downstream errors of a tool are tool results
 * (`isError: true`), so there is no passthrough error response here.
 */
export const mcpPathItem = (schemas: Json, security: ReadonlyArray<Json>, unauthorized: Json, unavailable: Json): Json => {
  const versions = MCP_PROTOCOLS.map((protocol) => protocol.protocolVersion)
  return {
    post: {
      operationId: MCP_OPERATION_ID,
      tags: [MCP_TAG],
      summary: "MCP endpoint (Streamable HTTP, stateless)",
      description: "The 9 MCP tools, each one REST operation of /v1 with the same schemas, errors and metering " +
        "(`mcp.<tool name>`); the reference data, the app's customers and projects and its event feed as resources (`mfg://…`); the " +
        "`quote_a_part` prompt. The same Incoming Secret and the same 401 as REST. GET and DELETE answer 405; " +
        "a request with an `Origin` outside `MCP_ALLOWED_ORIGINS` answers 403. See docs/mcp.md.",
      security,
      parameters: [
        header("MCP-Protocol-Version", "The protocol revision (required in 2026-07-28)", { type: "string", enum: versions }),
        header("Mcp-Method", "2026-07-28: the body's `method` (a mismatch is -32020)", {
          type: "string",
          maxLength: MCP_HEADER_LIMITS["Mcp-Method"]
        }),
        header(
          "Mcp-Name",
          "2026-07-28: the tool's name (tools/call), the resource's URI (resources/read) or the prompt's name (prompts/get); a mismatch is -32020",
          { type: "string", maxLength: MCP_HEADER_LIMITS["Mcp-Name"] }
        ),
        header(
          "Idempotency-Key",
          "tools/call of create_ticket, create_part, create_ticket_quote or send_ticket_to_production: the call runs once per app and " +
            "key, its result answered again to a retry (`_meta[\"io.mfg/idempotentReplayed\"]`), as on REST",
          IDEMPOTENCY_KEY_SCHEMA
        )
      ],
      requestBody: {
        required: true,
        description: "One JSON-RPC message",
        content: { "application/json": { schema: jsonSchema(McpMessage, schemas) } }
      },
      responses: {
        "200": {
          description: "The JSON-RPC answer; also an invalid params error (-32602, e.g. an unknown tool) and, in 2025-11-25, an unknown method (-32601)",
          content: { "application/json": { schema: jsonSchema(McpAnswer, schemas) } }
        },
        "202": { description: "A notification was accepted (no body)" },
        "400": {
          description: "A JSON-RPC error the request caused: not JSON (-32700), not a JSON-RPC request or no id (-32600), a header " +
            "missing or differing from the body (-32020), an unsupported protocol version (-32022), a missing or malformed `_meta` (-32602)",
          content: { "application/json": { schema: jsonSchema(McpAnswer, schemas) } }
        },
        "401": unauthorized,
        "403": {
          description: "The request's `Origin` is not allowed (before the secret is judged; a JSON-RPC error without id)",
          content: { "application/json": { schema: jsonSchema(McpAnswer, schemas) } }
        },
        "404": {
          description: "2026-07-28: unknown method (-32601)",
          content: { "application/json": { schema: jsonSchema(McpAnswer, schemas) } }
        },
        "405": { description: "GET and DELETE: there is no stream and no session" },
        "406": {
          description: "The `Accept` header must allow `application/json` and `text/event-stream` (-32600, with the request's id)",
          content: { "application/json": { schema: jsonSchema(McpAnswer, schemas) } }
        },
        "413": {
          description: "The body is larger than MAX_BODY_BYTES (-32600; with the request's id when it could be read)",
          content: { "application/json": { schema: jsonSchema(McpAnswer, schemas) } }
        },
        "415": {
          description: "The body is not `application/json` (-32600, with the request's id)",
          content: { "application/json": { schema: jsonSchema(McpAnswer, schemas) } }
        },
        "429": {
          description: "The app's rate limit is spent (code 429, `data.type` TooManyRequests, with the request's id); see `Retry-After`",
          content: { "application/json": { schema: jsonSchema(McpAnswer, schemas) } }
        },
        "503": unavailable
      }
    }
  }
}

/**
 * Document transform: adds POST /v1/mcp, with the security requirement, the
 * exact 401 and the 503 the REST operations document, and its tag.
 */
export const withMcpEndpoint = (spec: Record<string, unknown>): Record<string, unknown> => {
  const paths = spec.paths as Record<string, Record<string, Json>>
  const rest = Object.values(paths).flatMap((item) => Object.values(item)).find((operation) => operation.security !== undefined)
  const components = spec.components as Json
  const schemas = components.schemas as Json
  const responses = (rest?.responses ?? {}) as Json
  const security = (rest?.security ?? []) as ReadonlyArray<Json>
  paths["/v1/mcp"] = mcpPathItem(schemas, security, responses["401"] as Json, responses["503"] as Json) as Record<string, Json>
  const tags = (spec.tags ?? []) as Array<Json>
  tags.push({
    name: MCP_TAG,
    description: "The Model Context Protocol endpoint: the quoting operations as 9 tools for AI agents."
  })
  spec.tags = tags
  return spec
}
