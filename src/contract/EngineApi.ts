/**
 * The engine's own HTTP API: the public contract's groups, unchanged, under
 * `/engine`, behind the engine's credentials instead of the Incoming Secret.
 *
 * The engine serves it with HttpApiBuilder (src/app/EngineServer.ts) and
 * the gateway calls it with the HttpApiClient derived from it
 * (src/adapters/downstream/DownstreamHttp.ts): one definition on both sides, so a
 * request the gateway sends is one the engine decodes, and an operation the
 * contract does not name has no route (404).
 *
 * Beyond the contract the engine's protocol has a few headers: the bearer
 * `ENGINE_TOKEN`, the app the call is for (believed from the token's holder
 * only; a test-mode caller's test data space), the gateway's request id, a
 * write's precondition (If-Match) and its Idempotency-Key; and, when the
 * caller's secret restricts it, what the secret allows where the engine
 * decides it (its scopes and spend limit). An operation's "no such record" is
 * a 204, which the gateway answers as the spec's empty 200.
 */
import { Context } from "effect"
import { HttpApi, HttpApiMiddleware } from "effect/http-api"
import { NotAuthorized } from "../domain/Errors.ts"
import type { CallScope } from "./EngineCall.ts"
import { registerOperations } from "./Operations.ts"
import { PublicContract } from "./PublicApi.ts"

/** The app and request a call of the engine's API is for, as its gateway said. */
export class EngineCaller extends Context.Service<EngineCaller, CallScope>()("mfg/api/EngineCaller") {}

/** The engine's credentials: `Authorization: Bearer <ENGINE_TOKEN>`, and the app the call is for. */
export class EngineAuth extends HttpApiMiddleware.Service<EngineAuth, {
  provides: EngineCaller
}>()("mfg/api/EngineAuth", {
  error: NotAuthorized
}) {}

export const ENGINE_PATH_PREFIX = "/engine"

/**
 * `DELETE` empties the test data space of the app in `x-engine-app-id` (the
 * admin API's DELETE /api/v1/app/{appId}/test-data): an operator's call, a
 * route of the engine beside its API, with the same credentials.
 */
export const ENGINE_TEST_DATA_PATH = `${ENGINE_PATH_PREFIX}/test-data`

/** The app a call is for: set by the gateway after it authenticated the caller. */
export const ENGINE_APP_HEADER = "x-engine-app-id"

/** What the caller's secret allows (CallGrants) on the engine's wire: its scopes, comma-separated, and its spend limit in EUR. */
export const ENGINE_GRANTS_HEADERS = { scopes: "x-engine-scopes", maxAcceptTotal: "x-engine-max-accept-total" } as const

/** A write's precondition (If-Match) on the engine's wire: the record and the version it must still be at. */
export const ENGINE_PRECONDITION_HEADERS = { id: "x-engine-if-match-id", updatedAt: "x-engine-if-match-updated-at" } as const

/** A write's Idempotency-Key on the engine's wire (IdempotentCall), and the answer's mark that it is a stored one. */
export const ENGINE_IDEMPOTENCY_HEADERS = {
  key: "x-engine-idempotency-key",
  fingerprint: "x-engine-idempotency-fingerprint",
  replayed: "x-engine-idempotent-replayed"
} as const

export class EngineApi extends HttpApi.make("engine").addHttpApi(PublicContract).prefix(ENGINE_PATH_PREFIX).middleware(EngineAuth) {}

registerOperations(EngineApi)
