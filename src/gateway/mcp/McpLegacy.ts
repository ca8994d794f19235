/**
 * MCP 2025-11-25 clients without sessions.
 *
 * effect/ai's McpServer serves 2025-11-25 with a server-side session per
 * `initialize` (an in-memory `Mcp-Session-Id`), which a gateway with several
 * instances, or one that restarts, cannot honour. This endpoint is stateless
 * for every revision, so a 2025-11-25 request (`isLegacyRequest`) is served
 * by the same McpServer as a 2026-07-28 request:
 *
 * - `initialize` (its `protocolVersion`, `capabilities` and `clientInfo`
 *   checked as McpServer's own handshake decodes them: -32602 naming the one
 *   at fault) answers with what McpServer is run with (server info,
 *   instructions: McpServerInfo), the capabilities served (from what is
 *   registered) and protocol version 2025-11-25, and no session id,
 *   whatever version header it came with;
 * - `ping` and `logging/setLevel` answer `{}` (the tools send no log
 *   messages); notifications are McpAuth's (202);
 * - any other request is asked of McpServer in process (McpInProcess) as
 *   the equivalent 2026-07-28 request (request metadata added), and its
 *   result, a value, is projected to the 2025-11-25 shape: no `resultType`
 *   or cache hints, no non-object `outputSchema` or `structuredContent` (the
 *   text content still carries the JSON), the one piece of 2025-11-25 the
 *   endpoint shapes itself, as McpServer serves that revision only with
 *   sessions; its errors answer HTTP 200, as 2025-11-25 reads a 404 as
 *   "session not found".
 */
import { Effect, Predicate, Schema } from "effect"
import { McpProtocol, McpSchema } from "effect/ai"
import type { HttpServerRequest } from "effect/http"
import { HttpServerResponse } from "effect/http"
import { badRequestOf } from "../../contract/BadRequests.ts"
import { isRpcRequest, methodNotServed, rpcError, type RpcRequest } from "./McpDirect.ts"
import { type McpInProcess, type McpRequestMessage } from "./McpInProcess.ts"
import { INSTRUCTIONS, SERVER_INFO } from "./McpServerInfo.ts"

export const LEGACY_VERSION = "2025-11-25"
const MODERN_VERSION = "2026-07-28"
const VERSION_META = "io.modelcontextprotocol/protocolVersion"
const CAPABILITIES_META = "io.modelcontextprotocol/clientCapabilities"

type Json = Record<string, unknown>

const isObject = Predicate.isObject

const rpcResult = (id: unknown, result: unknown) => HttpServerResponse.jsonUnsafe({ jsonrpc: "2.0", id, result })

/** A 2026-07-28 result in the 2025-11-25 shape. */
const projectResult = (method: string, result: Json): Json => {
  const { cacheScope: _scope, resultType: _type, ttlMs: _ttl, ...rest } = result
  if (method === "tools/list" && Array.isArray(rest.tools)) {
    return {
      ...rest,
      tools: rest.tools.map((tool: unknown) => {
        if (!isObject(tool) || !isObject(tool.outputSchema) || tool.outputSchema.type === "object") return tool
        const { outputSchema: _output, ...withoutOutput } = tool
        return withoutOutput
      })
    }
  }
  if (method === "tools/call" && "structuredContent" in rest && !isObject(rest.structuredContent)) {
    const { structuredContent: _structured, ...withoutStructured } = rest
    return withoutStructured
  }
  return rest
}

/**
 * Is this POST (its JSON body `body`) a 2025-11-25 client's request, to be
 * served without a session? An `initialize`, whatever headers it carries,
 * unless its request metadata is 2026-07-28's (it opens the legacy era, its
 * version negotiated in its body: a dual-era server serves it by the legacy
 * rules, and McpServer never opens a session); any other request with no session header, the version header
 * absent or 2025-11-25, and request metadata that names no version or
 * 2025-11-25.
 */
export const isLegacyRequest = (request: HttpServerRequest.HttpServerRequest, body: unknown): body is RpcRequest => {
  if (!isRpcRequest(body)) return false
  const meta = isObject(body.params) && isObject(body.params._meta) ? body.params._meta : undefined
  const metaVersion = meta === undefined ? undefined : meta[VERSION_META]
  // A request in 2026-07-28's own metadata is of that revision, which has no initialize (McpServer: -32601).
  if (body.method === "initialize") return metaVersion !== MODERN_VERSION
  if (request.headers["mcp-session-id"] !== undefined) return false
  const version = request.headers["mcp-protocol-version"]
  if (version !== undefined && version !== LEGACY_VERSION) return false
  return metaVersion === undefined || metaVersion === LEGACY_VERSION
}

/** The request methods of 2025-11-25, as McpServer's protocol adapter has them. */
const LEGACY_METHODS: ReadonlyMap<string, unknown> = McpProtocol.v2025_11_25.clientRpcs.requests

const decodeInitialize = Schema.decodeUnknownEffect(McpSchema.Initialize.payloadSchema)

/** The parameter each method names its target with. */
const NAME_PARAMETER: Readonly<Record<string, string>> = { "tools/call": "name", "prompts/get": "name", "resources/read": "uri" }

/** The request as a 2026-07-28 client sends it: request metadata with the version and no client capabilities added to its own `_meta`. */
const asModernRequest = (id: string | number, method: string, params: Json): McpRequestMessage => {
  const meta = isObject(params._meta) ? params._meta : {}
  return { id, method, params: { ...params, _meta: { ...meta, [VERSION_META]: MODERN_VERSION, [CAPABILITIES_META]: {} } } }
}

/**
 * Serves a 2025-11-25 request (`isLegacyRequest`) without a session, with
 * McpServer in process (`mcp`).
 *
 * Every JSON-RPC error answers HTTP 200: in 2025-11-25 a 404 tells the
 * client its session is gone, and the other statuses belong to the
 * transport (the version header, the body), which McpAuth has checked.
 */
export const legacy = Effect.fnUntraced(function*(mcp: McpInProcess["Service"], body: RpcRequest) {
  const { id, method } = body
  // A 2026-07-28 method (server/discover, subscriptions/listen) is none of this revision's.
  if (!LEGACY_METHODS.has(method) || method.startsWith("notifications/")) return methodNotServed(id, method, false)
  // Nothing to keep a level in without a session, and the tools log nothing: accepted.
  if (method === "ping" || method === "logging/setLevel") return rpcResult(id, {})
  const params = isObject(body.params) ? body.params : {}
  const nameParameter = NAME_PARAMETER[method]
  if (nameParameter !== undefined && typeof params[nameParameter] !== "string") {
    return rpcError(id, { code: -32602, message: `Invalid params: "${nameParameter}" must be a string` }, 200)
  }

  if (method === "initialize") {
    // What it must carry (protocolVersion, capabilities, clientInfo), as McpServer's own 2025-11-25 handshake decodes it.
    const invalid = yield* Effect.flip(decodeInitialize(params, { errors: "all" })).pipe(Effect.option)
    if (invalid._tag === "Some") {
      const problem = badRequestOf([{ kind: "Payload", issue: invalid.value.issue }])
      return rpcError(id, { code: -32602, message: `Invalid params: ${problem.message}`, data: { errors: problem.errors ?? [] } }, 200)
    }
    return rpcResult(id, {
      protocolVersion: LEGACY_VERSION,
      // logging/setLevel is answered (above), so logging is a capability here.
      capabilities: { logging: {}, ...(yield* mcp.capabilities) },
      serverInfo: SERVER_INFO,
      instructions: INSTRUCTIONS
    })
  }

  const outcome = yield* mcp.request(asModernRequest(id, method, params))
  return outcome._tag === "Result"
    ? rpcResult(id, projectResult(method, outcome.result))
    : rpcError(id, outcome.error, 200)
})
