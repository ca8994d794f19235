/**
 * The rate limits of the request path: the guard asks `decide(appId)` once
 * per authenticated call. RateLimitingLive (src/gateway/request/RateLimiting.ts)
 * counts them in memory or Redis; RateLimitingNoOp limits nothing.
 */
import { Context, Effect, Layer } from "effect"
import type { TooManyRequests } from "../domain/Errors.ts"

/** What one call's count decided. */
export interface RateLimitDecision {
  /** `RateLimit-Policy` and `RateLimit`, plus `Retry-After` when refused: on every answer of the call. */
  readonly headers: Readonly<Record<string, string>>
  /** The 429's error when the budget is spent (the surface answers it in its own shape); undefined when the call may run. */
  readonly refusal: TooManyRequests | undefined
}

export interface RateLimitingShape {
  /** Counts one call of `appId`; undefined when the app has no limit (RATE_LIMIT=off and no override). */
  readonly decide: (appId: string) => Effect.Effect<RateLimitDecision | undefined>
  /** Drops the remembered budget of `appId`, after its override was set or cleared here. */
  readonly forget: (appId: string) => void
}

/** The rate limits of the request path: RateLimitingLive counts them; RateLimitingNoOp limits nothing. */
export class RateLimiting extends Context.Service<RateLimiting, RateLimitingShape>()("mfg/http/RateLimiting") {}

/** No limits: every call may run, and answers carry no rate limit headers (a composition without limits, a test's stub). */
export const RateLimitingNoOp = Layer.succeed(RateLimiting, { decide: () => Effect.succeed(undefined), forget: () => {} })
