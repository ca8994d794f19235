/**
 * The configuration as the process reads it at start: values that could
 * never work stop the start with a message naming the variable.
 */
import { assert, describe, it } from "@effect/vitest"
import { Cause, ConfigProvider, Effect, Exit, Option } from "effect"
import type { InvalidConfig } from "../../src/domain/Errors.ts"
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
    assert.include(refusal({ ADMIN_TOKEN: " ".repeat(16) }), "ADMIN_TOKEN=(secret, not shown) is invalid: it is blank")
    const short = refusal({ ADMIN_TOKEN: "short-secret" })
    assert.include(short, "ADMIN_TOKEN=(secret, not shown) is invalid: it must be at least 16 characters")
    assert.notInclude(short, "short-secret")
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

  it("reads every variable whichever others are set, and names every invalid one with its value and what it must be", () => {
    const exit = load({ METER_FLUSH_WINDOW_MS: "-5", DOWNSTREAM_TIMEOUT_MS: "ten", PORT: "99999", MODEL_FETCH_TIMEOUT: "soon" })
    assert.isTrue(Exit.isFailure(exit))
    const error = Exit.isFailure(exit) ? Option.getOrUndefined(Cause.findErrorOption(exit.cause)) as InvalidConfig : undefined
    assert.deepStrictEqual(error?.problems?.map((problem) => problem.variable), [
      "PORT",
      "DOWNSTREAM_TIMEOUT_MS",
      "METER_FLUSH_WINDOW_MS",
      "MODEL_FETCH_TIMEOUT"
    ])
    const messages = error?.problems?.map((problem) => problem.message) ?? []
    assert.include(messages, "PORT=\"99999\" is invalid: must be integer (0–65535), not 99999")
    assert.include(messages, "DOWNSTREAM_TIMEOUT_MS=\"ten\" is invalid: must be integer, ms (1–600000)")
    assert.include(messages, "METER_FLUSH_WINDOW_MS=\"-5\" is invalid: must be integer, ms (0–1000), not -5")
  })

  it("takes a variable set to the empty string as unset", () => {
    const exit = load({ PORT: "", ADMIN_TOKEN: "", DATABASE_URL: "", REQUEST_LOG: "" })
    assert.isTrue(Exit.isSuccess(exit))
    if (Exit.isSuccess(exit)) {
      assert.strictEqual(exit.value.port, 8080)
      assert.isTrue(Option.isNone(exit.value.adminToken) && Option.isNone(exit.value.databaseUrl))
      assert.isTrue(exit.value.requestLog)
    }
  })
})
