/**
 * The request path of one authenticated call, shared by the REST middleware
 * (IncomingSecretAuthLive) and the MCP route (McpAuth):
 *
 *   presented secret → SecretStore.authenticate ── any failure: the one 401
 *                                               └─ storage down: 503
 *   Meter.submit, then its receipt (durable) ───── secret revoked meanwhile: 401;
 *                                                  its grants changed: looked
 *                                                  up again, decided anew
 *   RateLimiting.decide, while the receipt commits: one unit of the app's
 *   budget (RateLimiting.ts)
 *   the secret's scopes: a REST operation outside them is the 403
 *   `InsufficientScope` instead of the handler (MCP checks its tools and
 *   resources itself), metered all the same
 *   handler, with the caller provided: after the receipt, or for a read (a
 *   GET, an MCP read tool or listing) while the event is being committed
 *   (answered only once it is durable)
 *   (over the budget: the 429 instead of the handler, metered all the same)
 *   Meter.complete (status, duration, an error's type), x-request-id, the
 *   RateLimit headers and, for a test-mode secret, `X-Mode: test` on the
 *   response
 *
 * Telemetry on the way: the cause of a 401 is counted (`auth.failures`) and
 * written to the request's facts for the log line, never to the response;
 * a downstream error (`x-error-source` on the response) is counted by source;
 * the caller's trace context (the `traceparent` header, or MCP `_meta`) is
 * handed to what the handler calls (IncomingTraceContext), and an MCP call
 * runs in its own server span, which continues a `_meta` trace when the HTTP
 * request brought none.
 */
import { type Cause, Context, Duration, Effect, Exit, Fiber, Layer, References, Schema } from "effect"
import type { HttpServerRequest } from "effect/http"
import { HttpServerResponse } from "effect/http"
import { CurrentCaller } from "../../contract/Authorization.ts"
import { errorAnswer, notAuthorized } from "../../contract/ErrorAnswer.ts"
import { withinMillis } from "../../domain/BoundedWait.ts"
import { InsufficientScope, ServiceUnavailable, type TooManyRequests } from "../../domain/Errors.ts"
import { MODE_HEADER, type Scope } from "../../domain/Grants.ts"
import type { Caller } from "../../domain/Secret.ts"
import { traced } from "../../domain/Span.ts"
import { timeOrderedUuid } from "../../domain/TimeOrderedId.ts"
import { Instruments, type TelemetryInstruments } from "../../platform/telemetry/Instruments.ts"
import { activeSpan } from "../../platform/telemetry/JsonLog.ts"
import { type IncomingTrace, IncomingTraceContext, parentSpanOf, traceFromHeaders } from "../../platform/telemetry/TraceContext.ts"
import { AppConfig } from "../../services/AppConfig.ts"
import { Meter } from "../../services/Meter.ts"
import { RateLimiting, type RateLimitingShape } from "../../services/RateLimiting.ts"
import { SecretStore } from "../../services/SecretStore.ts"
import { clientAddress, presentedSecret } from "./CallerIdentity.ts"
import { CurrentRequestFacts, type RequestFacts } from "./RequestTelemetry.ts"

/** Spans on the request path: their names say where they are; a stack trace per call would cost more than the span. */
const NO_STACK = { captureStackTrace: false } as const

/** What a call is, once its body is read (MCP). */
export interface CallDetails {
  /** `<group>.<endpoint>`, `mcp.<tool>`... */
  readonly operation: string
  /** The MCP tool of a `tools/call`, for the request log. */
  readonly tool?: string | undefined
  /** A span of its own for the call (MCP: `tools/call create_ticket`), with its attributes. */
  readonly span?: { readonly name: string; readonly attributes: Readonly<Record<string, unknown>> } | undefined
  /** The trace context the body carries (MCP `_meta`), continued when the HTTP request has no `traceparent`. */
  readonly trace?: IncomingTrace | undefined
  /** Whether the call changes nothing (an MCP read tool); a REST call does when its method is GET. */
  readonly readOnly?: boolean | undefined
}

/** What a call is metered as. */
export interface MeteredCall {
  /** `<group>.<endpoint>`; an Effect when only the request body says it (read once authenticated). */
  readonly operation: string | Effect.Effect<CallDetails>
  readonly method: string
  readonly route: string
  /** The answer to a call over its app's budget, in the surface's shape (MCP: a JSON-RPC error); the standard 429 body otherwise. */
  readonly overBudget?: ((error: TooManyRequests) => HttpServerResponse.HttpServerResponse) | undefined
  /** The scope the operation needs (a REST endpoint's `RequiredScope`); MCP checks its tools and resources itself. */
  readonly scope?: Scope | undefined
  /** The media types its body may have, as a 415 names them (a REST endpoint's payload types); JSON when absent. */
  readonly accepts?: string | undefined
}

/** The headers of every answer of a test-mode call. */
const TEST_MODE = { [MODE_HEADER]: "test" } as const

/** The `type` of an error answer's body. */
const decodeErrorType = Schema.decodeUnknownOption(Schema.fromJsonString(Schema.Struct({ type: Schema.String })))
/** Error bodies are small; a body larger than this is not read for its type. */
const MAX_ERROR_BODY = 65_536

/**
 * The `type` of an error answer, for the request log: every /v1 error but the
 * 401 has the standard body `{code, message, type}`, read back as a client
 * reads it (an answer built elsewhere, an idempotent replay, an engine's
 * passthrough, all have it). Undefined for a success or another body.
 */
const errorTypeOf = (response: HttpServerResponse.HttpServerResponse): string | undefined => {
  if (response.status < 400 || response.body._tag !== "Uint8Array" || response.body.body.byteLength > MAX_ERROR_BODY) return undefined
  const decoded = decodeErrorType(new TextDecoder().decode(response.body.body))
  return decoded._tag === "Some" ? decoded.value.type : undefined
}

/**
 * Runs `effect` in the call's own server span: a child of the caller's span
 * from `_meta` (linked to the HTTP server span) when `continued`, else of
 * the HTTP server span. Notes the span's ids for the log line. Nothing when
 * tracing is off.
 */
const inCallSpan = <A, E, R>(
  effect: Effect.Effect<A, E, R>,
  span: NonNullable<CallDetails["span"]>,
  continued: IncomingTrace | undefined,
  facts: RequestFacts | undefined
): Effect.Effect<A, E, R> =>
  Effect.withFiber((fiber) => {
    if (!fiber.getRef(References.TracerEnabled)) return effect
    const transport = activeSpan(fiber.context)
    const noted = facts === undefined ? effect : Effect.withFiber((inner) => {
      const own = activeSpan(inner.context)
      if (own !== undefined) {
        facts.traceId = own.traceId
        facts.spanId = own.spanId
      }
      return effect
    })
    return noted.pipe(Effect.withSpan(span.name, {
      kind: "server",
      attributes: span.attributes,
      ...(continued === undefined
        ? {}
        : { parent: parentSpanOf(continued), links: transport === undefined ? [] : [{ span: transport, attributes: {} }] })
    }, NO_STACK))
  })

/**
 * The HttpApi answers a body in a media type it does not read with a plain
 * text 415 of its own; every error of the API has the standard body. A 415
 * that already has it (a model file upload's, naming the model types) stays.
 */
const standardBody = (response: HttpServerResponse.HttpServerResponse, request: HttpServerRequest.HttpServerRequest, call: MeteredCall) =>
  response.status !== 415 || response.headers["content-type"]?.startsWith("application/json") === true ? response : errorAnswer({
    code: 415,
    message: `Unsupported content-type: ${request.headers["content-type"] ?? "none"}; send the body as ${call.accepts ?? "application/json"}`,
    type: "UnsupportedMediaType"
  })

export const makeIncomingSecretGuard = (
  secrets: SecretStore["Service"],
  meter: Meter["Service"],
  config: AppConfig["Service"],
  instruments: TelemetryInstruments,
  rateLimits: RateLimitingShape
) => {
  /**
   * A wait on the database, bounded by DATABASE_QUERY_TIMEOUT: past it, the
   * 503 `StorageUnavailable`. Every call waits for its secret (when it is
   * not remembered) and for its meter row's commit, so a database that stops
   * answering answers every call within the bound; what was sent goes on in
   * the background, and a connection that never answers is closed
   * (storage/AnswerWatchdog.ts).
   */
  const boundMs = Duration.toMillis(config.databaseQueryTimeout)
  const storageUnavailable = () => Effect.fail(ServiceUnavailable.storage())
  /** A wait within what is left, now, of the bound of a call that started at `startedAt` (performance.now()). */
  const storageBound = (startedAt: number) => withinMillis(Math.max(0, startedAt + boundMs - performance.now()), storageUnavailable)

  /** The one 401, whatever the cause; the cause goes to the metric and the log line only. */
  const refused = (facts: RequestFacts | undefined, cause: string) => {
    instruments.authFailure(cause)
    if (facts !== undefined) facts.authFailure = cause
    return notAuthorized()
  }

  type Handler = Effect.Effect<HttpServerResponse.HttpServerResponse, unknown, unknown>
  type FailureResponse = (cause: Cause.Cause<unknown>) => HttpServerResponse.HttpServerResponse | undefined

  /**
   * The call once authenticated: its meter event, its budget, the handler and
   * its outcome. A generator defined once, not per call: V8 gives each new
   * generator function closure its own initial map in old space, and that map
   * keeps the closure, and the whole request it captured, alive through
   * every scavenge until the next full collection (bench/README.md, "Why the
   * request path has no per-call generator").
   */
  const metered: (
    request: HttpServerRequest.HttpServerRequest,
    call: MeteredCall,
    handler: Handler,
    failureResponse: FailureResponse,
    facts: RequestFacts | undefined,
    startedAt: number,
    caller: Caller,
    details: CallDetails,
    requestId: string,
    presented: string,
    address: string,
    lookedUpAgain: boolean
  ) => Handler = Effect.fnUntraced(function*(
    request: HttpServerRequest.HttpServerRequest,
    call: MeteredCall,
    handler: Handler,
    failureResponse: FailureResponse,
    facts: RequestFacts | undefined,
    startedAt: number,
    caller: Caller,
    details: CallDetails,
    requestId: string,
    presented: string,
    address: string,
    lookedUpAgain: boolean
  ) {
    const occurredAt = new Date()
    const receipt = yield* meter.submit({
      requestId,
      appId: caller.appId,
      secretId: caller.secretId,
      secretHash: caller.secretHash,
      grantsVersion: caller.grants.version,
      mode: caller.grants.mode,
      clientAddress: address,
      operation: details.operation,
      method: call.method,
      route: call.route,
      occurredAt
    })
    // Counted while the meter event commits (a Redis round trip overlaps the commit). Over the
    // app's budget, the 429 takes the handler's place; either way the call is metered.
    // An app's own budget is read from the database now and then: within the same bound.
    const decided = yield* Effect.result(rateLimits.decide(caller.appId).pipe(storageBound(startedAt)))
    if (decided._tag === "Failure") return errorAnswer(decided.failure)
    const limit = decided.success
    // Outside the secret's scopes, the 403 takes the handler's place: nothing is read or changed.
    const scope = call.scope
    const run = scope !== undefined && !caller.grants.scopes.has(scope)
      ? Effect.succeed(errorAnswer(InsufficientScope.of(details.operation, scope)))
      : limit?.refusal === undefined
      ? handler
      : Effect.succeed((call.overBudget ?? errorAnswer)(limit.refusal))
    // A read runs while its meter event is being committed (one round trip
    // saved); it is answered only once the event is durable, and dropped if
    // the secret turned out revoked. Anything else runs after the commit.
    // The read runs beside the wait for its receipt, so that a database that stops answering fails the
    // call when the receipt's bound is reached, not once the read has waited as long again.
    const speculative = (details.readOnly ?? call.method === "GET")
      ? yield* Effect.forkChild(Effect.exit(Effect.provideService(run, CurrentCaller, { ...caller, requestId })), { startImmediately: true })
      : undefined
    const recorded = yield* Effect.result(receipt.pipe(storageBound(startedAt), traced("Meter.record")))
    if (recorded._tag === "Failure") {
      // Not awaited: a read stuck on the database ends in the background.
      if (speculative !== undefined) yield* Effect.forkDetach(Fiber.interrupt(speculative))
      if (recorded.failure instanceof ServiceUnavailable) return errorAnswer(recorded.failure)
      // Revoked, regenerated or its grants changed since this instance last looked: nothing was written or
      // answered. Looked up again, a secret that still authenticates with other grants is decided anew with them.
      secrets.forget(caller.secretId)
      if (!lookedUpAgain) {
        const current = yield* Effect.result(secrets.authenticate(presented, address))
        if (current._tag === "Success" && current.success.grants.version !== caller.grants.version) {
          return yield* metered(request, call, handler, failureResponse, facts, startedAt, current.success, details, requestId, presented, address, true)
        }
        if (current._tag === "Failure" && current.failure instanceof ServiceUnavailable) return errorAnswer(current.failure)
      }
      return refused(facts, recorded.failure.cause)
    }
    if (facts !== undefined) facts.requestId = requestId

    const exit = speculative !== undefined
      ? yield* Fiber.join(speculative)
      : yield* Effect.exit(Effect.provideService(run, CurrentCaller, { ...caller, requestId }))
    const response = Exit.isSuccess(exit) ? standardBody(exit.value, request, call) : failureResponse(exit.cause)
    const status = response?.status ?? 500
    meter.complete(requestId, occurredAt, status, performance.now() - startedAt, response === undefined ? undefined : errorTypeOf(response))
    if (response === undefined) return yield* exit
    // A downstream failure passed through (REST); MCP tools note theirs where they call Downstream.
    const errorSource = response.headers["x-error-source"]
    if (errorSource !== undefined) {
      instruments.downstreamError(errorSource, status)
      if (facts !== undefined) facts.errorSource = errorSource
    }
    const test = caller.grants.mode === "test"
    return limit === undefined && !test
      ? HttpServerResponse.setHeader(response, "x-request-id", requestId)
      : HttpServerResponse.setHeaders(response, { ...limit?.headers, ...(test ? TEST_MODE : undefined), "x-request-id": requestId })
  })

  /** The call: its secret authenticated, then metered (`metered`); defined once for the same reason. */
  const guarded = Effect.fnUntraced(function*(
    request: HttpServerRequest.HttpServerRequest,
    call: MeteredCall,
    handler: Handler,
    failureResponse: FailureResponse
  ) {
    const startedAt = performance.now()
    const facts = yield* CurrentRequestFacts
    if (facts !== undefined) facts.route = call.route
    const presented = presentedSecret(request)
    if (!presented.ok) return refused(facts, presented.cause)

    const address = clientAddress(request, config.trustedProxies)
    const authenticated = yield* Effect.result(
      secrets.authenticate(presented.value, address).pipe(
        storageBound(startedAt),
        traced("IncomingSecret.verify")
      )
    )
    if (authenticated._tag === "Failure") {
      if (authenticated.failure instanceof ServiceUnavailable) return errorAnswer(authenticated.failure)
      return refused(facts, authenticated.failure.cause)
    }
    const caller = authenticated.success
    const details: CallDetails = typeof call.operation === "string" ? { operation: call.operation } : yield* call.operation
    const operation = details.operation
    // Who called and what, on the request's server span: ids only, never the secret's value.
    yield* Effect.annotateCurrentSpan({ "app.id": caller.appId, "secret.id": caller.secretId, "operation": operation })
    if (facts !== undefined) {
      facts.appId = caller.appId
      facts.secretId = caller.secretId
      facts.operation = operation
      facts.tool = details.tool
    }

    const meteredCall = metered(
      request,
      call,
      handler,
      failureResponse,
      facts,
      startedAt,
      caller,
      details,
      timeOrderedUuid(),
      presented.value,
      address,
      false
    )
    // The caller's trace context, for what the handler calls; usually there is none, and nothing is provided.
    const headerTrace = request.headers["traceparent"] === undefined ? undefined : traceFromHeaders(request.headers)
    const bodyTrace = headerTrace === undefined ? details.trace : undefined
    if (facts !== undefined && bodyTrace !== undefined) facts.trace = bodyTrace
    const trace = headerTrace ?? bodyTrace
    const continued = trace === undefined ? meteredCall : Effect.provideService(meteredCall, IncomingTraceContext, trace)
    return yield* (details.span === undefined ? continued : inCallSpan(continued, details.span, bodyTrace, facts))
  })

  /**
   * Runs `handler` for an authenticated, metered call. `failureResponse` turns
   * a failure of the handler into its response (undefined: a defect, left to
   * the server as a 500).
   */
  return <E, R>(
    request: HttpServerRequest.HttpServerRequest,
    call: MeteredCall,
    handler: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>,
    failureResponse: (cause: Cause.Cause<E>) => HttpServerResponse.HttpServerResponse | undefined = () => undefined
  ): Effect.Effect<HttpServerResponse.HttpServerResponse, E, Exclude<R, CurrentCaller>> =>
    guarded(request, call, handler, failureResponse as FailureResponse) as Effect.Effect<
      HttpServerResponse.HttpServerResponse,
      E,
      Exclude<R, CurrentCaller>
    >
}

/**
 * The guard as one service: the REST middleware, the direct record read and
 * MCP take this same instance, so the request path of every /v1 call is one.
 */
export class IncomingSecretGuard extends Context.Service<IncomingSecretGuard, ReturnType<typeof makeIncomingSecretGuard>>()(
  "mfg/http/IncomingSecretGuard"
) {
  static readonly layer = Layer.effect(
    IncomingSecretGuard,
    Effect.gen(function*() {
      return makeIncomingSecretGuard(yield* SecretStore, yield* Meter, yield* AppConfig, yield* Instruments, yield* RateLimiting)
    })
  )
}
