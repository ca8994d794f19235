/**
 * The request path of every /v1 call: authenticate the Incoming Secret,
 * record the call durably, run the handler, and shape the response.
 *
 * Every authentication failure, whatever its cause, answers the one 401.
 * A storage outage is not an authentication failure: it answers 503.
 */
import { Cause, Effect, Exit, Layer, Option } from "effect"
import { HttpServerRequest, HttpServerResponse } from "effect/http"
import { HttpApiError } from "effect/http-api"
import { randomUUID } from "node:crypto"
import { CurrentCaller, IncomingSecretAuth } from "../../api/Authorization.ts"
import { BadRequest, DownstreamError, NotFound, ServiceUnavailable } from "../../domain/Errors.ts"
import { AppConfig } from "../../services/AppConfig.ts"
import { Meter } from "../../services/Meter.ts"
import { SecretStore } from "../../services/SecretStore.ts"
import { clientAddress, presentedSecret } from "./CallerIdentity.ts"
import { downstreamResponse, errorResponse, notAuthorized, schemaErrorToBadRequest } from "./ErrorResponses.ts"

/** Spans on the request path: their names say where they are; a stack trace per call would cost more than the span. */
const NO_STACK = { captureStackTrace: false } as const

/** The response for a handler's failure, or `undefined` for a defect (left to the server: 500). */
const failureResponse = (cause: Cause.Cause<unknown>): HttpServerResponse.HttpServerResponse | undefined => {
  const error = Cause.findErrorOption(cause)
  if (Option.isNone(error)) return undefined
  const failure = error.value
  if (HttpApiError.HttpApiSchemaError.is(failure)) return errorResponse(schemaErrorToBadRequest(failure))
  if (failure instanceof DownstreamError) return downstreamResponse(failure)
  if (failure instanceof BadRequest || failure instanceof NotFound || failure instanceof ServiceUnavailable) {
    return errorResponse(failure)
  }
  return undefined
}

export const IncomingSecretAuthLive = Layer.effect(
  IncomingSecretAuth,
  Effect.gen(function*() {
    const secrets = yield* SecretStore
    const meter = yield* Meter
    const config = yield* AppConfig

    return IncomingSecretAuth.of(
      (handler, { endpoint, group }) =>
        Effect.gen(function*() {
          const request = yield* HttpServerRequest.HttpServerRequest
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
          // Who called, on the request's server span: ids only, never the secret's value.
          yield* Effect.annotateCurrentSpan({ "app.id": caller.appId, "secret.id": caller.secretId })

          const requestId = randomUUID()
          const recorded = yield* Effect.result(meter.record({
            requestId,
            appId: caller.appId,
            secretId: caller.secretId,
            secretHash: caller.secretHash,
            operation: `${group.identifier}.${endpoint.identifier}`,
            method: endpoint.method,
            route: endpoint.path,
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
        })
    )
  })
)
