/**
 * The Incoming Secret middleware of the public API: every /v1 endpoint
 * carries it. It provides the caller (app and secret) to handlers.
 */
import { Context, Schema } from "effect"
import { HttpApiMiddleware } from "effect/http-api"
import { NotAuthorized, ServiceUnavailable } from "../domain/Errors.ts"
import type { Caller } from "../domain/Secret.ts"
import type { CallScope } from "./EngineCall.ts"

export class CurrentCaller extends Context.Service<CurrentCaller, Caller & { readonly requestId: string }>()(
  "mfg/api/CurrentCaller"
) {}

/** The engine call of the caller's request: its data space (the app's, or its test space), request id and grants. */
export const callScopeOf = (caller: CurrentCaller["Service"]): CallScope => ({
  appId: caller.dataSpace,
  requestId: caller.requestId,
  grants: caller.grants
})

/**
 * Reads the `Authorization` header itself (raw secret or `Bearer <secret>`,
 * exactly one header), so every malformed form gets the same 401.
 */
export class IncomingSecretAuth extends HttpApiMiddleware.Service<IncomingSecretAuth, {
  provides: CurrentCaller
}>()("mfg/api/IncomingSecretAuth", {
  error: [NotAuthorized, ServiceUnavailable]
}) {}

/** The headers of the one 401, whatever its cause. */
export const NOT_AUTHORIZED_HEADERS = {
  "www-authenticate": "Bearer realm=\"v1\"",
  "cache-control": "no-store"
} as const

export const NotAuthorizedBody = Schema.Struct({ code: Schema.Literal(401), message: Schema.Literal("Not Authorized") })
