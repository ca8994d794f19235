/**
 * AppRateLimits: the per-app overrides of RATE_LIMIT, as stored. The admin
 * API and the CLI set and clear them; gateways read them through their own
 * short-lived cache (src/gateway/request/RateLimiting.ts).
 */
import { Context, type Effect } from "effect"
import type { ServiceUnavailable } from "../domain/Errors.ts"
import type { RateLimitPolicy } from "../domain/RateLimit.ts"

/** An app's override and when it was set. */
export interface RateLimitOverride extends RateLimitPolicy {
  readonly updatedAt: Date
}

export class AppRateLimits extends Context.Service<AppRateLimits, {
  /** The app's override; undefined: the app has the default. */
  readonly get: (appId: string) => Effect.Effect<RateLimitOverride | undefined, ServiceUnavailable>
  readonly set: (appId: string, policy: RateLimitPolicy) => Effect.Effect<RateLimitOverride, ServiceUnavailable>
  /** Back to the default; nothing happens for an app without an override. */
  readonly clear: (appId: string) => Effect.Effect<void, ServiceUnavailable>
}>()("mfg/services/AppRateLimits") {}
