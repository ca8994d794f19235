/**
 * What the MCP endpoint answers without McpServer.
 *
 * A plain MCP 2026-07-28 `tools/call`. McpServer's generic path (the
 * JSON-RPC message and its `_meta` decoded with Schemas, the tool's result
 * decoded again and encoded, a fiber per request in RpcServer) cost about as
 * much CPU as the whole REST call of the same operation. A request that
 * McpServer would plainly accept, in exactly the form the Streamable HTTP
 * transport sends it, is answered here with the same tool call
 * (McpToolCalls) and the same JSON-RPC answer, byte for byte in content;
 * anything else (another method or protocol, an unexpected header, field or
 * `_meta` entry) goes to McpServer, which validates and answers it.
 *
 * The protocol's own answers, which McpServer gives otherwise than the
 * specification (McpAuth gives them before McpServer sees the request):
 * a notification is accepted (202, no body); a request without an id is
 * refused unrun (400, -32600); a 2026-07-28 `_meta` McpServer's own Schema
 * does not take is refused like a missing one (400, -32602); a method of a
 * capability the endpoint does not advertise is -32601.
 */
import { Effect, Option, Schema } from "effect"
import { McpProtocol } from "effect/ai"
import { Headers, HttpServerRequest, HttpServerResponse } from "effect/http"
import { JsonRpcId, MAX_METHOD_LENGTH, MAX_REQUEST_ID_LENGTH, NotificationMethod } from "../../contract/mcp/openapi.ts"
import { SERVER_INFO } from "./McpServerInfo.ts"
import { type CallHeaders, callHeadersOf } from "./McpToolRetries.ts"
import type { ToolResult } from "./ToolResult.ts"

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

/**
 * A JSON-RPC request id as MCP has it: a string or a number (never null),
 * and a number without a fractional part (JSON-RPC 2.0: "Numbers SHOULD NOT
 * contain fractional parts"), so that an id reads back as it was sent; a
 * string of bounded length (JsonRpcId, as the OpenAPI document states it).
 */
export const isRequestId: (id: unknown) => id is string | number = Schema.is(JsonRpcId)

const isNotificationMethod = Schema.is(NotificationMethod)

/** A JSON-RPC request as MCP has it: version 2.0, an id and a method. */
export interface RpcRequest {
  readonly jsonrpc: "2.0"
  readonly id: string | number
  readonly method: string
  readonly params?: unknown
}

export const isRpcRequest = (message: unknown): message is RpcRequest =>
  isObject(message) && message.jsonrpc === "2.0" && isRequestId(message.id) && typeof message.method === "string"

const onlyKeys = (value: Json, allowed: ReadonlySet<string>) => Object.keys(value).every((key) => allowed.has(key))

/**
 * `parse` of a header value, remembering the last value parsed: a client
 * sends the same `Accept` and `Content-Type` on every call, so the usual call
 * reads them from here. The result is shared: never change it.
 */
export const lastHeaderRemembered = <A>(parse: (header: string) => A, missing: A) => {
  let lastHeader: string | undefined
  let last = missing
  return (header: string | undefined): A => {
    if (header === undefined) return missing
    if (header !== lastHeader) {
      last = parse(header)
      lastHeader = header
    }
    return last
  }
}

/** The media types of a Content-Type or Accept header, without parameters, lower case. */
const mediaTypesOf = (header: string): ReadonlyArray<string> => header.split(",").map((part) => part.split(";")[0]!.trim().toLowerCase())

/** The media types of a request's `Content-Type` (mediaTypesOf), the last one remembered. */
export const contentMediaTypes = lastHeaderRemembered(mediaTypesOf, [])

/** The media types of a request's `Accept` (mediaTypesOf), the last one remembered. */
const acceptMediaTypes = lastHeaderRemembered(mediaTypesOf, [])

/** Client capabilities in their plain form: objects of objects, `listChanged` flags the only other values. */
const plainCapabilities = (value: unknown, depth = 0): boolean =>
  isObject(value) && depth < 4 &&
  Object.entries(value).every(([key, inner]) => (key === "listChanged" && typeof inner === "boolean") || plainCapabilities(inner, depth + 1))

/** Client info as an implementation: a name and a version, and an optional title, all strings. */
const CLIENT_INFO_KEYS: ReadonlySet<string> = new Set(["name", "version", "title"])
const plainClientInfo = (value: unknown) =>
  isObject(value) && onlyKeys(value, CLIENT_INFO_KEYS) &&
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
  const contentType = contentMediaTypes(headers["content-type"])
  if (contentType.length !== 1 || contentType[0] !== "application/json") return undefined
  const accepted = acceptMediaTypes(headers["accept"])
  if (accepted.length !== 2 || !accepted.includes("application/json") || !accepted.includes("text/event-stream")) return undefined
  if (!isObject(body) || !onlyKeys(body, REQUEST_KEYS) || body.jsonrpc !== "2.0" || body.method !== "tools/call") return undefined
  const id = body.id
  if (!isRequestId(id)) return undefined
  const params = body.params
  if (!isObject(params) || !onlyKeys(params, PARAMS_KEYS)) return undefined
  const name = params.name
  if (typeof name !== "string" || !tools.has(name) || headers["mcp-name"] !== name) return undefined
  if (params.arguments !== undefined && !isObject(params.arguments)) return undefined
  if (!plainMeta(params._meta)) return undefined
  return { id, name, args: params.arguments }
}

/**
 * A copy of `request` whose body is `text`, the body already read from it
 * (its stream is spent), without the headers `omitted`; its URL and its
 * addresses are the request's own, so that the router, the guard and
 * McpServer read the copy as they read the request.
 */
export const requestWithBody = (
  request: HttpServerRequest.HttpServerRequest,
  text: string,
  omitted: ReadonlyArray<string> = []
): HttpServerRequest.HttpServerRequest => {
  const headers = new globalThis.Headers()
  // The copy's length is its text's: a Request takes no Content-Length of its own.
  for (const [name, value] of Object.entries(Headers.removeMany(request.headers, [...omitted, "content-length"]))) headers.set(name, value)
  const bodyless = request.method === "GET" || request.method === "HEAD"
  return HttpServerRequest.fromWeb(
    new Request(new URL(request.url, "http://mcp.local"), { method: request.method, headers, ...(bodyless ? {} : { body: text }) })
  ).modify({ url: request.url, remoteAddress: request.remoteAddress, peerAddress: request.peerAddress })
}

/**
 * The JSON-RPC answer McpServer gives for a tool's result: the result's own
 * `_meta` (the events it wrote) first, then the server's. A result whose
 * structured content's text is known has it written in place, the same
 * bytes `JSON.stringify` writes for the whole (test/mcp/mcp.test.ts checks
 * that the answer is exactly that serialization).
 */
const answer = (id: string | number, result: ToolResult) => {
  const _meta = { ...result._meta, "io.modelcontextprotocol/serverInfo": SERVER_INFO }
  const isError = result.isError
  const structured = result.structuredContent === undefined ? undefined : result.structuredText
  if (structured === undefined) {
    return HttpServerResponse.jsonUnsafe({
      jsonrpc: "2.0",
      id,
      result: {
        _meta,
        resultType: "complete",
        content: result.content,
        ...(result.structuredContent === undefined ? {} : { structuredContent: result.structuredContent }),
        isError
      }
    })
  }
  // The message up to its content, without the two braces that close it; then the rest, in the same order.
  const head = JSON.stringify({ jsonrpc: "2.0", id, result: { _meta, resultType: "complete", content: result.content } })
  return HttpServerResponse.text(`${head.slice(0, -2)},"structuredContent":${structured},"isError":${isError}}}`, {
    contentType: "application/json"
  })
}

/** Answers a plain tool call (see `plainToolCall`) with `call`, made with the request's `Idempotency-Key`. */
export const answerToolCall = <R>(
  id: string | number,
  call: (args: unknown, headers: CallHeaders) => Effect.Effect<ToolResult, never, R>,
  args: unknown,
  request: HttpServerRequest.HttpServerRequest
): Effect.Effect<HttpServerResponse.HttpServerResponse, never, R> => Effect.map(call(args, callHeadersOf(request.headers)), (result) => answer(id, result))

/** A JSON-RPC error object: a code and a message, and data when there is more to say. */
export interface RpcErrorObject {
  readonly code: number
  readonly message: string
  readonly data?: unknown
}

/** A JSON-RPC error: with the request's id when it is known, and no id otherwise (MCP ids are never null). */
export const rpcError = (id: unknown, error: RpcErrorObject, status: number) =>
  HttpServerResponse.jsonUnsafe({ jsonrpc: "2.0", ...(isRequestId(id) ? { id } : {}), error }, { status })

/** A notification: accepted, with no body (nothing here acts on one; there is no session to update). */
const NOTIFICATION_ACCEPTED = HttpServerResponse.empty({ status: 202 })

/**
 * A request without an id cannot be answered, so it is refused unrun: 400
 * (the transport's answer to a message it cannot accept) with -32600 and no
 * id, as the message had none. McpServer would accept it (202) and run it.
 */
const REQUEST_WITHOUT_ID = rpcError(undefined, {
  code: -32600,
  message: `Invalid Request: a request needs an id (a string or a number); only notifications/* (at most ${MAX_METHOD_LENGTH} characters) ` +
    "are sent without one"
}, 400)

/**
 * The answer to a JSON-RPC message without an id (undefined when it has
 * one): a notification (`notifications/*`) is accepted, anything else refused.
 */
export const withoutIdAnswer = (message: unknown): HttpServerResponse.HttpServerResponse | undefined => {
  if (!isObject(message) || "id" in message) return undefined
  const notification = message.jsonrpc === "2.0" && isNotificationMethod(message.method)
  return notification ? NOTIFICATION_ACCEPTED : REQUEST_WITHOUT_ID
}

/** A message whose `id` is there but no request id (null, a fraction, an object): refused unrun, with no id. */
const INVALID_ID = rpcError(undefined, {
  code: -32600,
  message: `Invalid Request: the id must be a string of at most ${MAX_REQUEST_ID_LENGTH} characters or an integer`
}, 400)

/** The answer to a JSON-RPC message whose `id` is not a request id (undefined when it has none or a valid one). */
export const invalidIdAnswer = (message: unknown): HttpServerResponse.HttpServerResponse | undefined =>
  isObject(message) && "id" in message && !isRequestId(message.id) ? INVALID_ID : undefined

/**
 * The 2026-07-28 request metadata of a request McpServer will decode: a
 * `_meta` its own Schema does not take (`clientInfo: 5`, an unknown log
 * level) is malformed as a missing one is, 400 with -32602 ("A request
 * missing any required field is malformed ... the response status MUST be
 * 400"); McpServer would answer 200. A missing or non-object `_meta` is
 * McpServer's to refuse (it does, 400), and so is a version it does not serve.
 */
export const malformedMetaAnswer = (id: unknown, meta: unknown): Effect.Effect<Option.Option<HttpServerResponse.HttpServerResponse>> =>
  !isObject(meta) ? Effect.succeedNone : McpProtocol.v2026_07_28.runtime.profileFromRequestMetadata(meta).pipe(
    Effect.as(Option.none()),
    Effect.catch((error) => Effect.succeedSome(rpcError(id, { code: -32602, message: `Invalid request metadata: ${messageOf(error)}` }, 400)))
  )

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error)).replace(/\s+/g, " ").trim()

/** The capability each method of a capability belongs to (tools are always served). */
const CAPABILITY_OF: Readonly<Record<string, string>> = {
  "resources/list": "resources",
  "resources/read": "resources",
  "resources/templates/list": "resources",
  "resources/subscribe": "resources",
  "resources/unsubscribe": "resources",
  "prompts/list": "prompts",
  "prompts/get": "prompts",
  "completion/complete": "completions"
}

/** The capability `method` needs, when it is one the endpoint may not advertise. */
export const capabilityOf = (method: string): string | undefined => CAPABILITY_OF[method]

/**
 * The answer to a method of a capability the endpoint does not advertise:
 * -32601, as for any method not served; HTTP 404 in 2026-07-28 (its
 * transport says so), 200 in 2025-11-25 (there a 404 means "session not
 * found").
 */
export const methodNotServed = (id: unknown, method: string, modern: boolean) =>
  rpcError(id, { code: -32601, message: `Method not found: ${method}` }, modern ? 404 : 200)
