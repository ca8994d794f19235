/**
 * The request path of every /v1/mcp request: the same guard as the REST
 * middleware (IncomingSecretGuard: the one 401, the meter row committed before the
 * handler, `Meter.complete` after), then the Origin check. Nothing reaches
 * McpServer unauthenticated, server/discover included.
 *
 * The metered operation is read from the JSON-RPC body, after authentication:
 * `mcp.<tool name>` for tools/call of one of the 9 tools, `mcp.<method>` for
 * the other MCP methods, `mcp.batch` for a batch, `mcp.invalid` for anything
 * else (unparsable body, unknown method or tool), `mcp.http-<verb>` for a
 * request that is not a POST.
 *
 * A browser `Origin` not allowed is a 403 before any of this: the secret
 * is not judged, nothing is metered.
 *
 * Then the protocol, before McpServer sees the request: a batch, a body in
 * another media type (415), an `Accept` without both of the transport's
 * types (406), a message without an id (a notification: 202; a request:
 * 400, -32600, unrun) or with an id that is none (a fraction: 400, -32600),
 * `subscriptions/listen` (nothing is pushed: 404, -32601) and a malformed
 * 2026-07-28 `_meta` (400, -32602) and a header longer than the OpenAPI
 * document allows (400, -32600) are answered here (McpDirect), a plain
 * 2026-07-28 tools/call is answered directly (McpDirect), a 2025-11-25
 * request and any `initialize` are served without a session (McpLegacy,
 * asking McpServer in process: McpInProcess); the rest is judged as
 * McpServer's HTTP transport admits it, on the request itself (McpAdmission:
 * its refusals answered as the specification words them), and a 2026-07-28
 * request it admits is asked of McpServer in process too (McpModern), its
 * result a value; only what is no request (a JSON-RPC response, a
 * notification sent with an id) goes to McpServer's HTTP route. A method of a capability the endpoint does not advertise is -32601 whichever path. The
 * 415, 406 and a 429 of the app's rate limit keep their status and carry a
 * JSON-RPC error with the request's id.
 *
 * Telemetry: with tracing on, a single MCP request runs in its own server
 * span (`tools/call <tool>` or the method), which continues the trace of
 * `params._meta.traceparent` when the HTTP request has no `traceparent`
 * header (MCP 2026-07-28, "OpenTelemetry trace context"), linked to the HTTP
 * server span; the tool goes to the request log line.
 */
import { Effect, Option, Predicate } from "effect"
import { Headers, HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { CurrentCaller } from "../../contract/Authorization.ts"
import { MCP_HEADER_LIMITS, MCP_PROTOCOLS } from "../../contract/mcp/openapi.ts"
import { READ_ONLY_TOOLS, TOOL_NAMES } from "../../contract/mcp/tools.ts"
import type { TooManyRequests } from "../../domain/Errors.ts"
import { traceFromMcpParams } from "../../platform/telemetry/TraceContext.ts"
import { AppConfig } from "../../services/AppConfig.ts"
import { type CallDetails, IncomingSecretGuard, type MeteredCall } from "../request/index.ts"
import { admission } from "./McpAdmission.ts"
import {
  answerToolCall,
  capabilityOf,
  contentMediaTypes,
  invalidIdAnswer,
  isRequestId,
  isRpcRequest,
  lastHeaderRemembered,
  malformedMetaAnswer,
  methodNotServed,
  plainToolCall,
  requestWithBody,
  rpcError,
  type RpcRequest,
  withoutIdAnswer
} from "./McpDirect.ts"
import { McpInProcess } from "./McpInProcess.ts"
import { isLegacyRequest, legacy } from "./McpLegacy.ts"
import { modern } from "./McpModern.ts"
import { McpToolCalls } from "./McpToolCalls.ts"
import { McpCallHeaders } from "./McpToolRetries.ts"

export const MCP_PATH = "/v1/mcp"

/** The MCP methods a client may send (2025-11-25 and 2026-07-28); others are metered as `mcp.invalid`. */
const MCP_METHODS: ReadonlySet<string> = new Set([
  "initialize",
  "ping",
  "server/discover",
  "tools/list",
  "tools/call",
  "resources/list",
  "resources/read",
  "resources/templates/list",
  "resources/subscribe",
  "resources/unsubscribe",
  "prompts/list",
  "prompts/get",
  "completion/complete",
  "logging/setLevel",
  "subscriptions/listen",
  "notifications/initialized",
  "notifications/cancelled",
  "notifications/progress",
  "notifications/roots/list_changed"
])

/** A JSON-RPC request's id, as a span attribute (string or number; anything else is left out). */
const requestIdOf = (id: unknown) => typeof id === "string" || typeof id === "number" ? { "jsonrpc.request.id": String(id) } : {}

/**
 * What an MCP request body is: its metered operation; for a single request,
 * the MCP server span (`<method>` or `tools/call <tool>`, with the MCP
 * semantic conventions' attributes), the tool, and a trace context carried in
 * `params._meta` (`traceparent`, `tracestate`).
 */
export const mcpCall = (body: unknown): CallDetails => {
  if (Array.isArray(body)) return { operation: "mcp.batch" }
  if (typeof body !== "object" || body === null) return { operation: "mcp.invalid" }
  const { id, method, params } = body as { readonly id?: unknown; readonly method?: unknown; readonly params?: unknown }
  if (typeof method !== "string" || !MCP_METHODS.has(method)) return { operation: "mcp.invalid" }
  // A request without an id is refused unrun (McpDirect.withoutIdAnswer).
  if (!method.startsWith("notifications/") && !isRequestId(id)) return { operation: "mcp.invalid" }
  const trace = traceFromMcpParams(params)
  if (method === "tools/call") {
    const name = typeof params === "object" && params !== null ? (params as { readonly name?: unknown }).name : undefined
    if (typeof name !== "string" || !TOOL_NAMES.has(name)) return { operation: "mcp.invalid", trace }
    return {
      operation: `mcp.${name}`,
      tool: name,
      readOnly: READ_ONLY_TOOLS.has(name),
      span: { name: `tools/call ${name}`, attributes: { "mcp.method.name": method, "gen_ai.tool.name": name, ...requestIdOf(id) } },
      trace
    }
  }
  // Every other method (discovery, tool list, ping, notifications) answers without reaching the engine.
  return {
    operation: `mcp.${method}`,
    readOnly: true,
    span: { name: method, attributes: { "mcp.method.name": method, ...requestIdOf(id) } },
    trace
  }
}

/** A POST body, read once: its text and its JSON value (`undefined` when it is not JSON or could not be read). */
interface ReadBody {
  readonly text: string
  readonly json: unknown
}

const readBody = (request: HttpServerRequest.HttpServerRequest): Effect.Effect<ReadBody> =>
  Effect.map(Effect.orElseSucceed(request.text, () => ""), (text) => {
    try {
      return { text, json: JSON.parse(text) as unknown }
    } catch {
      return { text, json: undefined }
    }
  })

/** The metered call of a request whose body is `body` (undefined: not a POST). */
const callOf = (request: HttpServerRequest.HttpServerRequest, body: ReadBody | undefined): CallDetails =>
  body === undefined
    ? { operation: `mcp.http-${request.method.toLowerCase()}` }
    : body.json === undefined
    ? { operation: "mcp.invalid" }
    : mcpCall(body.json)

const LOOPBACK = new Set(["localhost", "127.0.0.1", "[::1]"])

/** The host name of a `Host` header or an origin's authority, without the port. */
const hostName = (authority: string) => authority.startsWith("[") ? authority.slice(0, authority.indexOf("]") + 1) : authority.split(":")[0]!

/**
 * Origin validation (DNS rebinding protection). A request without `Origin`
 * (any non-browser client) passes. A browser request passes when its origin
 * is one of `allowedOrigins` (MCP_ALLOWED_ORIGINS), or when it is a loopback
 * origin calling a loopback `Host` on the same host and port (a local
 * browser tool talking to a local gateway). Anything else is refused: 403.
 */
export const originAllowed = (request: HttpServerRequest.HttpServerRequest, allowedOrigins: ReadonlyArray<string>): boolean => {
  const origin = request.headers["origin"]
  if (origin === undefined) return true
  if (allowedOrigins.includes(origin)) return true
  const host = request.headers["host"]
  if (host === undefined) return false
  let url: URL
  try {
    url = new URL(origin)
  } catch {
    return false
  }
  return (url.protocol === "http:" || url.protocol === "https:") && LOOPBACK.has(url.hostname) &&
    LOOPBACK.has(hostName(host)) && url.host === host.toLowerCase()
}

/**
 * A browser origin not allowed: 403 before authentication is judged (DNS
 * rebinding protection), with a JSON-RPC error and no id, as the transport
 * allows; nothing is metered, as nothing authenticated.
 */
const FORBIDDEN_ORIGIN = rpcError(undefined, {
  code: -32600,
  message: "Forbidden: this Origin may not call the MCP endpoint (see MCP_ALLOWED_ORIGINS)"
}, 403)

/** MCP has had no JSON-RPC batches since 2025-06-18: one message per HTTP request. */
const BATCH_REFUSED = rpcError(undefined, {
  code: -32600,
  message: "JSON-RPC batches are not supported: send one request per HTTP request"
}, 400)

/** The id of a message, when it has one that can be echoed. */
const idOf = (message: unknown) => isRecord(message) && isRequestId(message.id) ? message.id : undefined

/**
 * A body in another media type than JSON's, whichever the revision (McpServer refuses it alike for 2026-07-28,
 * with no body): the status kept, with a JSON-RPC error carrying the request's id when its body reads as one.
 */
const unsupportedMediaType = (message: unknown, contentType: string | undefined) =>
  rpcError(idOf(message), {
    code: -32600,
    message: `Unsupported Media Type: ${contentType ?? "no Content-Type"}; send the JSON-RPC message as application/json`
  }, 415)

/** An `Accept` that does not take both of the transport's answers (as McpServer judges it): 406, with a JSON-RPC error. */
const notAcceptable = (message: unknown, accept: string | undefined) =>
  rpcError(idOf(message), {
    code: -32600,
    message: `Not Acceptable: Accept must list application/json and text/event-stream (it is ${accept ?? "missing"})`
  }, 406)

/**
 * A header longer than the OpenAPI document allows (MCP_HEADER_LIMITS): 400
 * with -32600 and the request's id, unrun; no value that long names a method,
 * tool, resource or prompt of the endpoint.
 */
const HEADER_LIMITS = Object.entries(MCP_HEADER_LIMITS).map(([name, limit]) => ({ name, key: name.toLowerCase(), limit }))
const overlongHeader = (headers: Headers.Headers, message: unknown) => {
  for (const { key, limit, name } of HEADER_LIMITS) {
    const value = headers[key]
    if (value !== undefined && value.length > limit) {
      return rpcError(idOf(message), { code: -32600, message: `Invalid Request: the ${name} header is longer than ${limit} characters` }, 400)
    }
  }
  return undefined
}

/** What `Accept` takes, as McpServer reads it: its media types, a range with `q=0` (or an invalid q) left out. */
const acceptedTypes = (accept: string): ReadonlyArray<string> =>
  accept.split(",").flatMap((part) => {
    const [mediaType = "", ...parameters] = part.split(";")
    const quality = parameters.map((parameter) => parameter.trim().toLowerCase()).find((parameter) => parameter.startsWith("q="))
    if (quality !== undefined) {
      const value = Number(quality.slice(2))
      if (!Number.isFinite(value) || value <= 0 || value > 1) return []
    }
    return [mediaType.trim().toLowerCase()]
  })

const acceptsBoth = lastHeaderRemembered((accept) => {
  const types = acceptedTypes(accept)
  return types.includes("application/json") && types.includes("text/event-stream")
}, false)

/**
 * A call over its app's budget: the 429 and its headers kept, with a JSON-RPC
 * error carrying the request's id, so that a client reads it as this
 * server's answer to its request (not as a server of another revision). The
 * code is the HTTP status, an application-defined JSON-RPC code (outside
 * the ranges JSON-RPC and MCP reserve), as the REST error body's `code` is.
 */
export const overBudget = (message: unknown) => (error: TooManyRequests) =>
  rpcError(idOf(message), { code: error.code, message: error.message, data: { type: error.type } }, error.code)

const MODERN_VERSION = "2026-07-28"
const SERVED_VERSIONS: ReadonlySet<string> = new Set(MCP_PROTOCOLS.map((protocol) => protocol.protocolVersion))

/**
 * The protocol's refusal of an authenticated POST whose body's JSON value is
 * `message`, before any method runs: a batch, a body in another media type
 * (415), an `Accept` without both of the transport's types (406), a header
 * longer than the OpenAPI document allows, a message without an id or with
 * one that is none. Undefined when there is none.
 */
export const postRefusal = (request: HttpServerRequest.HttpServerRequest, message: unknown): HttpServerResponse.HttpServerResponse | undefined => {
  if (Array.isArray(message)) return BATCH_REFUSED
  const contentType = request.headers["content-type"]
  if (contentMediaTypes(contentType)[0] !== "application/json") return unsupportedMediaType(message, contentType)
  if (!acceptsBoth(request.headers["accept"])) return notAcceptable(message, request.headers["accept"])
  const overlong = overlongHeader(request.headers, message)
  if (overlong !== undefined) return overlong
  const version = request.headers["mcp-protocol-version"]
  // A version not served is McpServer's to refuse (400, -32022), with an id or without.
  return version === undefined || SERVED_VERSIONS.has(version) ? withoutIdAnswer(message) ?? invalidIdAnswer(message) : undefined
}

/** The metered call of an MCP request whose operation is `operation` (a 429 carries the id of `message`). */
export const mcpMeteredCall = (
  method: string,
  operation: Effect.Effect<CallDetails>,
  message: () => unknown
): MeteredCall => ({ operation, method, route: MCP_PATH, overBudget: (error) => overBudget(message())(error) })

const isRecord = Predicate.isObject

/** The request without its (validated) Origin header, the body read once and carried over. */
const withoutOrigin = (request: HttpServerRequest.HttpServerRequest, body: ReadBody | undefined) => requestWithBody(request, body?.text ?? "", ["origin"])

/** Authenticates and meters every request of the MCP routes it is provided to; provides the caller. */
export const McpAuth = HttpRouter.middleware<{ provides: CurrentCaller | McpCallHeaders }>()(Effect.gen(function*() {
  const guard = yield* IncomingSecretGuard
  // The browser origins allowed besides same-host loopback ones.
  const allowedOrigins = (yield* AppConfig).mcpAllowedOrigins
  const calls = yield* McpToolCalls
  const mcp = yield* McpInProcess
  return (httpEffect) => {
    /** The answer of `answered` to `request`, but -32601 for a method of a capability not advertised (what McpServer would run there answers nothing). */
    const servedOnly = <E, R>(
      answered: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>,
      message: RpcRequest,
      modern: boolean
    ) => {
      const capability = capabilityOf(message.method)
      if (capability === undefined) return answered
      return Effect.flatMap(answered, (response) =>
        // A refusal before the method (a header, the request metadata) stands.
        response.status !== 200 ? Effect.succeed(response) : Effect.map(
          mcp.capabilities,
          (served) => capability in served ? response : methodNotServed(message.id, message.method, modern)
        ))
    }

    /** The answer to an authenticated MCP POST without its Origin (`request`), its body's JSON value `message`. */
    const answerPost = (request: HttpServerRequest.HttpServerRequest, message: unknown) => {
      const refusal = postRefusal(request, message)
      if (refusal !== undefined) return Effect.succeed(refusal)
      const version = request.headers["mcp-protocol-version"]
      // A plain 2026-07-28 tools/call: the tool call without McpServer's generic path (McpDirect).
      const plain = plainToolCall(request, message, TOOL_NAMES)
      const call = plain === undefined ? undefined : calls.byName.get(plain.name)
      if (plain !== undefined && call !== undefined) return answerToolCall(plain.id, call, plain.args, request)
      if (isLegacyRequest(request, message)) return servedOnly(legacy(mcp, message), message, false)
      // Nothing is pushed: the stream McpServer would open only to refuse the method is not opened (404 in 2026-07-28, as for any method not served).
      if (isRpcRequest(message) && message.method === "subscriptions/listen") return Effect.succeed(methodNotServed(message.id, message.method, true))
      // The transport's admission, judged on the request (McpAdmission): a refusal is answered here, a 2026-07-28
      // request asked of McpServer in process (McpModern), anything else admitted (a JSON-RPC response, a notification
      // sent with an id) goes to McpServer's route.
      const admitted = admission(request.headers, message !== undefined, message)
      const answered = admitted._tag === "Refused"
        ? Effect.succeed(admitted.response)
        : admitted._tag === "Request"
        ? modern(mcp, admitted.request)
        : httpEffect
      if (!isRpcRequest(message)) return answered
      const params = isRecord(message.params) ? message.params : {}
      const checked = version !== MODERN_VERSION ? answered : Effect.flatMap(
        malformedMetaAnswer(message.id, params._meta),
        (malformed) => Option.isSome(malformed) ? Effect.succeed(malformed.value) : answered
      )
      return servedOnly(checked, message, true)
    }

    return Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      // The body is read and parsed once, after authentication: for the metered operation,
      // then by the 2025-11-25 handling and the Origin-less copy of the request.
      let body: ReadBody | undefined
      const operation = request.method !== "POST"
        ? Effect.succeed(callOf(request, undefined))
        : Effect.map(readBody(request), (read) => {
          body = read
          return callOf(request, read)
        })
      // Origin is checked first, before the secret is judged (McpServer's own check knows exact origins only), then removed.
      if (!originAllowed(request, allowedOrigins)) return FORBIDDEN_ORIGIN
      return yield* guard(
        request,
        mcpMeteredCall(request.method, operation, () => body?.json),
        Effect.suspend(() => {
          const forwarded = request.headers["origin"] === undefined ? request : withoutOrigin(request, body)
          // The tool calls McpServer makes read the request's Idempotency-Key from here (McpToolRetries); answerToolCall passes it.
          const answered = Effect.provideService(
            request.method === "POST" ? answerPost(forwarded, body?.json) : httpEffect,
            McpCallHeaders,
            McpCallHeaders.fromHeaders(request.headers)
          )
          return forwarded === request ? answered : Effect.provideService(answered, HttpServerRequest.HttpServerRequest, forwarded)
        })
      )
    })
  }
}))
