/**
 * The request path of one authenticated call, shared by the REST middleware
 * (IncomingSecretAuthLive) and the MCP route (McpAuth):
 *
 *   presented secret → SecretStore.authenticate ── any failure: the one 401
 *                                               └─ storage down: 503
 *   Meter.record (durable before the handler) ──── secret changed meanwhile: 401
 *   handler, with the caller provided
 *   Meter.complete (status, duration), x-request-id on the response
 */
import { type Cause, Effect, Exit } from "effect"
import type { HttpServerRequest } from "effect/http"
import { HttpServerResponse } from "effect/http"
import { randomUUID } from "node:crypto"
import { CurrentCaller } from "../../api/Authorization.ts"
import { ServiceUnavailable } from "../../domain/Errors.ts"
import type { AppConfig } from "../../services/AppConfig.ts"
import type { Meter } from "../../services/Meter.ts"
import type { SecretStore } from "../../services/SecretStore.ts"
import { clientAddress, presentedSecret } from "./CallerIdentity.ts"
import { errorResponse, notAuthorized } from "./ErrorResponses.ts"

/** Spans on the request path: their names say where they are; a stack trace per call would cost more than the span. */
const NO_STACK = { captureStackTrace: false } as const

/** What a call is metered as. */
export interface MeteredCall {
  /** `<group>.<endpoint>`; an Effect when only the request body says it (read once authenticated). */
  readonly operation: string | Effect.Effect<string>
  readonly method: string
  readonly route: string
}

export const makeIncomingSecretGuard = (
  secrets: SecretStore["Service"],
  meter: Meter["Service"],
  config: AppConfig["Service"]
) =>
/**
 * Runs `handler` for an authenticated, metered call. `failureResponse` turns
 * a failure of the handler into its response (undefined: a defect, left to
 * the server as a 500).
 */
<E, R>(
  request: HttpServerRequest.HttpServerRequest,
  call: MeteredCall,
  handler: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>,
  failureResponse: (cause: Cause.Cause<E>) => HttpServerResponse.HttpServerResponse | undefined = () => undefined
): Effect.Effect<HttpServerResponse.HttpServerResponse, E, Exclude<R, CurrentCaller>> =>
  Effect.gen(function*() {
    const startedAt = performance.now()
    const presented = presentedSecret(request)
    if (!presented.ok) return notAuthorized()

    const authenticated = yield* Effect.result(
      secrets.authenticate(presented.value, clientAddress(request, config.trustedProxies)).pipe(
        Effect.withSpan("IncomingSecret.verify", undefined, NO_STACK)
      )
    )
    if (authenticated._tag === "Failure") {
      if (authenticated.failure instanceof ServiceUnavailable) return errorResponse(authenticated.failure)
      return notAuthorized()
    }
    const caller = authenticated.success
    const operation = typeof call.operation === "string" ? call.operation : yield* call.operation
    // Who called and what, on the request's server span: ids only, never the secret's value.
    yield* Effect.annotateCurrentSpan({ "app.id": caller.appId, "secret.id": caller.secretId, "operation": operation })

    const requestId = randomUUID()
    const recorded = yield* Effect.result(meter.record({
      requestId,
      appId: caller.appId,
      secretId: caller.secretId,
      secretHash: caller.secretHash,
      operation,
      method: call.method,
      route: call.route,
      occurredAt: new Date()
    }).pipe(Effect.withSpan("Meter.record", undefined, NO_STACK)))
    if (recorded._tag === "Failure") {
      if (recorded.failure instanceof ServiceUnavailable) return errorResponse(recorded.failure)
      // Revoked or regenerated since this instance last looked.
      secrets.forget(caller.secretId)
      return notAuthorized()
    }

    const exit = yield* Effect.exit(Effect.provideService(handler, CurrentCaller, { ...caller, requestId }))
    const response = Exit.isSuccess(exit) ? exit.value : failureResponse(exit.cause)
    meter.complete(requestId, response?.status ?? 500, performance.now() - startedAt)
    if (response === undefined) return yield* exit
    return HttpServerResponse.setHeader(response, "x-request-id", requestId)
  }) as Effect.Effect<HttpServerResponse.HttpServerResponse, E, Exclude<R, CurrentCaller>>
