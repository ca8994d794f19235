/**
 * MCP 2026-07-28 requests asked of McpServer in process (McpInProcess).
 *
 * A request McpServer's Streamable HTTP transport admits (the headers the
 * revision requires, matching the body: version, `Mcp-Method`, `Mcp-Name`;
 * request metadata of that version with client capabilities; a method of
 * the revision) is checked here on the request itself (`admittedRequest`)
 * and asked of McpServer as a typed message; its result is a value, on
 * which the endpoint sets what McpServer has no option for:
 *
 * - the cache hints (`cacheHintOf`): McpServer takes `private` ones only and
 *   gives every `resources/read` `ttlMs: 0`;
 * - `server/discover`'s capabilities: those served (McpServerInfo), without
 *   the `logging` McpServer advertises whatever is registered.
 *
 * Its errors answer HTTP 200, as McpServer's HTTP transport answers the
 * error of a request it admitted. Anything this does not admit goes to
 * McpServer's HTTP route, which refuses it.
 */
import { Effect, Predicate } from "effect"
import { McpProtocol } from "effect/ai"
import type { Headers } from "effect/http"
import { HttpServerResponse } from "effect/http"
import { cacheHintOf } from "./McpCacheHints.ts"
import { isRpcRequest, rpcError } from "./McpDirect.ts"
import type { McpInProcess, McpRequestMessage } from "./McpInProcess.ts"

const VERSION = "2026-07-28"
const VERSION_META = "io.modelcontextprotocol/protocolVersion"
const CAPABILITIES_META = "io.modelcontextprotocol/clientCapabilities"

type Json = Readonly<Record<string, unknown>>

const isObject = (value: unknown): value is Json => Predicate.isObject(value) && !Array.isArray(value)

/** The request methods of 2026-07-28, as McpServer's protocol adapter has them. */
const MODERN_METHODS: ReadonlyMap<string, unknown> = McpProtocol.v2026_07_28.clientRpcs.requests

/** The parameter each method names its target with, which `Mcp-Name` repeats. */
const NAME_PARAMETER: Readonly<Record<string, string>> = { "tools/call": "name", "prompts/get": "name", "resources/read": "uri" }

/**
 * An `Mcp-Name` that is the name itself: printable ASCII, not in the
 * transport's base64 form (`=?base64?...?=`, which McpServer's route decodes).
 */
const isPlainRoutingHeader = (value: string) => /^[\t\x20-\x7e]*$/.test(value) && !(value.startsWith("=?base64?") && value.endsWith("?="))

/**
 * The request to ask McpServer, when `message` is a 2026-07-28 request its
 * HTTP transport admits as sent with `headers`; undefined otherwise (its
 * HTTP route answers, a refusal).
 */
export const admittedRequest = (headers: Headers.Headers, message: unknown): McpRequestMessage | undefined => {
  if (!isRpcRequest(message) || headers["mcp-session-id"] !== undefined || headers["mcp-protocol-version"] !== VERSION) return undefined
  const { id, method, params } = message
  if (!MODERN_METHODS.has(method) || method.startsWith("notifications/") || headers["mcp-method"] !== method) return undefined
  if (!isObject(params) || !isObject(params._meta)) return undefined
  if (params._meta[VERSION_META] !== VERSION || !isObject(params._meta[CAPABILITIES_META])) return undefined
  const nameParameter = NAME_PARAMETER[method]
  if (nameParameter !== undefined) {
    const name = params[nameParameter]
    const header = headers["mcp-name"]
    if (typeof name !== "string" || header === undefined || !isPlainRoutingHeader(header) || header !== name) return undefined
  }
  return { id, method, params }
}

/** The result as the endpoint serves it: its cache hint, and for `server/discover` the capabilities served. */
const servedResult = (method: string, result: Json, capabilities: unknown): Json => {
  const hint = cacheHintOf(method, result)
  const hinted = hint === undefined ? result : { ...result, ...hint }
  return method === "server/discover" ? { ...hinted, capabilities } : hinted
}

/** McpServer's answer to an admitted 2026-07-28 request (`admittedRequest`), asked in process. */
export const modern = Effect.fnUntraced(function*(mcp: McpInProcess["Service"], request: McpRequestMessage) {
  const outcome = yield* mcp.request(request)
  if (outcome._tag === "Error") return rpcError(request.id, outcome.error, 200)
  const capabilities = request.method === "server/discover" ? yield* mcp.capabilities : undefined
  return HttpServerResponse.jsonUnsafe({ jsonrpc: "2.0", id: request.id, result: servedResult(request.method, outcome.result, capabilities) })
})
