/**
 * The configuration as the process reads it at start: values that could
 * never work stop the start with a message naming the variable.
 */
import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect, Exit } from "effect"
import { DEFAULT_MAX_BODY_BYTES, loadAppConfig } from "../../src/services/AppConfig.ts"

const load = (env: Record<string, string>) =>
  Effect.runSyncExit(loadAppConfig.pipe(Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromUnknown(env))))

const refusal = (env: Record<string, string>): string => {
  const exit = load(env)
  if (Exit.isSuccess(exit)) return assert.fail(`expected ${JSON.stringify(env)} to be refused`)
  return String(exit.cause)
}

describe("AppConfig", () => {
  it("refuses an ADMIN_TOKEN that is blank or padded with whitespace, naming it", () => {
    for (const token of [" ".repeat(16), "\t".repeat(20), " token-with-a-leading-space-0123", "token-with-a-trailing-space-0123 "]) {
      assert.include(refusal({ ADMIN_TOKEN: token }), "ADMIN_TOKEN", JSON.stringify(token))
    }
    assert.include(refusal({ ADMIN_TOKEN: " ".repeat(16) }), "ADMIN_TOKEN is blank")
    assert.include(refusal({ ADMIN_TOKEN: "short" }), "ADMIN_TOKEN must be at least 16 characters")
    assert.isTrue(Exit.isSuccess(load({ ADMIN_TOKEN: "a-good-admin-token-0123456789" })))
  })

  it("reads MAX_BODY_BYTES, 1 MiB unless set, and refuses one below a byte", () => {
    const defaults = load({})
    assert.isTrue(Exit.isSuccess(defaults) && defaults.value.maxBodyBytes === DEFAULT_MAX_BODY_BYTES)
    assert.strictEqual(DEFAULT_MAX_BODY_BYTES, 1_048_576)
    const set = load({ MAX_BODY_BYTES: "2048" })
    assert.isTrue(Exit.isSuccess(set) && set.value.maxBodyBytes === 2048)
    assert.include(refusal({ MAX_BODY_BYTES: "0" }), "MAX_BODY_BYTES")
    assert.include(refusal({ MAX_BODY_BYTES: "lots" }), "MAX_BODY_BYTES")
  })
})
