/**
 * MCP 2026-07-28 requests asked of McpServer in process (McpInProcess).
 *
 * A request the transport admits (McpAdmission, judged on the request
 * itself) is asked of McpServer as a typed message; its result is a value,
 * on which the endpoint sets what McpServer has no option for:
 *
 * - the cache hints (`cacheHintOf`): McpServer takes `private` ones only and
 *   gives every `resources/read` `ttlMs: 0`;
 * - `server/discover`'s capabilities: those served (McpServerInfo), without
 *   the `logging` McpServer advertises whatever is registered.
 *
 * Its errors answer HTTP 200, as the transport answers the error of a
 * request it admitted.
 */
import { Effect } from "effect"
import { HttpServerResponse } from "effect/http"
import { cacheHintOf } from "./McpCacheHints.ts"
import { rpcError } from "./McpDirect.ts"
import type { McpInProcess, McpRequestMessage } from "./McpInProcess.ts"

type Json = Readonly<Record<string, unknown>>

/** The result as the endpoint serves it: its cache hint, and for `server/discover` the capabilities served. */
const servedResult = (method: string, result: Json, capabilities: unknown): Json => {
  const hint = cacheHintOf(method, result)
  const hinted = hint === undefined ? result : { ...result, ...hint }
  return method === "server/discover" ? { ...hinted, capabilities } : hinted
}

/** McpServer's answer to an admitted 2026-07-28 request (McpAdmission), asked in process. */
export const modern = Effect.fnUntraced(function*(mcp: McpInProcess["Service"], request: McpRequestMessage) {
  const outcome = yield* mcp.request(request)
  if (outcome._tag === "Error") return rpcError(request.id, outcome.error, 200)
  const capabilities = request.method === "server/discover" ? yield* mcp.capabilities : undefined
  return HttpServerResponse.jsonUnsafe({ jsonrpc: "2.0", id: request.id, result: servedResult(request.method, outcome.result, capabilities) })
})
