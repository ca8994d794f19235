/**
 * A plain MCP 2026-07-28 `tools/call`, answered without McpServer.
 *
 * McpServer's generic path (the JSON-RPC message and its `_meta` decoded
 * with Schemas, the tool's result decoded again and encoded, a fiber per
 * request in RpcServer) cost about as much CPU as the whole REST call of the
 * same operation. A request that McpServer would plainly accept, in exactly
 * the form the Streamable HTTP transport sends it, is answered here with the
 * same tool call (McpToolCalls) and the same JSON-RPC answer, byte for byte
 * in content; anything else (another method or protocol, an unexpected
 * header, field or `_meta` entry) goes to McpServer, which validates and
 * answers it as before.
 */
import { Effect } from "effect"
import type { McpSchema } from "effect/ai"
import type { HttpServerRequest } from "effect/http"
import { HttpServerResponse } from "effect/http"
import type { CurrentCaller } from "../../api/Authorization.ts"

/** What McpServer says of itself in every result's `_meta` (McpRoute configures it with the same values). */
export const SERVER_INFO = {
  name: "mfg-public-api",
  version: "1.0.0",
  description: "Quotes, tickets and parts of the manufacturing quoting and production engine: 9 tools, each one REST operation of /v1."
} as const

const VERSION = "2026-07-28"
const VERSION_META = "io.modelcontextprotocol/protocolVersion"
const CAPABILITIES_META = "io.modelcontextprotocol/clientCapabilities"
const CLIENT_INFO_META = "io.modelcontextprotocol/clientInfo"
/** The `_meta` entries taken here; any other sends the request to McpServer. */
const KNOWN_META: ReadonlySet<string> = new Set([VERSION_META, CAPABILITIES_META, CLIENT_INFO_META, "traceparent", "tracestate"])
const REQUEST_KEYS: ReadonlySet<string> = new Set(["jsonrpc", "id", "method", "params"])
const PARAMS_KEYS: ReadonlySet<string> = new Set(["name", "arguments", "_meta"])

type Json = Readonly<Record<string, unknown>>

const isObject = (value: unknown): value is Json =>
  typeof value === "object" && value !== null && !Array.isArray(value) && Object.getPrototypeOf(value) === Object.prototype

const onlyKeys = (value: Json, allowed: ReadonlySet<string>) => Object.keys(value).every((key) => allowed.has(key))

/** The media types of a Content-Type or Accept header, without parameters, lower case. */
const mediaTypes = (header: string | undefined) => header === undefined ? [] : header.split(",").map((part) => part.split(";")[0]!.trim().toLowerCase())

/** Client capabilities in their plain form: objects of objects, `listChanged` flags the only other values. */
const plainCapabilities = (value: unknown, depth = 0): boolean =>
  isObject(value) && depth < 4 &&
  Object.entries(value).every(([key, inner]) => (key === "listChanged" && typeof inner === "boolean") || plainCapabilities(inner, depth + 1))

/** Client info as an implementation: a name and a version, and an optional title, all strings. */
const plainClientInfo = (value: unknown) =>
  isObject(value) && onlyKeys(value, new Set(["name", "version", "title"])) &&
  typeof value.name === "string" && typeof value.version === "string" && (value.title === undefined || typeof value.title === "string")

const plainMeta = (meta: unknown) =>
  isObject(meta) && onlyKeys(meta, KNOWN_META) && meta[VERSION_META] === VERSION && plainCapabilities(meta[CAPABILITIES_META]) &&
  (meta[CLIENT_INFO_META] === undefined || plainClientInfo(meta[CLIENT_INFO_META])) &&
  (meta.traceparent === undefined || typeof meta.traceparent === "string") &&
  (meta.tracestate === undefined || typeof meta.tracestate === "string")

/**
 * The tool call of `body`, when the request is a plain 2026-07-28
 * `tools/call` of a known tool: headers as the transport sends them, no
 * session, and nothing in the body McpServer would have to judge. Otherwise
 * undefined (McpServer answers).
 */
export const plainToolCall = (
  request: HttpServerRequest.HttpServerRequest,
  body: unknown,
  tools: ReadonlySet<string>
): { readonly id: string | number; readonly name: string; readonly args: unknown } | undefined => {
  const headers = request.headers
  if (request.method !== "POST" || headers["mcp-session-id"] !== undefined) return undefined
  if (headers["mcp-protocol-version"] !== VERSION || headers["mcp-method"] !== "tools/call") return undefined
  const contentType = mediaTypes(headers["content-type"])
  if (contentType.length !== 1 || contentType[0] !== "application/json") return undefined
  const accepted = mediaTypes(headers["accept"])
  if (accepted.length !== 2 || !accepted.includes("application/json") || !accepted.includes("text/event-stream")) return undefined
  if (!isObject(body) || !onlyKeys(body, REQUEST_KEYS) || body.jsonrpc !== "2.0" || body.method !== "tools/call") return undefined
  const id = body.id
  if (!(typeof id === "string" || (typeof id === "number" && Number.isFinite(id)))) return undefined
  const params = body.params
  if (!isObject(params) || !onlyKeys(params, PARAMS_KEYS)) return undefined
  const name = params.name
  if (typeof name !== "string" || !tools.has(name) || headers["mcp-name"] !== name) return undefined
  if (params.arguments !== undefined && !isObject(params.arguments)) return undefined
  if (!plainMeta(params._meta)) return undefined
  return { id, name, args: params.arguments }
}

/** The JSON-RPC answer McpServer gives for a tool's result. */
const answer = (id: string | number, result: McpSchema.CallToolResult) =>
  HttpServerResponse.jsonUnsafe({
    jsonrpc: "2.0",
    id,
    result: {
      _meta: { "io.modelcontextprotocol/serverInfo": SERVER_INFO },
      resultType: "complete",
      content: result.content,
      ...(result.structuredContent === undefined ? {} : { structuredContent: result.structuredContent }),
      isError: result.isError ?? false
    }
  })

/** Answers a plain tool call (see `plainToolCall`) with `call`. */
export const answerToolCall = (
  id: string | number,
  call: (args: unknown) => Effect.Effect<McpSchema.CallToolResult, never, CurrentCaller>,
  args: unknown
): Effect.Effect<HttpServerResponse.HttpServerResponse, never, CurrentCaller> => Effect.map(call(args), (result) => answer(id, result))
