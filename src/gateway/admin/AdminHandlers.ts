/**
 * The admin API: secret management, metering totals, per-app rate limits
 * and emptying an app's test data. Off (404) unless
 * ADMIN_TOKEN is set; the token is compared in constant time. A request that
 * fails its schema is the standard 400 naming the field or parameter.
 */
import { Effect, Layer, Option, Redacted } from "effect"
import { HttpApiBuilder, HttpApiError } from "effect/http-api"
import { createHash, randomUUID, timingSafeEqual } from "node:crypto"
import { AdminApi, AdminAuth, AdminBadRequests } from "../../contract/AdminApi.ts"
import { schemaErrorToBadRequest } from "../../contract/BadRequests.ts"
import { errorAnswer } from "../../contract/ErrorAnswer.ts"
import { NotAuthorized, NotFound } from "../../domain/Errors.ts"
import { appRateLimitView } from "../../domain/RateLimit.ts"
import { rangeEnd, rangeStart } from "../../domain/Resource.ts"
import { AppConfig } from "../../services/AppConfig.ts"
import { AppRateLimits } from "../../services/AppRateLimits.ts"
import { Meter } from "../../services/Meter.ts"
import { RateLimiting } from "../../services/RateLimiting.ts"
import { SecretStore } from "../../services/SecretStore.ts"
import { testDataEmptying } from "./TestDataEmptying.ts"

/** The admin API's paths: for operators' tools, never for browsers (CORS stays closed on them). */
export const ADMIN_PREFIX = "/api/"

const digest = (value: string) => createHash("sha256").update(value).digest()

export const AdminAuthLive = Layer.effect(
  AdminAuth,
  Effect.gen(function*() {
    const config = yield* AppConfig
    // Comparing digests keeps the comparison constant-time whatever the lengths.
    const expected = Option.map(config.adminToken, (token) => digest(Redacted.value(token)))
    return AdminAuth.of({
      adminToken: (handler, { credential }) => {
        if (Option.isNone(expected)) return Effect.fail(NotFound.of("The admin API is not enabled"))
        const presented = digest(Redacted.value(credential))
        return timingSafeEqual(presented, expected.value) && Redacted.value(credential).length > 0
          ? handler
          : Effect.fail(new NotAuthorized({ code: 401, message: "Not Authorized" }))
      }
    })
  })
)

export const AdminBadRequestsLive = Layer.succeed(AdminBadRequests, (handler) =>
  Effect.catch(handler, (error) =>
    HttpApiError.HttpApiSchemaError.is(error)
      ? Effect.succeed(errorAnswer(schemaErrorToBadRequest(error)))
      : Effect.fail(error)))

const SecretsHandlers = HttpApiBuilder.group(
  AdminApi,
  "secrets",
  Effect.fn(function*(handlers) {
    const secrets = yield* SecretStore
    const meter = yield* Meter
    return handlers.handleAll({
      create: ({ payload }) => secrets.create(payload),
      list: ({ query }) => secrets.list(query.appId),
      regenerate: ({ params }) => secrets.regenerate(params.id),
      update: ({ params, payload }) => secrets.update(params.id, payload),
      remove: ({ params }) => secrets.remove(params.id),
      // A date as `to` is the end of that day, as in every list filter.
      usage: ({ query }) =>
        meter.usage({
          appId: query.appId,
          mode: query.mode,
          from: query.from === undefined ? undefined : rangeStart(query.from),
          to: query.to === undefined ? undefined : rangeEnd(query.to)
        })
    })
  })
)

/**
 * An override set or cleared here is in force on this instance at once (its
 * remembered budget is dropped), on the others within RateLimiting's
 * POLICY_TTL_MS.
 */
const RateLimitsHandlers = HttpApiBuilder.group(
  AdminApi,
  "rateLimits",
  Effect.fn(function*(handlers) {
    const overrides = yield* AppRateLimits
    const limits = yield* RateLimiting
    const fallback = (yield* AppConfig).rateLimit
    return handlers.handleAll({
      get: ({ params }) => Effect.map(overrides.get(params.appId), (override) => appRateLimitView(params.appId, override, fallback)),
      set: ({ params, payload }) =>
        overrides.set(params.appId, payload).pipe(
          Effect.tap(() => Effect.sync(() => limits.forget(params.appId))),
          Effect.map((override) => appRateLimitView(params.appId, override, fallback))
        ),
      clear: ({ params }) => overrides.clear(params.appId).pipe(Effect.tap(() => Effect.sync(() => limits.forget(params.appId))))
    })
  })
)

/** The engine empties the app's test space (embedded, or the remote engine's own route), then the gateway its keys; refusals pass through. */
const TestDataHandlers = HttpApiBuilder.group(
  AdminApi,
  "testData",
  Effect.fn(function*(handlers) {
    const empty = yield* testDataEmptying
    return handlers.handleAll({
      empty: ({ params }) => empty(params.appId, randomUUID()).pipe(Effect.catch((error) => Effect.succeed(errorAnswer(error))))
    })
  })
)

export const AdminHandlers = Layer.mergeAll(SecretsHandlers, RateLimitsHandlers, TestDataHandlers)
