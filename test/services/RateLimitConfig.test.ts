/**
 * RATE_LIMIT and REDIS_URL as the process reads them at start: the default
 * budget, `off`, the `<limit>/<window>` forms, and refusals naming the variable.
 */
import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect, Exit, Option, Redacted, Result } from "effect"
import { formatRateLimit, parseRateLimit } from "../../src/domain/RateLimit.ts"
import { loadAppConfig } from "../../src/services/AppConfig.ts"

const load = (env: Record<string, string>) =>
  Effect.runSyncExit(loadAppConfig.pipe(Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromUnknown(env))))

const loaded = (env: Record<string, string>) => {
  const exit = load(env)
  if (Exit.isFailure(exit)) return assert.fail(`expected ${JSON.stringify(env)} to load: ${String(exit.cause)}`)
  return exit.value
}

const refusal = (env: Record<string, string>): string => {
  const exit = load(env)
  if (Exit.isSuccess(exit)) return assert.fail(`expected ${JSON.stringify(env)} to be refused`)
  return String(exit.cause)
}

describe("Rate limit configuration", () => {
  it("is 600 calls per 60 s unless set; `off` is no limit", () => {
    assert.deepStrictEqual(loaded({}).rateLimit, { limit: 600, windowSeconds: 60 })
    assert.isUndefined(loaded({ RATE_LIMIT: "off" }).rateLimit)
    assert.isUndefined(loaded({ RATE_LIMIT: "OFF" }).rateLimit)
  })

  it("reads <limit>/<window> with the window in seconds, minutes or hours", () => {
    assert.deepStrictEqual(loaded({ RATE_LIMIT: "100/1m" }).rateLimit, { limit: 100, windowSeconds: 60 })
    assert.deepStrictEqual(loaded({ RATE_LIMIT: "5000/1h" }).rateLimit, { limit: 5000, windowSeconds: 3600 })
    assert.deepStrictEqual(loaded({ RATE_LIMIT: " 3/10s " }).rateLimit, { limit: 3, windowSeconds: 10 })
    assert.strictEqual(formatRateLimit({ limit: 100, windowSeconds: 60 }), "100/60s")
  })

  it("refuses anything else, naming RATE_LIMIT", () => {
    for (const text of ["lots", "600", "600/60", "0/60s", "-1/60s", "1.5/60s", "600/0s", "600/60d", "10/25h", "2000000000/60s"]) {
      assert.include(refusal({ RATE_LIMIT: text }), "RATE_LIMIT", text)
      assert.isTrue(Result.isFailure(parseRateLimit(text)), text)
    }
  })

  it("reads REDIS_URL as a secret, and refuses one that is not a redis URL", () => {
    const url = loaded({ REDIS_URL: "redis://:password@cache.internal:6379/0" }).redisUrl
    assert.isTrue(Option.isSome(url) && Redacted.value(url.value) === "redis://:password@cache.internal:6379/0")
    assert.notInclude(String(url), "password")
    assert.isTrue(Option.isNone(loaded({}).redisUrl))
    assert.include(refusal({ REDIS_URL: "cache.internal:6379" }), "REDIS_URL")
    const wrongScheme = refusal({ REDIS_URL: "https://:hunter2@cache.internal" })
    assert.include(wrongScheme, "REDIS_URL=(secret, not shown) is invalid: must be a redis:// or rediss:// URL")
    assert.notInclude(wrongScheme, "hunter2")
  })
})
