/**
 * Rate limits: a budget of calls per window for each app. The default comes
 * from RATE_LIMIT (`600/60s` unless set); an app may have an override, set
 * through the admin API or the CLI with the same `<limit>/<window>` text or
 * as `{limit, windowSeconds}`.
 */
import { Result, Schema } from "effect"

/** A budget: `limit` calls per `windowSeconds`. */
export interface RateLimitPolicy {
  readonly limit: number
  readonly windowSeconds: number
}

/** RATE_LIMIT unless set. */
export const DEFAULT_RATE_LIMIT = "600/60s"

/** The largest budget and window accepted: far above any real need, small enough for the headers and the stores. */
export const MAX_RATE_LIMIT = 1_000_000_000
export const MAX_RATE_LIMIT_WINDOW_SECONDS = 86_400

const UNIT_SECONDS: Readonly<Record<string, number>> = { s: 1, m: 60, h: 3600 }
const POLICY_TEXT = /^([1-9][0-9]{0,9})\/([1-9][0-9]{0,5})([smh])$/

/** `600/60s`, `100/1m`, `5000/1h` → the policy; anything else: why not. */
export const parseRateLimit = (text: string): Result.Result<RateLimitPolicy, string> => {
  const match = POLICY_TEXT.exec(text.trim())
  if (match === null) return Result.fail(`"${text}" is not <limit>/<window> such as 600/60s, 100/1m or 5000/1h`)
  const limit = Number(match[1])
  const windowSeconds = Number(match[2]) * UNIT_SECONDS[match[3]!]!
  if (limit > MAX_RATE_LIMIT) return Result.fail(`the limit of "${text}" is above ${MAX_RATE_LIMIT}`)
  if (windowSeconds > MAX_RATE_LIMIT_WINDOW_SECONDS) return Result.fail(`the window of "${text}" is longer than 24h`)
  return Result.succeed({ limit, windowSeconds })
}

/** The policy as RATE_LIMIT would say it: `600/60s`. */
export const formatRateLimit = (policy: RateLimitPolicy) => `${policy.limit}/${policy.windowSeconds}s`

/** A `<limit>/<window>` text (the CLI's argument). */
export const RateLimitText = Schema.String.check(
  Schema.makeFilter((text: string) => {
    const parsed = parseRateLimit(text)
    return Result.isSuccess(parsed) ? true : parsed.failure
  })
).annotate({ description: "A budget as <limit>/<window>: 600/60s, 100/1m, 5000/1h", examples: ["100/60s"] })

/** The body of `PUT /api/v1/app/{appId}/rate-limit`. */
export const RateLimitSetting = Schema.Struct({
  limit: Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: MAX_RATE_LIMIT })).annotate({
    description: "Calls allowed in one window"
  }),
  windowSeconds: Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: MAX_RATE_LIMIT_WINDOW_SECONDS })).annotate({
    description: "The window, in seconds (at most 86400)"
  })
}).annotate({ examples: [{ limit: 100, windowSeconds: 60 }] })
export type RateLimitSetting = typeof RateLimitSetting.Type

/** The budget in force for an app, and where it comes from. */
export const AppRateLimit = Schema.Struct({
  appId: Schema.String,
  source: Schema.Literals(["override", "default"]).annotate({
    description: "`override`: set for this app; `default`: RATE_LIMIT"
  }),
  limit: Schema.NullOr(Schema.Int).annotate({ description: "Calls allowed in one window; null: no limit (RATE_LIMIT=off)" }),
  windowSeconds: Schema.NullOr(Schema.Int),
  /** When the override was last set (null for the default). */
  updatedAt: Schema.NullOr(Schema.String)
})
export type AppRateLimit = typeof AppRateLimit.Type

/** The view of an app's budget: its override, else the default (undefined: RATE_LIMIT=off). */
export const appRateLimitView = (
  appId: string,
  override: (RateLimitPolicy & { readonly updatedAt: Date }) | undefined,
  fallback: RateLimitPolicy | undefined
): AppRateLimit =>
  override !== undefined
    ? { appId, source: "override", limit: override.limit, windowSeconds: override.windowSeconds, updatedAt: override.updatedAt.toISOString() }
    : { appId, source: "default", limit: fallback?.limit ?? null, windowSeconds: fallback?.windowSeconds ?? null, updatedAt: null }
