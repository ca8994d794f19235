/**
 * Per request, once its response is ready: one JSON log line on stdout
 * (written with the next batch, after the response) and the
 * `http.server.request.duration` measurement.
 *
 * A router-wide middleware (HttpServerLive adds it to every route, and to
 * unknown paths) wraps /v1 and /v1/mcp as well as the admin API, /health,
 * /docs and 404s. What only the request path knows (route, app and secret
 * ids, operation, MCP tool, the internal cause of a 401, the source of a
 * downstream error, the request id) it writes into the request's
 * `RequestFacts`, a small mutable record this middleware provides.
 *
 * The line: `time`, `level` (ERROR for a 5xx but 501, INFO otherwise), `msg`
 * ("request"), `traceId` and `spanId` (the server span when tracing is on;
 * otherwise `traceId` is the caller's `traceparent` trace id, header or MCP
 * `_meta`, when it sent one), `requestId` (the response's `x-request-id` for
 * a metered call, else one made for the line), `method`, `route`, `path`
 * (never the query string), `status`, `durationMs`, then when known `appId`,
 * `secretId`, `operation`, `tool`, `errorSource`, `authFailure`. Never a
 * header, never a secret. The line is built as a string and written by
 * JsonLog's buffer: a JSON.stringify of an object per line, or Effect's
 * Logger, costs about three times as much CPU (bench/json-log.ts, figures
 * in bench/README.md).
 *
 * Installed only when the request log is on (REQUEST_LOG, default true) or an
 * exporter wants the measurement.
 */
import { Context, Effect } from "effect"
import { HttpServerError, HttpServerRequest, type HttpServerResponse } from "effect/http"
import { randomUUID } from "node:crypto"
import type { TelemetryInstruments } from "../../platform/telemetry/Instruments.ts"
import { activeSpan, writeLine } from "../../platform/telemetry/JsonLog.ts"
import { type IncomingTrace, traceFromHeaders } from "../../platform/telemetry/TraceContext.ts"

/** What the request path learns about a request, for its log line and metrics. */
export class RequestFacts {
  /** The route template (`/v1/customer/:id`), when the request reached one. */
  route: string | undefined = undefined
  appId: string | undefined = undefined
  secretId: string | undefined = undefined
  operation: string | undefined = undefined
  /** The MCP tool of a `tools/call`. */
  tool: string | undefined = undefined
  /** The `x-request-id` of a metered call. */
  requestId: string | undefined = undefined
  /** The `error.source` of a failed Downstream call. */
  errorSource: string | undefined = undefined
  /** Why authentication failed: internal, never in a response. */
  authFailure: string | undefined = undefined
  /** A trace continued from MCP `_meta` (the HTTP header's is read from the request). */
  trace: IncomingTrace | undefined = undefined
  /** The span that continued it, when tracing is on. */
  traceId: string | undefined = undefined
  spanId: string | undefined = undefined
}

/** The facts of the request being served; undefined where no request telemetry runs (in-process test servers). */
export const CurrentRequestFacts = Context.Reference<RequestFacts | undefined>("mfg/telemetry/CurrentRequestFacts", {
  defaultValue: () => undefined
})

/** Routes of fixed paths that no request guard names. */
const FIXED_ROUTES: ReadonlySet<string> = new Set(["/health", "/ready", "/openapi.json", "/docs"])
/** Methods kept as metric attributes; others are `_OTHER` (OpenTelemetry HTTP conventions), so a client cannot mint series. */
const KNOWN_METHODS: ReadonlySet<string> = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"])
const MAX_PATH = 2048

/** What a JSON string cannot hold as it is: quotes, backslashes, control characters; non-ASCII goes through JSON.stringify too (lone surrogates). */
const NEEDS_ESCAPE = /["\\\u0000-\u001f\u007f-\uffff]/

/** A JSON string literal: built directly in the usual case, JSON.stringify when something needs escaping. */
const text = (value: string) => NEEDS_ESCAPE.test(value) ? JSON.stringify(value) : `"${value}"`

/** The current time in ISO 8601, formatted once per millisecond (a busy server logs many lines per millisecond). */
let lastMs = 0
let lastIso = ""
const isoNow = () => {
  const now = Date.now()
  if (now !== lastMs) {
    lastMs = now
    lastIso = new Date(now).toISOString()
  }
  return lastIso
}

const pathOf = (url: string) => {
  const query = url.indexOf("?")
  const path = query === -1 ? url : url.slice(0, query)
  return path.length > MAX_PATH ? path.slice(0, MAX_PATH) : path
}

/** The server span, when tracing made one. */
interface SpanIds {
  readonly traceId: string
  readonly spanId: string
  readonly attribute: (key: string, value: unknown) => void
}

/**
 * A route as telemetry names it (`http.route` of spans and metrics): the
 * OpenAPI document's template, `/v1/customer/{id}`, rather than the
 * router's `/v1/customer/:id` (which the log line keeps).
 */
export const routeTemplate = (route: string) => route.replace(/:([A-Za-z0-9_]+)/g, "{$1}")

/**
 * A request's level: ERROR for what an operator must act on (the service
 * failed, storage or the engine is down or slow: 500, 502, 503, 504…), INFO
 * for every answer the service meant to give, refusals included (every 4xx,
 * and 501 for an operation it does not offer).
 */
const levelOf = (status: number) => status >= 500 && status !== 501 ? "ERROR" : "INFO"

/** A request's log line: one JSON object, without its newline (the keys are listed above). */
export const requestLine = (
  request: HttpServerRequest.HttpServerRequest,
  facts: RequestFacts,
  serverSpan: SpanIds | undefined,
  path: string,
  route: string | undefined,
  status: number,
  elapsedMs: number
): string => {
  let traceId = facts.traceId ?? serverSpan?.traceId
  let spanId = facts.spanId ?? serverSpan?.spanId
  if (traceId === undefined) {
    traceId = (facts.trace ?? traceFromHeaders(request.headers))?.traceId
    spanId = undefined
  }
  // Ids, route templates, operation and tool names, causes: ours, plain ASCII, written as they are.
  // What a client or an operator chose (method, path, app id, an engine's source header) is escaped.
  let line = `{"time":"${isoNow()}","level":"${levelOf(status)}","msg":"request"`
  if (traceId !== undefined) line += `,"traceId":"${traceId}"`
  if (spanId !== undefined) line += `,"spanId":"${spanId}"`
  line += `,"requestId":"${facts.requestId ?? randomUUID()}","method":${text(request.method)}`
  if (route !== undefined) line += `,"route":"${route}"`
  line += `,"path":${text(path)},"status":${status},"durationMs":${Math.round(elapsedMs * 1000) / 1000}`
  if (facts.appId !== undefined) line += `,"appId":${text(facts.appId)}`
  if (facts.secretId !== undefined) line += `,"secretId":"${facts.secretId}"`
  if (facts.operation !== undefined) line += `,"operation":"${facts.operation}"`
  if (facts.tool !== undefined) line += `,"tool":"${facts.tool}"`
  if (facts.errorSource !== undefined) line += `,"errorSource":${text(facts.errorSource)}`
  if (facts.authFailure !== undefined) line += `,"authFailure":"${facts.authFailure}"`
  return line + "}"
}

export interface RequestTelemetryOptions {
  readonly log: boolean
  readonly instruments: TelemetryInstruments
}

/** The middleware, or undefined when neither the log nor the metrics want it. */
export const requestTelemetry = (options: RequestTelemetryOptions) => {
  if (!options.log && !options.instruments.enabled) return undefined
  const { instruments, log } = options

  const finish = (
    request: HttpServerRequest.HttpServerRequest,
    facts: RequestFacts,
    serverSpan: SpanIds | undefined,
    startedAt: number,
    status: number
  ) => {
    const elapsedMs = performance.now() - startedAt
    const path = pathOf(request.url)
    const route = facts.route ?? (FIXED_ROUTES.has(path) ? path : undefined)
    if (instruments.enabled) {
      const template = route === undefined ? undefined : routeTemplate(route)
      instruments.request(KNOWN_METHODS.has(request.method) ? request.method : "_OTHER", template, status, elapsedMs / 1000)
      // The server span (still open) gets the same route, the direct record read's included: its name is made of it.
      if (template !== undefined) serverSpan?.attribute("http.route", template)
    }
    if (log) writeLine(requestLine(request, facts, serverSpan, path, route, status, elapsedMs))
  }

  return <E, R>(
    app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
  ): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R> =>
    Effect.withFiber((fiber) => {
      const startedAt = performance.now()
      const request = Context.getUnsafe(fiber.context, HttpServerRequest.HttpServerRequest)
      const facts = new RequestFacts()
      const serverSpan = activeSpan(fiber.context)
      return Effect.provideService(app, CurrentRequestFacts, facts).pipe(
        Effect.onExit((exit) => {
          if (exit._tag === "Success") return Effect.sync(() => finish(request, facts, serverSpan, startedAt, exit.value.status))
          // The server answers a failure itself (404 for an unknown route, 499 for a client gone...): the same status.
          return Effect.map(HttpServerError.causeResponse(exit.cause), ([response]) => finish(request, facts, serverSpan, startedAt, response.status))
        })
      )
    })
}
