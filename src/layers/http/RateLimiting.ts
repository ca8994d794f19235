/**
 * Rate limits per app, counted by Effect's `RateLimiter` (fixed window) in
 * the store of RateLimitStore (memory, or Redis shared by every instance).
 *
 * The guard (IncomingSecretGuard) asks `decide(appId)` once per
 * authenticated call, before the handler: the call takes one unit of the
 * app's budget, and the answer carries the IETF headers
 * (draft-ietf-httpapi-ratelimit-headers, structured fields):
 *
 *   RateLimit-Policy: "default";q=600;w=60     the budget: q calls per w seconds
 *   RateLimit: "default";r=599;t=42            r calls left, t seconds until the budget is whole again
 *
 * The policy is named "default" for RATE_LIMIT and "app" for an app's
 * override. Over the budget the call is refused with the 429
 * (TooManyRequests) and `Retry-After: <t>`, still metered.
 *
 * The budget of an app (its override, else RATE_LIMIT) is read from storage
 * at most once per POLICY_TTL_MS per app and instance, never per call: an
 * override set through another instance or the CLI is in force everywhere
 * within POLICY_TTL_MS (at once on the instance that served the admin call).
 * Counters are keyed by app and budget, so a new budget starts whole.
 */
import { Context, Deferred, Duration, Effect, Layer, Metric } from "effect"
import type { HttpServerResponse } from "effect/http"
import { RateLimiter } from "effect/persistence"
import { TooManyRequests } from "../../domain/Errors.ts"
import type { RateLimitPolicy } from "../../domain/RateLimit.ts"
import { AppConfig } from "../../services/AppConfig.ts"
import { AppRateLimits } from "../../services/AppRateLimits.ts"
import { Instruments } from "../telemetry/Instruments.ts"
import { errorResponse } from "./ErrorResponses.ts"
import { makeRateLimiterStore, type StoreEvents } from "./RateLimitStore.ts"

/** How long an app's budget is used before storage is asked again: the delay of an override elsewhere. */
export const POLICY_TTL_MS = 5_000
/** Bound on the apps whose budget is remembered; past it the oldest are dropped (read again when they call). */
const MAX_REMEMBERED = 10_000

/** What one call's count decided. */
export interface RateLimitDecision {
  /** `RateLimit-Policy` and `RateLimit`, plus `Retry-After` when refused: on every answer of the call. */
  readonly headers: Readonly<Record<string, string>>
  /** The 429 when the budget is spent; undefined when the call may run. */
  readonly refusal: HttpServerResponse.HttpServerResponse | undefined
}

export interface RateLimitingShape {
  /** Counts one call of `appId`; undefined when the app has no limit (RATE_LIMIT=off and no override). */
  readonly decide: (appId: string) => Effect.Effect<RateLimitDecision | undefined>
  /** Drops the remembered budget of `appId`, after its override was set or cleared here. */
  readonly forget: (appId: string) => void
}

const NO_RATE_LIMITS: RateLimitingShape = { decide: () => Effect.succeed(undefined), forget: () => {} }

/**
 * The rate limits of the request path: none unless RateLimitingLive is
 * provided (it is, with the other services, in the server and TestApp).
 */
export const RateLimiting = Context.Reference<RateLimitingShape>("mfg/http/RateLimiting", {
  defaultValue: () => NO_RATE_LIMITS
})

/** A budget ready for the request path: its key prefix, window and header texts made once. */
interface Budget {
  readonly policy: RateLimitPolicy
  readonly name: string
  readonly window: Duration.Duration
  readonly keyPrefix: string
  readonly policyHeader: string
}

const budgetOf = (policy: RateLimitPolicy, name: string): Budget => ({
  policy,
  name,
  window: Duration.seconds(policy.windowSeconds),
  keyPrefix: `${policy.limit}/${policy.windowSeconds}:`,
  policyHeader: `"${name}";q=${policy.limit};w=${policy.windowSeconds}`
})

/** Whole seconds, at least 1: `t` and `Retry-After` never say "now" while calls are still refused. */
const seconds = (duration: Duration.Duration) => Math.max(1, Math.ceil(Duration.toMillis(duration) / 1000))

const allowed = (budget: Budget, result: RateLimiter.ConsumeResult): RateLimitDecision => ({
  headers: {
    "ratelimit-policy": budget.policyHeader,
    "ratelimit": `"${budget.name}";r=${Math.max(0, Math.floor(result.remaining))};t=${seconds(result.resetAfter)}`
  },
  refusal: undefined
})

const refused = (budget: Budget, retryAfter: Duration.Duration): RateLimitDecision => {
  const wait = seconds(retryAfter)
  return {
    headers: {
      "ratelimit-policy": budget.policyHeader,
      "ratelimit": `"${budget.name}";r=0;t=${wait}`,
      "retry-after": String(wait)
    },
    refusal: errorResponse(TooManyRequests.over(budget.policy.limit, budget.policy.windowSeconds, wait))
  }
}

/** The metrics of the rate limits (no-ops without an exporter). */
const makeMetrics = Effect.gen(function*() {
  const instruments = yield* Instruments
  if (!instruments.enabled) return { fallback: () => {}, refusal: () => {} }
  const context = yield* Effect.context<never>()
  const fallbacks = Metric.counter("rate_limit.store_fallbacks", {
    description: "Calls counted in this instance's memory because Redis (REDIS_URL) could not answer",
    incremental: true
  })
  const refusals = Metric.counter("rate_limit.refusals", { description: "Calls refused with 429 (budget spent)", incremental: true })
  return { fallback: () => fallbacks.updateUnsafe(1, context), refusal: () => refusals.updateUnsafe(1, context) }
})

export const RateLimitingLive = Layer.effect(
  RateLimiting,
  Effect.gen(function*() {
    const config = yield* AppConfig
    const overrides = yield* AppRateLimits
    const metrics = yield* makeMetrics
    const events: StoreEvents = {
      fallback: (first, cause) =>
        Effect.suspend(() => {
          metrics.fallback()
          return first
            ? Effect.logWarning(`rate limits: Redis cannot answer (${cause}); counting in this instance's memory until it does`)
            : Effect.void
        }),
      connected: Effect.logInfo("rate limits: counting in Redis (REDIS_URL)"),
      recovered: Effect.logInfo("rate limits: Redis answers again; counting in Redis")
    }
    const store = yield* makeRateLimiterStore(config.redisUrl, events)
    const limiter = yield* RateLimiter.make.pipe(Effect.provideService(RateLimiter.RateLimiterStore, store))
    const defaultBudget = config.rateLimit === undefined ? undefined : budgetOf(config.rateLimit, "default")

    const remembered = new Map<string, { readonly budget: Budget | undefined; readonly until: number }>()
    const loading = new Map<string, Deferred.Deferred<Budget | undefined>>()

    const remember = (appId: string, budget: Budget | undefined) => {
      remembered.delete(appId)
      remembered.set(appId, { budget, until: Date.now() + POLICY_TTL_MS })
      if (remembered.size > MAX_REMEMBERED) remembered.delete(remembered.keys().next().value!)
    }

    /** The app's budget from storage; concurrent calls of one app share one read. Storage down: the default, for this call only. */
    const load = (appId: string): Effect.Effect<Budget | undefined> =>
      Effect.suspend(() => {
        const pending = loading.get(appId)
        if (pending !== undefined) return Deferred.await(pending)
        const deferred = Deferred.makeUnsafe<Budget | undefined>()
        loading.set(appId, deferred)
        return overrides.get(appId).pipe(
          Effect.map((override) => override === undefined ? defaultBudget : budgetOf(override, "app")),
          Effect.tap((budget) => Effect.sync(() => remember(appId, budget))),
          Effect.orElseSucceed(() => remembered.get(appId)?.budget ?? defaultBudget),
          Effect.onExit((exit) =>
            Effect.sync(() => {
              loading.delete(appId)
              Deferred.doneUnsafe(deferred, exit)
            })
          ),
          Effect.uninterruptible
        )
      })

    const count = (appId: string, budget: Budget | undefined): Effect.Effect<RateLimitDecision | undefined> =>
      budget === undefined ? Effect.succeed(undefined) : limiter.consume({
        key: budget.keyPrefix + appId,
        limit: budget.policy.limit,
        window: budget.window,
        algorithm: "fixed-window",
        onExceeded: "fail"
      }).pipe(Effect.match({
        onSuccess: (result) => allowed(budget, result),
        onFailure: (error) => {
          // A store error cannot reach here (RateLimitStore falls back to memory); were it to, the call goes on unlimited.
          if (error.reason._tag !== "RateLimitExceeded") return undefined
          metrics.refusal()
          return refused(budget, error.reason.retryAfter)
        }
      }))

    return {
      decide: (appId) => {
        const known = remembered.get(appId)
        return known !== undefined && known.until > Date.now()
          ? count(appId, known.budget)
          : Effect.flatMap(load(appId), (budget) => count(appId, budget))
      },
      forget: (appId) => {
        remembered.delete(appId)
      }
    }
  })
)
