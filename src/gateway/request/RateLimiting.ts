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
 *
 * An instance takes a large budget's units from the store a lease at a time
 * (leaseSize: a hundredth of it, at most 50) and hands them out itself, so
 * that most calls make no round trip to Redis (nor a store call in memory);
 * `r` is then what the store had left, less what this instance has handed
 * out since.
 */
import { Deferred, Duration, Effect, Exit, Layer, Metric } from "effect"
import { RateLimiter } from "effect/persistence"
import { TooManyRequests } from "../../domain/Errors.ts"
import type { RateLimitPolicy } from "../../domain/RateLimit.ts"
import { setRecent } from "../../domain/RecentMap.ts"
import { Instruments } from "../../platform/telemetry/Instruments.ts"
import { AppConfig } from "../../services/AppConfig.ts"
import { AppRateLimits } from "../../services/AppRateLimits.ts"
import { type RateLimitDecision, RateLimiting } from "../../services/RateLimiting.ts"
import { makeRateLimiterStore, type StoreEvents } from "./RateLimitStore.ts"

/** How long an app's budget is used before storage is asked again: the delay of an override elsewhere. */
export const POLICY_TTL_MS = 5_000
/** Bound on the apps whose budget, and whose lease, are remembered; past it the oldest are dropped (read again when they call). */
const MAX_REMEMBERED = 10_000

/**
 * How many units an instance takes from the store at once: a
 * hundredth of the budget, at most MAX_LEASE, so a small budget is counted
 * call by call and a large one costs a round trip per lease, not per call.
 * Units leased are counted in the store when they are taken, and an
 * instance hands them out for up to a window after: across N instances a
 * window can refuse up to N × (leaseSize - 1) calls early (units leased, not
 * yet used) or admit as many late (used after the store's counter reset).
 */
const MAX_LEASE = 50
export const leaseSize = (limit: number) => Math.min(MAX_LEASE, Math.max(1, Math.floor(limit / 100)))

/** Units of an app's budget this instance holds for the current window (see countLeased). */
interface Lease {
  left: number
  /** What the store had left after the lease was taken. */
  remaining: number
  /** When the store's counter resets (its `t`). */
  resetAt: number
  /** Until when the lease serves: a whole lease for a window; one by one, or spent, until the counter resets. */
  until: number
  /** Less than a lease was left: counted one by one until the reset. */
  single: boolean
  /** The budget is spent: refused here until the reset. */
  spent: boolean
}

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

const allowed = (budget: Budget, result: Pick<RateLimiter.ConsumeResult, "remaining" | "resetAfter">): RateLimitDecision => ({
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
    refusal: TooManyRequests.over(budget.policy.limit, budget.policy.windowSeconds, wait)
  }
}

/** The metrics of the rate limits (no-ops without an exporter). */
const makeMetrics = Effect.gen(function*() {
  const instruments = yield* Instruments
  const config = yield* AppConfig
  if (!instruments.enabled) return { fallback: () => {}, refusal: () => {}, degraded: (_: boolean) => {} }
  const context = yield* Effect.context<never>()
  const fallbacks = Metric.counter("rate_limit.store_fallbacks", {
    description: "Calls counted in this instance's memory because Redis (REDIS_URL) could not answer",
    incremental: true
  })
  const refusals = Metric.counter("rate_limit.refusals", { description: "Calls refused with 429 (budget spent)", incremental: true })
  const degraded = Metric.gauge("rate_limit.store_degraded", {
    description: "1 while this instance counts rate limits in its own memory because Redis (REDIS_URL) cannot answer, else 0"
  })
  if (config.redisUrl._tag === "Some") degraded.updateUnsafe(0, context)
  return {
    fallback: () => fallbacks.updateUnsafe(1, context),
    refusal: () => refusals.updateUnsafe(1, context),
    degraded: (active: boolean) => degraded.updateUnsafe(active ? 1 : 0, context)
  }
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
          if (first) metrics.degraded(true)
          return first
            ? Effect.logWarning(`rate limits: Redis cannot answer (${cause}); counting in this instance's memory until it does`)
            : Effect.void
        }),
      connected: Effect.logInfo("rate limits: counting in Redis (REDIS_URL)"),
      recovered: Effect.sync(() => metrics.degraded(false)).pipe(
        Effect.andThen(Effect.logInfo("rate limits: Redis answers again; counting in Redis"))
      ),
      reconciled: ({ keys, lost, units }) =>
        Effect.logInfo(
          lost
            ? "rate limits: Redis lost its counters; added back what this instance took from them and admitted meanwhile"
            : "rate limits: added to Redis's counters what this instance admitted while it could not answer"
        ).pipe(Effect.annotateLogs({ apps: keys, calls: units }))
    }
    const store = yield* makeRateLimiterStore(config.redisUrl, events)
    const limiter = yield* RateLimiter.make.pipe(Effect.provideService(RateLimiter.RateLimiterStore, store))
    const defaultBudget = config.rateLimit === undefined ? undefined : budgetOf(config.rateLimit, "default")

    const remembered = new Map<string, { readonly budget: Budget | undefined; readonly until: number }>()
    const loading = new Map<string, Deferred.Deferred<Budget | undefined>>()

    const remember = (appId: string, budget: Budget | undefined) => {
      setRecent(remembered, appId, { budget, until: Date.now() + POLICY_TTL_MS }, MAX_REMEMBERED)
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

    /** Takes `tokens` units of the app's budget from the store: the result, or how long until the window resets. */
    const take = (key: string, budget: Budget, tokens: number) =>
      limiter.consume({
        key,
        limit: budget.policy.limit,
        window: budget.window,
        algorithm: "fixed-window",
        onExceeded: "fail",
        tokens
      }).pipe(
        Effect.map((result) => ({ _tag: "Taken", result }) as const),
        Effect.catch((error) =>
          // A store error cannot reach here (RateLimitStore falls back to memory); were it to, the call goes on unlimited.
          Effect.succeed(
            error.reason._tag === "RateLimitExceeded" ? { _tag: "Spent", retryAfter: error.reason.retryAfter } as const : { _tag: "Unknown" } as const
          )
        )
      )

    const countOne = (key: string, budget: Budget): Effect.Effect<RateLimitDecision | undefined> =>
      Effect.map(take(key, budget, 1), (taken) => {
        switch (taken._tag) {
          case "Taken":
            return allowed(budget, taken.result)
          case "Spent":
            metrics.refusal()
            return refused(budget, taken.retryAfter)
          case "Unknown":
            return undefined
        }
      })

    const leases = new Map<string, Lease>()
    const refilling = new Map<string, Deferred.Deferred<void>>()

    /**
     * One call counted from a lease: units are
     * taken from the store `leaseSize` at a time and handed out here, so most
     * calls make no round trip. A lease lasts until its window resets; once
     * the store cannot give a whole lease, calls are counted one by one, and
     * once the budget is spent they are refused here until the window resets
     * (a fixed window does not refill before). Concurrent calls share one refill.
     */
    const countLeased = (key: string, budget: Budget, size: number): Effect.Effect<RateLimitDecision | undefined> =>
      Effect.suspend(() => {
        const now = Date.now()
        const lease = leases.get(key)
        if (lease !== undefined && lease.until > now) {
          if (lease.spent) {
            metrics.refusal()
            return Effect.succeed(refused(budget, Duration.millis(Math.max(0, lease.resetAt - now))))
          }
          if (lease.left > 0) {
            lease.left--
            return Effect.succeed(allowed(budget, { remaining: lease.remaining + lease.left, resetAfter: Duration.millis(Math.max(0, lease.resetAt - now)) }))
          }
          if (lease.single) {
            return Effect.tap(countOne(key, budget), (decision) =>
              Effect.sync(() => {
                if (decision?.refusal !== undefined) lease.spent = true
              }))
          }
        }
        const pending = refilling.get(key)
        if (pending !== undefined) return Effect.flatMap(Deferred.await(pending), () => countLeased(key, budget, size))
        const done = Deferred.makeUnsafe<void>()
        refilling.set(key, done)
        return take(key, budget, size).pipe(
          Effect.flatMap((taken): Effect.Effect<RateLimitDecision | undefined> => {
            if (taken._tag === "Taken") {
              const now = Date.now()
              const resetAt = now + Duration.toMillis(taken.result.resetAfter)
              // Units taken are the app's for the window, whenever they are handed out (see leaseSize).
              const until = now + Duration.toMillis(budget.window)
              setRecent(leases, key, { left: size - 1, remaining: taken.result.remaining, resetAt, until, single: false, spent: false }, MAX_REMEMBERED)
              return Effect.succeed(allowed(budget, { remaining: taken.result.remaining + size - 1, resetAfter: taken.result.resetAfter }))
            }
            if (taken._tag === "Unknown") return Effect.succeed(undefined)
            // Less than a lease left in this window: one by one until it resets, refused here once spent.
            return Effect.tap(countOne(key, budget), (decision) =>
              Effect.sync(() => {
                const resetAt = Date.now() + Duration.toMillis(taken.retryAfter)
                setRecent(leases, key, { left: 0, remaining: 0, resetAt, until: resetAt, single: true, spent: decision?.refusal !== undefined }, MAX_REMEMBERED)
              }))
          }),
          Effect.onExit(() =>
            Effect.sync(() => {
              refilling.delete(key)
              Deferred.doneUnsafe(done, Exit.void)
            })
          ),
          Effect.uninterruptible
        )
      })

    const count = (appId: string, budget: Budget | undefined): Effect.Effect<RateLimitDecision | undefined> => {
      if (budget === undefined) return Effect.succeed(undefined)
      const key = budget.keyPrefix + appId
      const size = leaseSize(budget.policy.limit)
      return size === 1 ? countOne(key, budget) : countLeased(key, budget, size)
    }

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
