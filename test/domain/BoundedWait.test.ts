/**
 * `withinMillis` answers what `Effect.timeoutOrElse` answers, case for case:
 * an effect that ends at once (its value or its failure), one that ends
 * within the bound, one past it (the fallback; the effect interrupted once
 * the caller ends, not before), and a caller interrupted while it waits.
 */
import { Deferred, Effect, Exit, Fiber } from "effect"
import { describe, expect, it } from "vitest"
import { withinMillis } from "../../src/domain/BoundedWait.ts"

const fallback = () => Effect.fail("past the bound" as const)

/** Both ways of bounding `self` by `millis`: ours and Effect's own. */
const bothWays = <A, E>(self: Effect.Effect<A, E>, millis: number) => ({
  ours: withinMillis(self, millis, fallback),
  effects: Effect.timeoutOrElse(self, { duration: millis, orElse: fallback })
})

const exitsOf = async <A, E>(self: Effect.Effect<A, E>, millis: number) => {
  const { effects, ours } = bothWays(self, millis)
  return { ours: await Effect.runPromise(Effect.exit(ours)), effects: await Effect.runPromise(Effect.exit(effects)) }
}

describe("withinMillis", () => {
  it("answers an effect that ends at once with its value or its failure", async () => {
    const succeeded = await exitsOf(Effect.succeed(42), 50)
    expect(succeeded.ours).toEqual(Exit.succeed(42))
    expect(succeeded.ours).toEqual(succeeded.effects)
    const failed = await exitsOf(Effect.fail("refused" as const), 50)
    expect(failed.ours).toEqual(Exit.fail("refused"))
    expect(failed.ours).toEqual(failed.effects)
    // Ended on its first run but not an Exit: run in a fiber of its own, with the same answer.
    const synchronous = await exitsOf(Effect.sync(() => 7), 50)
    expect(synchronous.ours).toEqual(Exit.succeed(7))
    expect(synchronous.ours).toEqual(synchronous.effects)
  })

  it("answers an effect that ends within the bound with its value", async () => {
    const { effects, ours } = await exitsOf(Effect.as(Effect.sleep(10), "late but in time"), 500)
    expect(ours).toEqual(Exit.succeed("late but in time"))
    expect(ours).toEqual(effects)
  })

  it("answers the fallback past the bound, and interrupts the effect once the caller has ended", async () => {
    const program = Effect.gen(function*() {
      const started = yield* Deferred.make<void>()
      const interrupted = yield* Deferred.make<void>()
      const never = Effect.andThen(Deferred.succeed(started, undefined), Effect.never).pipe(
        Effect.onInterrupt(() => Deferred.succeed(interrupted, undefined))
      )
      const startedAt = Date.now()
      const exit = yield* Effect.exit(withinMillis(never, 30, fallback))
      const waited = Date.now() - startedAt
      // Still running here: the caller has not ended yet.
      const interruptedBefore = yield* Deferred.isDone(interrupted)
      return { exit, waited, interruptedBefore, interrupted }
    })
    const { exit, interrupted, interruptedBefore, waited } = await Effect.runPromise(program)
    expect(exit).toEqual(Exit.fail("past the bound"))
    expect(waited).toBeGreaterThanOrEqual(25)
    expect(interruptedBefore).toBe(false)
    // The caller's fiber has ended: the effect was interrupted with it.
    expect(await Effect.runPromise(Deferred.isDone(interrupted))).toBe(true)
  })

  it("stops waiting, its timer included, when the caller is interrupted", async () => {
    const program = Effect.gen(function*() {
      const interrupted = yield* Deferred.make<void>()
      const waiting = yield* Effect.forkChild(
        withinMillis(Effect.never.pipe(Effect.onInterrupt(() => Deferred.succeed(interrupted, undefined))), 60_000, fallback)
      )
      yield* Effect.sleep(10)
      yield* Fiber.interrupt(waiting)
      return yield* Deferred.isDone(interrupted)
    })
    expect(await Effect.runPromise(program)).toBe(true)
  })
})
