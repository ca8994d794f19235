/**
 * Downstream over HTTP: a remote engine at DOWNSTREAM_URL (src/app/EngineServer.ts
 * serves one), called with the HttpApiClient derived from EngineApi, the
 * contract's own definition: each operation is its endpoint's method, its
 * input encoded and its answer decoded by the endpoint's schemas. Each call
 * carries the engine's token, the caller's app, its `x-request-id` and the
 * W3C trace context: with tracing on, the `traceparent` of the call's client
 * span (the HttpClient propagates it, in the caller's trace); with tracing
 * off, the caller's own `traceparent` (header or MCP `_meta`) unchanged, so a
 * traced engine still joins the caller's trace. The caller's `tracestate`
 * goes along either way.
 *
 * The engine's own failures pass through unchanged (status, `{code, message,
 * type}`, `x-error-source`, `x-error-source-request-id`): the HttpClient turns
 * every error status into the DownstreamError before the client decodes
 * anything, and a 204 into the empty answer of a read. What goes wrong on the
 * way is the gateway's to name, always as source `engine`: unreachable
 * (refused, DNS, reset) 502, too slow (DOWNSTREAM_TIMEOUT_MS) 504, an answer
 * that is not the contract 502. Never a hang, never a 401: an engine that
 * refuses the gateway's ENGINE_TOKEN is a misconfiguration, answered 502.
 *
 * The gateway's `/ready` asks the engine's `/ready` the same way
 * (ReadinessChecks, name `engine`).
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Context, Effect, Layer, Option, Predicate, Redacted, References, Schema } from "effect"
import { constTrue } from "effect/Function"
import { HttpClient, HttpClientError, HttpClientRequest, HttpClientResponse } from "effect/http"
import { HttpApiClient } from "effect/http-api"
import type { SqlClient } from "effect/sql"
import {
  ENGINE_APP_HEADER,
  ENGINE_GRANTS_HEADERS,
  ENGINE_IDEMPOTENCY_HEADERS,
  ENGINE_PRECONDITION_HEADERS,
  ENGINE_TEST_DATA_PATH,
  EngineApi,
  EngineCaller
} from "../../contract/EngineApi.ts"
import type { CallScope } from "../../contract/EngineCall.ts"
import {
  asCreated,
  createsOnReplace,
  isPaged,
  type OperationAnswer,
  type OperationEndpoint,
  type OperationInput,
  type OperationName,
  operationOf,
  presentParts,
  TOTAL_COUNT_HEADER
} from "../../contract/Operations.ts"
import { DownstreamError } from "../../domain/Errors.ts"
import { InvalidConfig } from "../../domain/Errors.ts"
import { TestDataEmptied } from "../../domain/Grants.ts"
import { traced } from "../../domain/Span.ts"
import type { EngineOutbound } from "../../engine/Engine.ts"
import { causeInWords } from "../../platform/Readiness.ts"
import { IncomingTraceContext } from "../../platform/telemetry/TraceContext.ts"
import { AppConfig } from "../../services/AppConfig.ts"
import { Downstream } from "../../services/Downstream.ts"
import { DependencyUnreachable, type ReadinessCheck, ReadinessChecks } from "../../services/Readiness.ts"
import { DownstreamEmbedded, ENGINE_SOURCE } from "./DownstreamEmbedded.ts"

export interface DownstreamHttpOptions {
  /** The engine's base URL (DOWNSTREAM_URL), e.g. `http://127.0.0.1:8081`. */
  readonly url: string
  /** How long one call may take, answer body included (DOWNSTREAM_TIMEOUT_MS). */
  readonly timeoutMs: number
  /** Sent as `Authorization: Bearer <token>` when set (ENGINE_TOKEN). */
  readonly token: Option.Option<Redacted.Redacted>
}

/** The engine answered 204: the read found nothing, the gateway's empty 200. */
class NoRecord extends Schema.TaggedError<NoRecord>()("NoRecord", {}) {}

/** The body of the engine's failures. */
const ErrorBody = Schema.Struct({ code: Schema.Int, message: Schema.String, type: Schema.String })
const decodeError = Schema.decodeUnknownOption(Schema.fromJsonString(ErrorBody))

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

const header = (response: HttpClientResponse.HttpClientResponse, name: string): string | undefined => {
  const value = response.headers[name]
  return value === undefined || value.length === 0 ? undefined : value
}

/** An error status of the engine as the DownstreamError the client receives (the body read whole, so the connection is reused). */
const engineFailure = Effect.fnUntraced(function*(response: HttpClientResponse.HttpClientResponse, scope: CallScope) {
  const text = yield* response.text
  if (response.status === 401 || response.status === 407) {
    yield* Effect.logError(`the engine refused the gateway's credentials (${response.status}): check ENGINE_TOKEN on both sides`)
    return yield* gatewayError(scope, 502, "The engine refused the gateway's credentials")
  }
  const body = decodeError(text)
  if (Option.isNone(body) || response.status > 599) {
    return yield* unreadable(scope, response.request.url, `a ${response.status} without {code, message, type}`)
  }
  return yield* new DownstreamError({
    status: response.status,
    code: body.value.code,
    message: body.value.message,
    type: body.value.type,
    source: header(response, "x-error-source") ?? ENGINE_SOURCE,
    requestId: header(response, "x-error-source-request-id") ?? scope.requestId
  })
})

type Method = (input: object) => Effect.Effect<unknown, unknown, EngineCaller>

/**
 * The engine client's method of `operation` (`<group>.<endpoint>`), looked up
 * by name: it takes its own endpoint's input, which `Downstream.call`'s
 * types hold the caller to.
 */
const methodOf = (client: Readonly<Record<string, unknown>>, operation: OperationName): Method => {
  const [group, name] = operation.split(".") as [string, string]
  const methods = client[group]
  const method = Predicate.hasProperty(methods, name) ? methods[name] : undefined
  if (!Predicate.isFunction(method)) throw new Error(`The engine's client has no method for ${operation}`)
  return method as Method
}

const unreachable = (cause: string) => new DependencyUnreachable({ cause })
/** Why the engine says it is not ready: the `reason` of its `/ready` body (ReadinessBody), the only field read. */
const decodeNotReady = Schema.decodeUnknownOption(Schema.fromJsonString(Schema.Struct({ reason: Schema.String })))

/**
 * The remote engine's readiness: its own `GET /ready` (which checks the
 * engine's storage), through the calls' client, base URL and token; no
 * `traceparent` goes with it (see makeDownstreamHttp's tracing note).
 */
const engineReadiness = (client: HttpClient.HttpClient, baseUrl: string, token: Option.Option<Redacted.Redacted>): ReadinessCheck => {
  const request = Option.match(token, {
    onNone: () => HttpClientRequest.get(`${baseUrl}/ready`),
    onSome: (value) => HttpClientRequest.bearerToken(HttpClientRequest.get(`${baseUrl}/ready`), Redacted.value(value))
  })
  return {
    name: ENGINE_SOURCE,
    probe: client.execute(request).pipe(
      Effect.flatMap((response) => Effect.map(response.text, (text) => ({ status: response.status, text }))),
      Effect.mapError((error) => unreachable(causeInWords(error, "the request failed"))),
      Effect.flatMap(({ status, text }) => {
        if (status === 200) return Effect.void
        const reason = Option.map(decodeNotReady(text), (body) => body.reason)
        return Effect.fail(unreachable(Option.match(reason, {
          onNone: () => `it answers ${status} to GET /ready`,
          onSome: (why) => `it is not ready (${why})`
        })))
      }),
      Effect.provideService(HttpClient.TracerDisabledWhen, constTrue)
    )
  }
}

/** A Downstream that calls the engine at `options.url` with the HttpClient in context. */
export const makeDownstreamHttp = Effect.fnUntraced(function*(options: DownstreamHttpOptions) {
  // With tracing off the client makes no span (its no-op span would propagate a meaningless traceparent).
  const tracing = yield* References.TracerEnabled

  /** The engine's credentials, the caller's app and request id, and the caller's trace context (see the module comment). */
  const withCall = (request: HttpClientRequest.HttpClientRequest) =>
    Effect.withFiber((fiber) => {
      const caller = Context.getUnsafe(fiber.context, EngineCaller)
      let sent = HttpClientRequest.setHeaders(HttpClientRequest.acceptJson(request), {
        [ENGINE_APP_HEADER]: caller.appId,
        "x-request-id": caller.requestId
      })
      if (Option.isSome(options.token)) sent = HttpClientRequest.bearerToken(sent, Redacted.value(options.token.value))
      if (caller.precondition !== undefined) {
        sent = HttpClientRequest.setHeaders(sent, {
          [ENGINE_PRECONDITION_HEADERS.id]: caller.precondition.id,
          [ENGINE_PRECONDITION_HEADERS.updatedAt]: caller.precondition.updatedAt
        })
      }
      if (caller.grants !== undefined) {
        sent = HttpClientRequest.setHeader(sent, ENGINE_GRANTS_HEADERS.scopes, [...caller.grants.scopes].join(","))
        if (caller.grants.maxAcceptTotal !== null) {
          sent = HttpClientRequest.setHeader(sent, ENGINE_GRANTS_HEADERS.maxAcceptTotal, String(caller.grants.maxAcceptTotal))
        }
      }
      if (caller.idempotency !== undefined) {
        sent = HttpClientRequest.setHeaders(sent, {
          [ENGINE_IDEMPOTENCY_HEADERS.key]: caller.idempotency.key,
          [ENGINE_IDEMPOTENCY_HEADERS.fingerprint]: caller.idempotency.fingerprint
        })
      }
      const trace = fiber.getRef(IncomingTraceContext)
      if (trace !== undefined) {
        if (!tracing) sent = HttpClientRequest.setHeader(sent, "traceparent", trace.traceparent)
        if (trace.tracestate !== undefined) sent = HttpClientRequest.setHeader(sent, "tracestate", trace.tracestate)
      }
      return Effect.succeed(sent)
    })

  const baseClient = yield* HttpClient.HttpClient
  const baseUrl = options.url.replace(/\/+$/, "")
  const readiness = yield* ReadinessChecks
  readiness.add(engineReadiness(baseClient, baseUrl, options.token))

  const httpClient = baseClient.pipe(
    HttpClient.mapRequestEffect(withCall),
    HttpClient.transform((response, request) =>
      Effect.flatMap(
        response,
        (answer): Effect.Effect<HttpClientResponse.HttpClientResponse, NoRecord | DownstreamError | HttpClientError.HttpClientError, EngineCaller> => {
          if (answer.status === 204) return Effect.fail(new NoRecord())
          if (answer.status < 400) {
            // The engine answered the stored answer of an earlier call with the same Idempotency-Key.
            if (answer.headers[ENGINE_IDEMPOTENCY_HEADERS.replayed] === "true") {
              return Effect.map(EngineCaller, (caller) => {
                caller.idempotency?.onReplay?.()
                return answer
              })
            }
            return Effect.succeed(answer)
          }
          return Effect.flatMap(EngineCaller, (caller) => engineFailure(answer, caller)).pipe(
            Effect.annotateLogs({ operation: request.url })
          )
        }
      )
    )
  )
  const client = yield* HttpApiClient.makeWith(EngineApi, { httpClient, baseUrl })
  const methods: Readonly<Record<string, unknown>> = client
  const timeoutMessage = `The engine did not answer within ${options.timeoutMs} ms`

  const callOperation = (operation: OperationName, paged: boolean, creates: boolean) => {
    const client = methodOf(methods, operation)
    const withResponse = (input: object): Effect.Effect<readonly [unknown, HttpClientResponse.HttpClientResponse], unknown, EngineCaller> =>
      Effect.map(client({ ...input, responseMode: "decoded-and-response" }), (answer) => answer as readonly [unknown, HttpClientResponse.HttpClientResponse])
    // A page's records are the body, its total the engine's X-Total-Count header.
    const method: Method = paged
      ? (input) =>
        Effect.flatMap(withResponse(input), ([items, response]) => {
          const total = Number(response.headers[TOTAL_COUNT_HEADER])
          return Number.isSafeInteger(total) && total >= 0
            ? Effect.succeed({ items, total })
            : Effect.fail(new Error(`no valid ${TOTAL_COUNT_HEADER} header on a page of ${operation}`))
        })
      : creates
      // A replace that may create its record: the engine's 201 says it did.
      ? (input) => Effect.map(withResponse(input), ([record, response]) => response.status === 201 ? asCreated(record as object) : record)
      : client
    return (input: object, scope: CallScope): Effect.Effect<unknown, DownstreamError> => settled(operation, scope, method(input))
  }

  /**
   * A call of the engine as the gateway answers it: the engine's refusals as
   * they are, the failures on the way (unreachable, unreadable, too slow) as
   * the gateway's 502 and 504.
   */
  const settled = <A>(operation: string, scope: CallScope, call: Effect.Effect<A, unknown, EngineCaller>): Effect.Effect<A | null, DownstreamError> =>
    call.pipe(
      Effect.catch((error): Effect.Effect<A | null, DownstreamError> => {
        if (error instanceof NoRecord) return Effect.succeed(null)
        if (error instanceof DownstreamError) return Effect.fail(error)
        if (HttpClientError.isHttpClientError(error) && (error.reason._tag === "TransportError" || error.reason._tag === "InvalidUrlError")) {
          return Effect.logWarning(`engine unreachable for ${operation}: ${error.message}`).pipe(
            Effect.annotateLogs({ requestId: scope.requestId }),
            Effect.andThen(Effect.fail(gatewayError(scope, 502, "The engine is unreachable")))
          )
        }
        return unreadable(scope, operation, error instanceof Error ? error.message : String(error))
      }),
      Effect.timeoutOrElse({
        duration: options.timeoutMs,
        orElse: () =>
          Effect.logWarning(`engine timeout for ${operation} after ${options.timeoutMs} ms`).pipe(
            Effect.annotateLogs({ requestId: scope.requestId }),
            Effect.andThen(Effect.fail(gatewayError(scope, 504, timeoutMessage)))
          )
      }),
      Effect.provideService(EngineCaller, scope),
      (call) => tracing ? call : Effect.provideService(call, HttpClient.TracerDisabledWhen, constTrue),
      Effect.tapError((error) => Effect.annotateCurrentSpan({ "error.source": error.source, "http.response.status_code": error.status })),
      traced(`downstream ${operation}`, { attributes: { "app.id": scope.appId } })
    )
  const calls = new Map<OperationName, ReturnType<typeof callOperation>>()
  const decodeEmptied = HttpClientResponse.schemaBodyJson(TestDataEmptied)

  return Downstream.of({
    call: <E extends OperationEndpoint>(endpoint: E) => {
      const operation = operationOf(endpoint)
      let call = calls.get(operation)
      if (call === undefined) {
        call = callOperation(operation, isPaged(endpoint), createsOnReplace(endpoint))
        calls.set(operation, call)
      }
      const run = call
      // The client's method is this endpoint's: it encodes this input and decodes this answer.
      return (input: OperationInput<E>, scope: CallScope) => run(presentParts(input), scope) as Effect.Effect<OperationAnswer<E>, DownstreamError>
    },
    // The engine's own route beside its API (EngineServer.ts): the app in `x-engine-app-id`, its test space emptied.
    emptyTestData: (appId, requestId) =>
      settled(
        "emptyTestData",
        { appId, requestId },
        Effect.flatMap(httpClient.execute(HttpClientRequest.delete(`${baseUrl}${ENGINE_TEST_DATA_PATH}`)), decodeEmptied)
      ).pipe(
        Effect.flatMap((emptied) =>
          emptied === null ? Effect.fail(gatewayError({ appId, requestId }, 502, "The engine's answer is unreadable")) : Effect.succeed(emptied)
        )
      )
  })
})

const invalid = (message: string) => Effect.die(new InvalidConfig({ message }))

/** The engine's URL, with DOWNSTREAM_TIMEOUT_MS and ENGINE_TOKEN as AppConfig read them. */
const optionsFor = Effect.fnUntraced(function*(url: string) {
  const parsed = URL.parse(url)
  if (parsed === null || (parsed.protocol !== "http:" && parsed.protocol !== "https:")) {
    return yield* invalid(`DOWNSTREAM_URL is not an http(s) URL: ${url}`)
  }
  const config = yield* AppConfig
  return { url, timeoutMs: config.downstreamTimeoutMs, token: config.engineToken } satisfies DownstreamHttpOptions
})

/** Downstream over HTTP with explicit options, on its own keep-alive connection pool (undici). */
export const DownstreamHttpWith = (options: DownstreamHttpOptions): Layer.Layer<Downstream, never, ReadinessChecks> =>
  Layer.effect(Downstream, makeDownstreamHttp(options)).pipe(Layer.provide(NodeHttpClient.layerUndici))

/** Downstream over HTTP to the engine at `url`, with AppConfig's DOWNSTREAM_TIMEOUT_MS and ENGINE_TOKEN. */
export const DownstreamHttpTo = (url: string): Layer.Layer<Downstream, never, AppConfig | ReadinessChecks> =>
  Layer.unwrap(Effect.map(optionsFor(url), DownstreamHttpWith))

/** Downstream over HTTP to the engine at DOWNSTREAM_URL (which must be set). */
export const DownstreamHttp: Layer.Layer<Downstream, never, AppConfig | ReadinessChecks> = Layer.unwrap(Effect.gen(function*() {
  const config = yield* AppConfig
  if (Option.isNone(config.downstreamUrl)) return yield* invalid("DOWNSTREAM_URL is not set")
  return DownstreamHttpTo(config.downstreamUrl.value)
}))

/** What DownstreamLive is built with: the embedded engine's storage and outbound services, the remote one's readiness check. */
type DownstreamLiveNeeds = AppConfig | SqlClient.SqlClient | ReadinessChecks | EngineOutbound

/** The remote engine when DOWNSTREAM_URL is set, the embedded one otherwise. */
export const DownstreamLive: Layer.Layer<Downstream, never, DownstreamLiveNeeds> = Layer.unwrap(
  Effect.gen(function*() {
    const config = yield* AppConfig
    return Option.match(config.downstreamUrl, {
      onNone: (): Layer.Layer<Downstream, never, DownstreamLiveNeeds> => DownstreamEmbedded,
      onSome: DownstreamHttpTo
    })
  })
)
