/**
 * A graceful stop times each part it releases (the `stopped` line's
 * `partsMs`), says which it still waits on, and goes on without a bounded
 * part that does not finish: the webhook delivery's cluster must never hold
 * the whole stop.
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Duration, Effect, Exit, Layer, Logger, Scope } from "effect"
import { releasedAs, ShutdownReport } from "../../src/platform/ShutdownReport.ts"

class First extends Context.Service<First, { readonly name: string }>()("test/First") {}
class Second extends Context.Service<Second, { readonly name: string }>()("test/Second") {}

/** A part whose release records its name, after `release` has run. */
const part = <I, S extends { readonly name: string }>(tag: Context.Key<I, S>, name: string, released: Array<string>, release: Effect.Effect<void>) =>
  Layer.effect(tag)(Effect.acquireRelease(Effect.succeed({ name } as S), () => Effect.andThen(release, Effect.sync(() => released.push(name)))))

/** Builds `layer` with a fresh report, closes it, and answers what the stop did. */
const stop = <A>(layer: Layer.Layer<A>) =>
  Effect.gen(function*() {
    const report = ShutdownReport.make()
    const warnings: Array<string> = []
    const logger = Logger.make<unknown, void>(({ logLevel, message }) => {
      if (logLevel === "Warn") warnings.push(String(Array.isArray(message) ? message[0] : message))
    })
    const scope = yield* Scope.make()
    yield* Layer.buildWithScope(Layer.provide(layer, Layer.succeed(ShutdownReport, report)), scope)
    const began = Date.now()
    yield* Scope.close(scope, Exit.void).pipe(Effect.provide(Logger.layer([logger])))
    return { tookMs: Date.now() - began, parts: report.parts(), warnings }
  })

describe("the parts of a graceful stop", () => {
  it.live("are released in the composition's order, each timed", () =>
    Effect.gen(function*() {
      const released: Array<string> = []
      const layer = Layer.mergeAll(
        releasedAs("second")(part(Second, "second", released, Effect.sleep(Duration.millis(30))))
      ).pipe(Layer.provideMerge(releasedAs("first")(part(First, "first", released, Effect.void))))
      const { parts, warnings } = yield* stop(layer)
      // What was built last is released first, as without the timing.
      assert.deepStrictEqual(released, ["second", "first"])
      assert.deepStrictEqual(parts.waitingOn, [])
      assert.deepStrictEqual(Object.keys(parts.durationsMs).sort(), ["first", "second"])
      assert.isAtLeast(parts.durationsMs.second!, 25)
      assert.deepStrictEqual(warnings, [])
    }))

  it.live("goes on without a bounded part past its bound, names it as still releasing, and says what that means", () =>
    Effect.gen(function*() {
      const released: Array<string> = []
      const bound = { within: Duration.millis(200), consequence: "its work resumes elsewhere" }
      const layer = releasedAs("stuck", bound)(part(Second, "stuck", released, Effect.never)).pipe(
        Layer.provideMerge(releasedAs("first")(part(First, "first", released, Effect.void)))
      )
      const { parts, tookMs, warnings } = yield* stop(layer)
      assert.isBelow(tookMs, 2_000)
      // The parts beneath it are still released.
      assert.deepStrictEqual(released, ["first"])
      assert.deepStrictEqual(parts.waitingOn, ["stuck"])
      assert.deepStrictEqual(Object.keys(parts.durationsMs), ["first"])
      assert.deepStrictEqual(warnings, ["the graceful stop goes on without stuck, still releasing after 200ms: its work resumes elsewhere"])
    }))

  it.live("waits for a bounded part that finishes within its bound", () =>
    Effect.gen(function*() {
      const released: Array<string> = []
      const bound = { within: Duration.seconds(5), consequence: "never said" }
      const { parts, warnings } = yield* stop(releasedAs("quick", bound)(part(Second, "quick", released, Effect.sleep(Duration.millis(20)))))
      assert.deepStrictEqual(released, ["quick"])
      assert.deepStrictEqual(parts.waitingOn, [])
      assert.deepStrictEqual(warnings, [])
    }))
})
