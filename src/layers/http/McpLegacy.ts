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
 *   at fault) answers from `server/discover` (server info, instructions,
 *   the capabilities served) with protocol version 2025-11-25 and no
 *   session id, whatever version header it came with;
 * - `ping` and `logging/setLevel` answer `{}` (the tools send no log
 *   messages); notifications are McpAuth's (202);
 * - any other request is sent to McpServer as the equivalent 2026-07-28
 *   request (request metadata and routing headers added), and its result is
 *   projected back to the 2025-11-25 shape: no `resultType` or cache hints,
 *   no non-object `outputSchema` or `structuredContent` (the text content
 *   still carries the JSON); its errors answer HTTP 200, as 2025-11-25
 *   reads a 404 as "session not found".
 */
import { Effect, Predicate, Schema } from "effect"
import { McpProtocol, McpSchema } from "effect/ai"
import { HttpServerRequest, HttpServerResponse } from "effect/http"
import { badRequestOf } from "../../api/BadRequests.ts"
import { isRpcRequest, methodNotServed, plainError, rpcError, type RpcRequest, servedCapabilities } from "./McpDirect.ts"

export const LEGACY_VERSION = "2025-11-25"
const MODERN_VERSION = "2026-07-28"
const VERSION_META = "io.modelcontextprotocol/protocolVersion"
const CAPABILITIES_META = "io.modelcontextprotocol/clientCapabilities"

type Json = Record<string, unknown>

const isObject = Predicate.isObject

const rpcResult = (id: unknown, result: unknown) => HttpServerResponse.jsonUnsafe({ jsonrpc: "2.0", id, result })

/** The JSON-RPC message of a McpServer response: plain JSON, or the last event of an SSE body. */
const responseMessage = (text: string): Json | undefined => {
  const trimmed = text.trim()
  const json = trimmed.startsWith("{")
    ? trimmed
    : trimmed.split("\n").filter((line) => line.startsWith("data:")).map((line) => line.slice(5).trim()).filter((line) => line.length > 0).at(-1)
  if (json === undefined) return undefined
  try {
    const parsed: unknown = JSON.parse(json)
    return isObject(parsed) ? parsed : undefined
  } catch {
    return undefined
  }
}

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

/** The parameter each method names its target with, mirrored in `Mcp-Name` (2026-07-28). */
const NAME_PARAMETER: Readonly<Record<string, string>> = { "tools/call": "name", "prompts/get": "name", "resources/read": "uri" }

/**
 * Runs one request through McpServer (`httpEffect`) as a 2026-07-28 client
 * sends it: the transport's headers, and request metadata with the version
 * and no client capabilities added to the request's own `_meta`. Answers
 * McpServer's response and its JSON-RPC message (undefined: none to read).
 */
export const throughMcpServer = Effect.fnUntraced(function*<E, R>(
  request: HttpServerRequest.HttpServerRequest,
  message: { readonly id: string | number; readonly method: string; readonly params: Json },
  httpEffect: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
) {
  const { id, method, params } = message
  const nameParameter = NAME_PARAMETER[method]
  const name = nameParameter === undefined ? undefined : params[nameParameter]
  const headers: Record<string, string> = {
    ...request.headers,
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": MODERN_VERSION,
    "mcp-method": method,
    ...(typeof name === "string" ? { "mcp-name": name } : {})
  }
  delete headers["content-length"]
  const meta = isObject(params._meta) ? params._meta : {}
  const rewritten = HttpServerRequest.fromWeb(
    new Request(new URL(request.url, "http://mcp.local"), {
      method: "POST",
      headers,
      body: JSON.stringify({
        jsonrpc: "2.0",
        id,
        method,
        params: { ...params, _meta: { ...meta, [VERSION_META]: MODERN_VERSION, [CAPABILITIES_META]: {} } }
      })
    })
  )
  const response = yield* Effect.provideService(httpEffect, HttpServerRequest.HttpServerRequest, rewritten)
  const answer = response.body._tag === "Uint8Array" ? responseMessage(new TextDecoder().decode(response.body.body)) : undefined
  return { response, answer }
})

/**
 * Serves a 2025-11-25 request (`isLegacyRequest`) without a session, through
 * the McpServer route `httpEffect`.
 *
 * Every JSON-RPC error answers HTTP 200: in 2025-11-25 a 404 tells the
 * client its session is gone, and the other statuses belong to the
 * transport (the version header, the body), which McpAuth has checked.
 */
export const legacy = Effect.fnUntraced(function*<E, R>(
  request: HttpServerRequest.HttpServerRequest,
  body: RpcRequest,
  httpEffect: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
) {
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
    const { answer, response } = yield* throughMcpServer(request, { id, method: "server/discover", params: {} }, httpEffect)
    const discovered = answer !== undefined && isObject(answer.result) ? answer.result : undefined
    if (discovered === undefined) return response
    const meta = isObject(discovered._meta) ? discovered._meta : {}
    return rpcResult(id, {
      protocolVersion: LEGACY_VERSION,
      // logging/setLevel is answered (above), so logging is a capability here.
      capabilities: { logging: {}, ...servedCapabilities(discovered.capabilities) },
      serverInfo: meta["io.modelcontextprotocol/serverInfo"],
      ...(typeof discovered.instructions === "string" ? { instructions: discovered.instructions } : {})
    })
  }

  const { answer, response } = yield* throughMcpServer(request, { id, method, params }, httpEffect)
  if (answer === undefined) return response
  if (isObject(answer.result)) {
    return HttpServerResponse.jsonUnsafe({ ...answer, result: projectResult(method, answer.result) }, { status: response.status })
  }
  if (isObject(answer.error)) return rpcError(id, plainError(answer.error), 200)
  return HttpServerResponse.jsonUnsafe(answer, { status: response.status })
})
