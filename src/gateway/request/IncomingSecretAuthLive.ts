/**
 * The request path of every /v1 call: authenticate the Incoming Secret,
 * record the call durably, run the handler, and shape the response.
 *
 * Every authentication failure, whatever its cause, answers the one 401
 * (the cause is counted in `auth.failures` and logged, never answered).
 * A storage outage is not an authentication failure: it answers 503.
 */
import { Cause, Context, Effect, Layer, Option } from "effect"
import { HttpServerRequest, type HttpServerResponse } from "effect/http"
import { type HttpApiEndpoint, HttpApiError, type HttpApiGroup } from "effect/http-api"
import { IncomingSecretAuth } from "../../contract/Authorization.ts"
import { schemaErrorToBadRequest } from "../../contract/BadRequests.ts"
import { errorAnswer } from "../../contract/ErrorAnswer.ts"
import { RequiredScope } from "../../contract/Scopes.ts"
import { BadRequest, DownstreamError, NotFound, ServiceUnavailable } from "../../domain/Errors.ts"
import { IncomingSecretGuard, type MeteredCall } from "./IncomingSecretGuard.ts"

/** What an endpoint's calls are metered as, the scope they need and the body types they take (its `RequiredScope`, src/contract/Scopes.ts). */
export const meteredCallOf = (group: HttpApiGroup.Top, endpoint: HttpApiEndpoint.Top): MeteredCall => ({
  operation: `${group.identifier}.${endpoint.identifier}`,
  method: endpoint.method,
  route: endpoint.path,
  scope: Context.getOrUndefined(endpoint.annotations, RequiredScope),
  accepts: endpoint.payload.size === 0 ? undefined : [...endpoint.payload.keys()].join(", ")
})

/** The response for a handler's failure, or `undefined` for a defect (left to the server: 500). */
export const failureResponse = (cause: Cause.Cause<unknown>): HttpServerResponse.HttpServerResponse | undefined => {
  const error = Cause.findErrorOption(cause)
  if (Option.isNone(error)) return undefined
  const failure = error.value
  if (HttpApiError.HttpApiSchemaError.is(failure)) return errorAnswer(schemaErrorToBadRequest(failure))
  if (failure instanceof DownstreamError || failure instanceof BadRequest || failure instanceof NotFound || failure instanceof ServiceUnavailable) {
    return errorAnswer(failure)
  }
  return undefined
}

export const IncomingSecretAuthLive = Layer.effect(
  IncomingSecretAuth,
  Effect.gen(function*() {
    const guard = yield* IncomingSecretGuard
    // Built once per endpoint, not per call.
    const calls = new WeakMap<HttpApiEndpoint.Top, MeteredCall>()
    const callOf = (group: HttpApiGroup.Top, endpoint: HttpApiEndpoint.Top) => {
      let call = calls.get(endpoint)
      if (call === undefined) {
        call = meteredCallOf(group, endpoint)
        calls.set(endpoint, call)
      }
      return call
    }
    return IncomingSecretAuth.of((handler, { endpoint, group }) =>
      Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => guard(request, callOf(group, endpoint), handler, failureResponse))
    )
  })
)
