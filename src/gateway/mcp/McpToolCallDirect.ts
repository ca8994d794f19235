/**
 * A plain MCP 2026-07-28 `tools/call`, answered in front of the router.
 *
 * A tool call is the MCP endpoint's commonest request. Through the router it
 * paid, beyond its own work, for the body read by the HTTP platform's generic
 * reader (a memoized read run in a fiber of its own, for the bounds in
 * front of every route: RequestLimits), the route's context and McpAuth's
 * generic path: about a seventh of the call's CPU (bench/README.md, "The MCP
 * tool call in front of the router").
 *
 * A request whose headers are a plain tool call's (POST /v1/mcp exactly, the
 * transport's `Mcp-Protocol-Version`, `Mcp-Method: tools/call` and an
 * `Mcp-Name` of one of the 9 tools, no `Origin`, no session, a declared
 * Content-Length within MAX_BODY_BYTES) has its body read here, once, from
 * the connection. When the body is one too (McpDirect.plainToolCall, with
 * none of McpAuth's refusals and no deeper nesting than RequestLimits takes),
 * the call is answered with the same guard (IncomingSecretGuard), the same
 * metered call and the same tool call and answer as McpAuth gives it.
 * Anything else goes on to the bounds and the router with a copy of the
 * request holding the body read (McpDirect.requestWithBody), and is answered
 * as before; a body that could not be read (the client went away) goes on
 * with the request itself, whose read then fails as it would have.
 */
import { toIncomingMessage } from "@effect/platform-node/NodeHttpServerRequest"
import { Effect, type Fiber } from "effect"
import { HttpServerRequest, type HttpServerResponse } from "effect/http"
import type { IncomingMessage } from "node:http"
import { TOOL_NAMES } from "../../contract/mcp/tools.ts"
import { asMatchedRoute } from "../../platform/http/MatchedRoute.ts"
import { AppConfig } from "../../services/AppConfig.ts"
import { IncomingSecretGuard, MAX_JSON_DEPTH, nestsDeeperThan } from "../request/index.ts"
import { MCP_PATH, mcpCall, mcpMeteredCall, postRefusal } from "./McpAuth.ts"
import { answerToolCall, plainToolCall, requestWithBody } from "./McpDirect.ts"
import { McpToolCalls } from "./McpToolCalls.ts"

const VERSION = "2026-07-28"
const DECIMAL = /^\d+$/

/** Whether the headers of `request` are a plain tool call's, with a body of at most `maxBodyBytes` (see the module's comment). */
export const plainByHeaders = (request: HttpServerRequest.HttpServerRequest, maxBodyBytes: number): boolean => {
  if (request.method !== "POST" || request.url !== MCP_PATH) return false
  const headers = request.headers
  const length = headers["content-length"]
  return headers["mcp-method"] === "tools/call" && headers["mcp-protocol-version"] === VERSION && TOOL_NAMES.has(headers["mcp-name"] ?? "") &&
    headers["origin"] === undefined && headers["mcp-session-id"] === undefined &&
    length !== undefined && DECIMAL.test(length) && Number(length) <= maxBodyBytes
}

/** The platform's own decoding of a body to text (a byte order mark dropped, a malformed sequence replaced). */
const decoder = new TextDecoder()

/**
 * The body of `source`, as text, once it has all arrived; undefined when the
 * connection ends before it does. Its length is declared and bounded
 * (plainByHeaders), and Node reads no more than declared.
 */
const bodyOf = (source: IncomingMessage) =>
  Effect.callback<string | undefined>((resume) => {
    const chunks: Array<Buffer> = []
    const onData = (chunk: Buffer) => {
      chunks.push(chunk)
    }
    const stop = () => {
      source.off("data", onData)
      source.off("end", onEnd)
      source.off("close", onClose)
      source.off("error", onClose)
    }
    function onEnd() {
      stop()
      resume(Effect.succeed(decoder.decode(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks))))
    }
    function onClose() {
      stop()
      resume(Effect.succeed(undefined))
    }
    source.on("data", onData)
    source.once("end", onEnd)
    source.once("close", onClose)
    source.once("error", onClose)
    return Effect.sync(stop)
  })

const parsed = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/**
 * The direct answer of a plain tool call (Server.ts asks it of every request
 * in front of the bounds and the router, `next`), or undefined for a request
 * whose headers are not a plain tool call's.
 */
export const McpToolCallDirect = Effect.gen(function*() {
  const guard = yield* IncomingSecretGuard
  const calls = yield* McpToolCalls
  const { maxBodyBytes } = yield* AppConfig
  return <E, R>(
    request: HttpServerRequest.HttpServerRequest,
    fiber: Fiber.Fiber<unknown, unknown>,
    next: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
  ): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R> | undefined => {
    if (!plainByHeaders(request, maxBodyBytes)) return undefined
    return Effect.flatMap(bodyOf(toIncomingMessage(request) as IncomingMessage), (text) => {
      if (text === undefined) return next
      const message = nestsDeeperThan(text, MAX_JSON_DEPTH) ? undefined : parsed(text)
      const plain = message === undefined || postRefusal(request, message) !== undefined ? undefined : plainToolCall(request, message, TOOL_NAMES)
      const call = plain === undefined ? undefined : calls.byName.get(plain.name)
      if (plain === undefined || call === undefined) {
        return Effect.provideService(next, HttpServerRequest.HttpServerRequest, requestWithBody(request, text))
      }
      const metered = mcpMeteredCall(request.method, Effect.succeed(mcpCall(message)), () => message)
      return asMatchedRoute(fiber, MCP_PATH, guard(request, metered, answerToolCall(plain.id, call, plain.args, request)))
    })
  }
})
