/** AppRateLimits in memory: the per-app overrides of one process, for compositions without a database. */
import { Effect, Layer } from "effect"
import { AppRateLimits, type RateLimitOverride } from "../../services/AppRateLimits.ts"

export const AppRateLimitsMemory = Layer.sync(AppRateLimits, () => {
  const overrides = new Map<string, RateLimitOverride>()
  return AppRateLimits.of({
    get: (appId) => Effect.sync(() => overrides.get(appId)),
    set: (appId, policy) =>
      Effect.sync(() => {
        const override = { ...policy, updatedAt: new Date() }
        overrides.set(appId, override)
        return override
      }),
    clear: (appId) => Effect.sync(() => void overrides.delete(appId))
  })
})
