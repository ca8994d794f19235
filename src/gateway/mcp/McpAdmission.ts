/**
 * The Streamable HTTP transport's refusals of a single POSTed message, judged
 * on the request itself, as McpServer's HTTP admission (effect/ai's
 * `admitHttp`, internal to its HTTP route) judges it for the protocols the
 * endpoint serves (2026-07-28 stateless, 2025-11-25 with sessions, of which
 * McpServer never opens one here: McpLegacy serves that revision), and
 * answered as the specification words them:
 *
 * - a body that is not JSON: -32700 (or the header refusal below first);
 * - a 2026-07-28 request (its version header, or request metadata claiming
 *   a version) whose headers and request metadata do not match: -32020
 *   (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`), -32602 (request
 *   metadata or its client capabilities missing), -32022 (a version not
 *   served);
 * - a session header: 404 with no body (no session exists);
 * - any other request without a session: 400, -32600;
 * - JSON that is neither a request nor a response: -32600;
 * - a method 2026-07-28 does not have: 404, -32601.
 *
 * Each is a JSON-RPC error of code, message and data only, with the
 * request's id when it has one and no id otherwise, and a body that is not
 * JSON or not a request is a 400 (McpServer's own answer has a `_tag`, a
 * `null` id and HTTP 200 there). What is admitted goes on to McpServer.
 */
import { Predicate, Result } from "effect"
import { McpProtocol, McpSchema } from "effect/ai"
import { Base64 } from "effect/encoding"
import type { Headers } from "effect/http"
import { HttpServerResponse } from "effect/http"
import { MCP_PROTOCOLS } from "../../contract/mcp/openapi.ts"
import { isRpcRequest, rpcError, type RpcErrorObject } from "./McpDirect.ts"
import type { McpRequestMessage } from "./McpInProcess.ts"

const MODERN_VERSION = "2026-07-28"
const VERSION_META = "io.modelcontextprotocol/protocolVersion"
const CAPABILITIES_META = "io.modelcontextprotocol/clientCapabilities"
const SERVED_VERSIONS: ReadonlyArray<string> = MCP_PROTOCOLS.map((protocol) => protocol.protocolVersion)

/** The request methods of 2026-07-28, as McpServer's protocol adapter has them. */
const MODERN_METHODS: ReadonlyMap<string, unknown> = McpProtocol.v2026_07_28.clientRpcs.requests

/** The parameter each method names its target with, which `Mcp-Name` repeats. */
const NAME_PARAMETER: Readonly<Record<string, string>> = { "tools/call": "name", "prompts/get": "name", "resources/read": "uri" }

const BASE64_PREFIX = "=?base64?"
const BASE64_SUFFIX = "?="

/** Any object, an array as the record of its items, as the transport reads a message's parts. */
const asRecord = (value: unknown): Readonly<Record<string, unknown>> | undefined =>
  Predicate.isObject(value) ? value : Array.isArray(value) ? { ...value } : undefined

const ROUTING_NAME_DECODER = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true })

/** The name an `Mcp-Name` header carries: as is when printable ASCII, or decoded from the transport's base64 form. */
const routingName = (header: string): string | undefined => {
  if (!header.startsWith(BASE64_PREFIX) || !header.endsWith(BASE64_SUFFIX)) return /^[\t\x20-\x7e]*$/.test(header) ? header : undefined
  const decoded = Base64.decode(header.slice(BASE64_PREFIX.length, -BASE64_SUFFIX.length))
  if (Result.isFailure(decoded)) return undefined
  try {
    return ROUTING_NAME_DECODER.decode(decoded.success)
  } catch {
    return undefined
  }
}

/** A refusal: its HTTP status and, but for a 404 of a session, its JSON-RPC error. */
interface Refusal {
  readonly status: number
  readonly error?: RpcErrorObject
}

const headerMismatch = (message: string): Refusal => ({ status: 400, error: { code: McpSchema.HEADER_MISMATCH_ERROR_CODE, message } })

const unsupportedVersion = (requested: string): Refusal => ({
  status: 400,
  error: {
    code: McpSchema.UNSUPPORTED_PROTOCOL_VERSION_ERROR_CODE,
    message: `Unsupported protocol version '${requested}'`,
    data: { supported: SERVED_VERSIONS, requested }
  }
})

const invalidParams = (message: string): Refusal => ({ status: 400, error: { code: McpSchema.INVALID_PARAMS_ERROR_CODE, message } })

const invalidRequest = (message: string): Refusal => ({ status: 400, error: { code: McpSchema.INVALID_REQUEST_ERROR_CODE, message } })

/** Which revision the message is of, from its headers and request metadata: a refusal, or whether it is 2026-07-28's (stateless). */
const revisionOf = (headers: Headers.Headers, input: unknown): Refusal | { readonly stateless: boolean } => {
  const version = headers["mcp-protocol-version"]
  const message = asRecord(input)
  const params = asRecord(message?.params)
  const meta = asRecord(params?._meta)
  const claimed = meta !== undefined && VERSION_META in meta
  const claim = claimed ? meta[VERSION_META] : undefined
  const isRequestId = typeof message?.id === "string" || typeof message?.id === "number"
  const isInitialize = message?.jsonrpc === "2.0" && message.method === "initialize" && isRequestId
  const isCancellation = message?.jsonrpc === "2.0" && message.method === "notifications/cancelled" && message.id === undefined
  if (!claimed && (isInitialize || version !== MODERN_VERSION)) {
    // The sessions' revision: McpServer has none open.
    if (headers["mcp-session-id"] !== undefined) return { status: 404 }
    if (!isInitialize && version !== undefined && !SERVED_VERSIONS.includes(version)) return unsupportedVersion(version)
    return { stateless: false }
  }
  if (version === undefined) return headerMismatch("MCP-Protocol-Version header is required")
  if (!isCancellation && (meta === undefined || typeof claim !== "string")) return invalidParams("Required request metadata is missing")
  if ((!isCancellation || claimed) && claim !== version) return headerMismatch("MCP-Protocol-Version header does not match request metadata")
  if (!isCancellation && asRecord(meta?.[CAPABILITIES_META]) === undefined) return invalidParams(`${CAPABILITIES_META} request metadata is required`)
  if (version !== MODERN_VERSION) return unsupportedVersion(version)
  const method = message?.method
  if (typeof method !== "string" || headers["mcp-method"] !== method) return headerMismatch("Mcp-Method header does not match request method")
  const nameParameter = NAME_PARAMETER[method]
  if (nameParameter !== undefined) {
    const name = params?.[nameParameter]
    const header = headers["mcp-name"]
    if (typeof name !== "string" || header === undefined || routingName(header) !== name) {
      return headerMismatch("Mcp-Name header does not match request parameters")
    }
  }
  return { stateless: true }
}

/** The transport's refusal of a message that is not JSON (`parsed` false) or is `input`, or the revision it is admitted in. */
const judge = (headers: Headers.Headers, parsed: boolean, input: unknown): Refusal | { readonly stateless: boolean } => {
  if (!parsed) {
    const version = headers["mcp-protocol-version"]
    if (version !== undefined && !SERVED_VERSIONS.includes(version)) return unsupportedVersion(version)
    const revision = revisionOf(headers, undefined)
    // A session or a header refusal comes before the body's.
    if ("status" in revision && (revision.error === undefined || revision.error.code === McpSchema.HEADER_MISMATCH_ERROR_CODE)) return revision
    return { status: 400, error: { code: McpSchema.PARSE_ERROR_CODE, message: "Parse error" } }
  }
  const message = asRecord(input)
  const hasId = message !== undefined && "id" in message
  const isId = (id: unknown) => typeof id === "string" || typeof id === "number"
  const isJsonRpc = message?.jsonrpc === "2.0"
  const isRequest = isJsonRpc && (!hasId || isId(message.id)) && typeof message.method === "string"
  const hasResult = message !== undefined && "result" in message
  const hasError = message !== undefined && "error" in message
  const isResponse = isJsonRpc && hasId && (isId(message.id) || message.id === null) && hasResult !== hasError
  const revision = revisionOf(headers, input)
  if ("status" in revision) return revision
  if (!isRequest && !isResponse) return invalidRequest("Invalid Request")
  const isInitialize = message?.method === "initialize"
  const hasSession = headers["mcp-session-id"] !== undefined
  if (isInitialize && hasSession) return invalidRequest("initialize must not include an MCP-Session-Id header")
  if (!isInitialize && !hasSession && !revision.stateless) {
    return invalidRequest("MCP-Session-Id header is required; send initialize to start a session")
  }
  if (isRequest && revision.stateless && !MODERN_METHODS.has(message.method as string)) {
    return { status: 404, error: { code: McpSchema.METHOD_NOT_FOUND_ERROR_CODE, message: `Method not found: ${String(message.method)}` } }
  }
  return revision
}

/** What the transport does with a POSTed message. */
export type Admission =
  /** Refused: the answer. */
  | { readonly _tag: "Refused"; readonly response: HttpServerResponse.HttpServerResponse }
  /** A 2026-07-28 request, to ask McpServer in process (McpModern). */
  | { readonly _tag: "Request"; readonly request: McpRequestMessage }
  /** Anything else admitted (a JSON-RPC response, a notification with an id): McpServer's HTTP route takes it. */
  | { readonly _tag: "Other" }

/**
 * What the transport does with the POSTed message `input` (`parsed` false:
 * the body is not JSON) sent with `headers`. A batch is refused before
 * (McpAuth).
 */
export const admission = (headers: Headers.Headers, parsed: boolean, input: unknown): Admission => {
  const judged = judge(headers, parsed, input)
  if ("status" in judged) {
    const response = judged.error === undefined
      ? HttpServerResponse.empty({ status: judged.status })
      : rpcError(asRecord(input)?.id, judged.error, judged.status)
    return { _tag: "Refused", response }
  }
  if (!judged.stateless || !isRpcRequest(input) || input.method.startsWith("notifications/") || !Predicate.isObject(input.params)) {
    return { _tag: "Other" }
  }
  return { _tag: "Request", request: { id: input.id, method: input.method, params: input.params } }
}
