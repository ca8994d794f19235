/**
 * A wait with a bound, cheaper than `Effect.timeoutOrElse` on the request path.
 *
 * `Effect.timeoutOrElse` races the effect against a sleep: two fibers forked,
 * a timer set, and the sleeping fiber interrupted when the call ends. Every
 * authenticated call waits three times with a bound (its secret, its meter
 * receipt, its budget), and those races cost about a tenth of the service's
 * CPU per read (bench/README.md, "Bounded waits without a race"). Here an
 * effect that is already an Exit (a remembered secret, a budget counted in
 * memory) is its own answer, with no fiber at all; any other runs in one
 * forked fiber, and when it has ended by the time it yields its exit is the
 * answer, with no timer; otherwise one timer bounds the wait. As with
 * `timeoutOrElse`, an effect past its bound is left to end in the background:
 * it is interrupted when the calling fiber ends.
 */
import { Effect, Exit, type Fiber } from "effect"
import { dual } from "effect/Function"

/** The answer of `fiber`, or `orElse`'s once `millis` have passed without one. */
const awaitWithin = <A, E, A2, E2, R2>(
  fiber: Fiber.Fiber<A, E>,
  millis: number,
  orElse: () => Effect.Effect<A2, E2, R2>
): Effect.Effect<A | A2, E | E2, R2> => {
  const ended = fiber.pollUnsafe()
  if (ended !== undefined) return ended
  return Effect.callback<A | A2, E | E2, R2>((resume) => {
    const timer = setTimeout(() => {
      stopObserving()
      resume(orElse())
    }, millis)
    const stopObserving = fiber.addObserver((exit) => {
      clearTimeout(timer)
      resume(exit)
    })
    return Effect.sync(() => {
      clearTimeout(timer)
      stopObserving()
    })
  })
}

/**
 * `self`, or `orElse` once `millis` have passed without its end; what
 * `Effect.timeoutOrElse({ duration: millis, orElse })` answers, at the cost of
 * one fiber (none when `self` is an Exit; a timer only when `self` waits).
 */
export const withinMillis: {
  <A2, E2, R2>(
    millis: number,
    orElse: () => Effect.Effect<A2, E2, R2>
  ): <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A | A2, E | E2, R | R2>
  <A, E, R, A2, E2, R2>(
    self: Effect.Effect<A, E, R>,
    millis: number,
    orElse: () => Effect.Effect<A2, E2, R2>
  ): Effect.Effect<A | A2, E | E2, R | R2>
} = dual(
  3,
  <A, E, R, A2, E2, R2>(self: Effect.Effect<A, E, R>, millis: number, orElse: () => Effect.Effect<A2, E2, R2>) =>
    Exit.isExit(self)
      ? self
      : Effect.flatMap(Effect.forkChild(self, { startImmediately: true }), (fiber) => awaitWithin(fiber, millis, orElse))
)
