/**
 * MCP 2025-11-25 clients without sessions.
 *
 * effect/ai's McpServer serves 2025-11-25 with a server-side session per
 * `initialize` (an in-memory `Mcp-Session-Id`), which a gateway with several
 * instances, or one that restarts, cannot honour. This endpoint is stateless
 * for every revision, so a 2025-11-25 request (no session header; version
 * header absent or `2025-11-25`) is served by the same McpServer as a
 * 2026-07-28 request:
 *
 * - `initialize` answers from `server/discover` (server info, instructions,
 *   the tools capability) with protocol version 2025-11-25 and no session id;
 * - notifications are acknowledged (202); `ping` and `logging/setLevel`
 *   answer `{}` (the tools send no log messages);
 * - any other request is sent to McpServer as the equivalent 2026-07-28
 *   request (request metadata and routing headers added), and its result is
 *   projected back to the 2025-11-25 shape: no `resultType` or cache hints,
 *   no non-object `outputSchema` or `structuredContent` (the text content
 *   still carries the JSON).
 */
import { Effect } from "effect"
import { HttpServerRequest, HttpServerResponse } from "effect/http"

export const LEGACY_VERSION = "2025-11-25"
const MODERN_VERSION = "2026-07-28"
const VERSION_META = "io.modelcontextprotocol/protocolVersion"
const CAPABILITIES_META = "io.modelcontextprotocol/clientCapabilities"

type Json = Record<string, unknown>

const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value)

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

/** Is this POST a 2025-11-25 client's request, to be served without a session? */
const isLegacy = (request: HttpServerRequest.HttpServerRequest, body: Json): boolean => {
  if (request.headers["mcp-session-id"] !== undefined) return false
  const version = request.headers["mcp-protocol-version"]
  if (version !== undefined && version !== LEGACY_VERSION) return false
  const meta = isObject(body.params) && isObject(body.params._meta) ? body.params._meta : undefined
  return meta === undefined || !(VERSION_META in meta)
}

/**
 * Runs `httpEffect` (the McpServer route) for `request`, serving a
 * 2025-11-25 request without a session; anything else passes unchanged.
 * `body` is the request's JSON body as McpAuth already parsed it
 * (`undefined`: not a POST, or not JSON), so that it is parsed once.
 */
export const sessionless = <E, R>(
  request: HttpServerRequest.HttpServerRequest,
  body: unknown,
  httpEffect: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R> => {
  if (
    request.method !== "POST" || !isObject(body) || body.jsonrpc !== "2.0" || typeof body.method !== "string" ||
    !isLegacy(request, body)
  ) {
    return httpEffect
  }
  return legacy(request, body, body.method, httpEffect)
}

/** A 2025-11-25 request (`body`, a JSON-RPC message of `method`), served without a session. */
const legacy = <E, R>(
  request: HttpServerRequest.HttpServerRequest,
  body: Json,
  method: string,
  httpEffect: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R> =>
  Effect.gen(function*() {
    const id = body.id
    if (id === undefined) return HttpServerResponse.empty({ status: 202 })
    // Nothing to keep a level in without a session, and the tools log nothing: accepted.
    if (method === "ping" || method === "logging/setLevel") return rpcResult(id, {})

    /** The same request, as 2026-07-28, through McpServer. */
    const modern = (modernMethod: string, params: Json) =>
      Effect.gen(function*() {
        const name = modernMethod === "tools/call" || modernMethod === "prompts/get" ? params.name : modernMethod === "resources/read" ? params.uri : undefined
        const headers: Record<string, string> = {
          ...request.headers,
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-protocol-version": MODERN_VERSION,
          "mcp-method": modernMethod,
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
              method: modernMethod,
              params: { ...params, _meta: { ...meta, [VERSION_META]: MODERN_VERSION, [CAPABILITIES_META]: {} } }
            })
          })
        )
        const response = yield* Effect.provideService(httpEffect, HttpServerRequest.HttpServerRequest, rewritten)
        const answer = response.body._tag === "Uint8Array" ? responseMessage(new TextDecoder().decode(response.body.body)) : undefined
        return { response, answer }
      })

    if (method === "initialize") {
      const { answer, response } = yield* modern("server/discover", {})
      const discovered = answer !== undefined && isObject(answer.result) ? answer.result : undefined
      if (discovered === undefined) return response
      const meta = isObject(discovered._meta) ? discovered._meta : {}
      return rpcResult(id, {
        protocolVersion: LEGACY_VERSION,
        // No session: nothing can be pushed later, so no list-change notifications.
        capabilities: { logging: {}, tools: { listChanged: false } },
        serverInfo: meta["io.modelcontextprotocol/serverInfo"],
        ...(typeof discovered.instructions === "string" ? { instructions: discovered.instructions } : {})
      })
    }

    const { answer, response } = yield* modern(method, isObject(body.params) ? body.params : {})
    if (answer === undefined) return response
    if (isObject(answer.result)) {
      return HttpServerResponse.jsonUnsafe({ ...answer, result: projectResult(method, answer.result) }, { status: response.status })
    }
    return HttpServerResponse.jsonUnsafe(answer, { status: response.status })
  })
