/**
 * How a log line renders its cause: a warning in one line (each error's name
 * and message, then those it was caused by), so that a warning repeated
 * through an outage stays short; an error with its stack traces.
 */
import { Cause, Effect, Logger } from "effect"
import { describe, expect, it } from "vitest"
import { formatLine } from "../../src/platform/telemetry/JsonLog.ts"

/** The lines `effect` logs, as formatLine writes them. */
const linesOf = async (effect: Effect.Effect<void>) => {
  const lines: Array<Record<string, unknown>> = []
  const collecting = Logger.map(formatLine, (line) => {
    lines.push(JSON.parse(line) as Record<string, unknown>)
  })
  await Effect.runPromise(effect.pipe(Effect.provide(Logger.layer([collecting]))))
  return lines
}

/** A storage outage as a library wraps it: the lost connection under the driver's error under the library's. */
const outage = () =>
  new Error("could not read messages", {
    cause: new Error("PgConnection: Failed to connect", { cause: new Error("the database did not answer within 2000 ms") })
  })

describe("JSON log lines", () => {
  it("renders a warning's cause in one line, without stack traces", async () => {
    const [line] = await linesOf(Effect.logWarning("Could not read messages from storage", Cause.fail(outage())))
    expect(line!.level).toBe("WARN")
    expect(line!.cause).toBe(
      "Error: could not read messages ← Error: PgConnection: Failed to connect ← Error: the database did not answer within 2000 ms"
    )
    expect(JSON.stringify(line).length).toBeLessThan(400)
  })

  it("renders a failure's cause and a defect's alike", async () => {
    const [failed] = await linesOf(Effect.catchCause(Effect.fail(outage()), (cause) => Effect.logWarning("failed", cause)))
    expect(failed!.cause).toMatch(/^Error: could not read messages ← .* ← Error: the database did not answer within 2000 ms$/)
    const [died] = await linesOf(Effect.catchCause(Effect.die("a plain defect"), (cause) => Effect.logWarning("died", cause)))
    expect(died!.cause).toBe("a plain defect")
  })

  it("keeps an error's stack traces", async () => {
    const [line] = await linesOf(Effect.logError("storage failed", Cause.die(outage())))
    expect(line!.level).toBe("ERROR")
    expect(String(line!.cause)).toContain("could not read messages")
    expect(String(line!.cause)).toMatch(/\n\s+at /)
  })
})
