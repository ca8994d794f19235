/**
 * Downstream over HTTP: a remote engine at DOWNSTREAM_URL (src/layers/EngineServer.ts
 * serves one). Each call is `POST {DOWNSTREAM_URL}/engine/v1/operations/{operation}`
 * with `{appId, request}`, the caller's `x-request-id` and the W3C trace
 * context: with tracing on, the `traceparent` of the call's client span (the
 * HttpClient propagates it, in the caller's trace); with tracing off, the
 * caller's own `traceparent` (header or MCP `_meta`) unchanged, so a traced
 * engine still joins the caller's trace. The caller's `tracestate` goes along
 * either way.
 *
 * The engine's own failures pass through unchanged (status, `{code, message,
 * type}`, `x-error-source`, `x-error-source-request-id`). What goes wrong on
 * the way is the gateway's to name, always as source `engine`: unreachable
 * (refused, DNS, reset) 502, too slow (DOWNSTREAM_TIMEOUT_MS) 504, an answer
 * that is not the protocol 502. Never a hang, never a 401: an engine that
 * refuses the gateway's ENGINE_TOKEN is a misconfiguration, answered 502.
 */
import { NodeHttpClient } from "@effect/platform-node"
import { Config, Effect, Layer, Option, Redacted, References, Schema } from "effect"
import { constTrue } from "effect/Function"
import { HttpClient, type HttpClientError, HttpClientRequest, type HttpClientResponse } from "effect/http"
import type { SqlClient } from "effect/sql"
import type { CallScope, EngineRequest } from "../api/EngineCall.ts"
import { DownstreamError } from "../domain/Errors.ts"
import { InvalidConfig } from "../domain/Errors.ts"
import { traced } from "../domain/Span.ts"
import { AppConfig } from "../services/AppConfig.ts"
import { Downstream } from "../services/Downstream.ts"
import { DownstreamEmbedded, ENGINE_SOURCE } from "./DownstreamEmbedded.ts"
import { IncomingTraceContext } from "./telemetry/TraceContext.ts"

/** The engine's internal API, relative to DOWNSTREAM_URL. */
export const ENGINE_OPERATIONS_PATH = "/engine/v1/operations"

export const DEFAULT_DOWNSTREAM_TIMEOUT_MS = 10_000

export interface DownstreamHttpOptions {
  /** The engine's base URL (DOWNSTREAM_URL), e.g. `http://127.0.0.1:8081`. */
  readonly url: string
  /** How long one call may take, answer body included (DOWNSTREAM_TIMEOUT_MS). */
  readonly timeoutMs: number
  /** Sent as `Authorization: Bearer <token>` when set (ENGINE_TOKEN). */
  readonly token: Option.Option<Redacted.Redacted>
}

/** The engine's answer to a call that succeeded. */
const SuccessBody = Schema.Struct({ result: Schema.Unknown })
/** The engine's answer to a call it refused. */
const ErrorBody = Schema.Struct({ code: Schema.Int, message: Schema.String, type: Schema.String })
const decodeSuccess = Schema.decodeUnknownOption(SuccessBody)
const decodeError = Schema.decodeUnknownOption(ErrorBody)

const gatewayError = (scope: CallScope, status: 502 | 504, message: string) =>
  new DownstreamError({
    status,
    code: status,
    message,
    type: status === 504 ? "GatewayTimeout" : "BadGateway",
    source: ENGINE_SOURCE,
    requestId: scope.requestId
  })

const unreadable = (scope: CallScope, operation: string, why: string) =>
  Effect.logWarning(`engine answer to ${operation} unreadable: ${why}`).pipe(
    Effect.annotateLogs({ requestId: scope.requestId }),
    Effect.andThen(Effect.fail(gatewayError(scope, 502, "The engine's answer is unreadable")))
  )

const parseJson = (text: string): Option.Option<unknown> => {
  try {
    return Option.some(JSON.parse(text) as unknown)
  } catch {
    return Option.none()
  }
}

const header = (response: HttpClientResponse.HttpClientResponse, name: string): string | undefined => {
  const value = response.headers[name]
  return value === undefined || value.length === 0 ? undefined : value
}

/** The engine's answer, read whole (so the connection can be reused) and checked against the protocol. */
const readAnswer =
  (operation: string, scope: CallScope) =>
  (response: HttpClientResponse.HttpClientResponse): Effect.Effect<unknown, DownstreamError | HttpClientError.HttpClientError> =>
    Effect.gen(function*() {
      const text = yield* response.text
      const json = parseJson(text)
      if (response.status === 200) {
        const body = Option.flatMap(json, decodeSuccess)
        if (Option.isNone(body)) return yield* unreadable(scope, operation, "a 200 without a JSON `result`")
        return body.value.result
      }
      if (response.status === 401 || response.status === 407) {
        yield* Effect.logError(`the engine refused the gateway's credentials (${response.status}): check ENGINE_TOKEN on both sides`)
        return yield* gatewayError(scope, 502, "The engine refused the gateway's credentials")
      }
      if (response.status >= 400 && response.status <= 599) {
        const body = Option.flatMap(json, decodeError)
        if (Option.isNone(body)) return yield* unreadable(scope, operation, `a ${response.status} without {code, message, type}`)
        return yield* new DownstreamError({
          status: response.status,
          code: body.value.code,
          message: body.value.message,
          type: body.value.type,
          source: header(response, "x-error-source") ?? ENGINE_SOURCE,
          requestId: header(response, "x-error-source-request-id") ?? scope.requestId
        })
      }
      return yield* unreadable(scope, operation, `unexpected status ${response.status}`)
    })

/** A Downstream that calls the engine at `options.url` with the HttpClient in context. */
export const makeDownstreamHttp = (options: DownstreamHttpOptions) =>
  Effect.gen(function*() {
    const base = options.url.replace(/\/+$/, "")
    const client = (yield* HttpClient.HttpClient).pipe(
      HttpClient.mapRequest((request) => {
        const json = HttpClientRequest.acceptJson(request)
        return Option.isSome(options.token)
          ? HttpClientRequest.bearerToken(json, Redacted.value(options.token.value))
          : json
      })
    )
    const timeoutMessage = `The engine did not answer within ${options.timeoutMs} ms`
    // With tracing off the client makes no span (its no-op span would propagate a meaningless traceparent).
    const tracing = yield* References.TracerEnabled

    /** The caller's trace context on the engine call (see the module comment). */
    const withTraceContext = (request: HttpClientRequest.HttpClientRequest) =>
      Effect.withFiber((fiber) => {
        const trace = fiber.getRef(IncomingTraceContext)
        if (trace === undefined) return Effect.succeed(request)
        const withParent = tracing ? request : HttpClientRequest.setHeader(request, "traceparent", trace.traceparent)
        return Effect.succeed(
          trace.tracestate === undefined ? withParent : HttpClientRequest.setHeader(withParent, "tracestate", trace.tracestate)
        )
      })

    const invoke = (operation: string, scope: CallScope, request: EngineRequest): Effect.Effect<unknown, DownstreamError> =>
      HttpClientRequest.post(`${base}${ENGINE_OPERATIONS_PATH}/${encodeURIComponent(operation)}`).pipe(
        HttpClientRequest.setHeader("x-request-id", scope.requestId),
        // The decoded request is plain data; a value JSON cannot carry is the gateway's bug.
        HttpClientRequest.bodyJson({ appId: scope.appId, request }),
        Effect.orDie,
        Effect.flatMap(withTraceContext),
        Effect.flatMap((request) =>
          tracing ? client.execute(request) : Effect.provideService(client.execute(request), HttpClient.TracerDisabledWhen, constTrue)
        ),
        Effect.flatMap(readAnswer(operation, scope)),
        Effect.catchIf(
          (error): error is HttpClientError.HttpClientError => !(error instanceof DownstreamError),
          (error) =>
            error.reason._tag === "TransportError" || error.reason._tag === "InvalidUrlError"
              ? Effect.logWarning(`engine unreachable for ${operation}: ${error.message}`).pipe(
                Effect.annotateLogs({ requestId: scope.requestId }),
                Effect.andThen(Effect.fail(gatewayError(scope, 502, "The engine is unreachable")))
              )
              : unreadable(scope, operation, error.message)
        ),
        Effect.timeoutOrElse({
          duration: options.timeoutMs,
          orElse: () =>
            Effect.logWarning(`engine timeout for ${operation} after ${options.timeoutMs} ms`).pipe(
              Effect.annotateLogs({ requestId: scope.requestId }),
              Effect.andThen(Effect.fail(gatewayError(scope, 504, timeoutMessage)))
            )
        }),
        Effect.tapError((error) => Effect.annotateCurrentSpan({ "error.source": error.source, "http.response.status_code": error.status })),
        traced(`downstream ${operation}`, { attributes: { "app.id": scope.appId } })
      )

    return Downstream.of({ invoke })
  })

/** DOWNSTREAM_TIMEOUT_MS and ENGINE_TOKEN, read where they are used. */
const HttpSettings = Config.all({
  timeoutMs: Config.Int("DOWNSTREAM_TIMEOUT_MS").pipe(Config.withDefault(DEFAULT_DOWNSTREAM_TIMEOUT_MS)),
  token: Config.option(Config.Redacted("ENGINE_TOKEN"))
})

const invalid = (message: string) => Effect.die(new InvalidConfig({ message }))

const loadOptions = (url: string) =>
  Effect.gen(function*() {
    const parsed = URL.parse(url)
    if (parsed === null || (parsed.protocol !== "http:" && parsed.protocol !== "https:")) {
      return yield* invalid(`DOWNSTREAM_URL is not an http(s) URL: ${url}`)
    }
    const settings = yield* HttpSettings.pipe(
      Effect.catch((error) => invalid(`DOWNSTREAM_TIMEOUT_MS or ENGINE_TOKEN: ${error.message}`))
    )
    if (settings.timeoutMs <= 0) return yield* invalid("DOWNSTREAM_TIMEOUT_MS must be a positive number of milliseconds")
    return { url, timeoutMs: settings.timeoutMs, token: settings.token } satisfies DownstreamHttpOptions
  })

/** Downstream over HTTP with explicit options, on its own keep-alive connection pool (undici). */
export const DownstreamHttpWith = (options: DownstreamHttpOptions): Layer.Layer<Downstream> =>
  Layer.effect(Downstream, makeDownstreamHttp(options)).pipe(Layer.provide(NodeHttpClient.layerUndici))

/** Downstream over HTTP to the engine at `url`, DOWNSTREAM_TIMEOUT_MS and ENGINE_TOKEN from the environment. */
export const DownstreamHttpTo = (url: string): Layer.Layer<Downstream> => Layer.unwrap(Effect.map(loadOptions(url), DownstreamHttpWith))

/** Downstream over HTTP to the engine at DOWNSTREAM_URL (which must be set). */
export const DownstreamHttp: Layer.Layer<Downstream, never, AppConfig> = Layer.unwrap(Effect.gen(function*() {
  const config = yield* AppConfig
  if (Option.isNone(config.downstreamUrl)) return yield* invalid("DOWNSTREAM_URL is not set")
  return DownstreamHttpTo(config.downstreamUrl.value)
}))

/** The remote engine when DOWNSTREAM_URL is set, the embedded one otherwise. */
export const DownstreamLive: Layer.Layer<Downstream, never, AppConfig | SqlClient.SqlClient> = Layer.unwrap(
  Effect.gen(function*() {
    const config = yield* AppConfig
    return Option.match(config.downstreamUrl, {
      onNone: () => DownstreamEmbedded,
      onSome: DownstreamHttpTo
    })
  })
)
