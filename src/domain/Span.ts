/**
 * Spans that cost nothing when tracing is off.
 *
 * With tracing off (no exporter), `Effect.withSpan` still makes a no-op span,
 * registers its end on the fiber and provides it as the parent span, which
 * rebuilds the fiber's context cache on the way in and again on the way out.
 * On the request path that was a measurable share of every call, so `traced`
 * asks the fiber first and leaves the effect alone when tracing is off.
 *
 * No span captures a stack trace: its name says where it is, and a stack
 * trace per call would cost more than the span.
 */
import { Effect, References, type Tracer } from "effect"

const NO_STACK = { captureStackTrace: false } as const

/** `Effect.withSpan(name, options)`, only when tracing is on. */
export const traced = (name: string, options?: Tracer.SpanOptionsNoTrace) => <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.withFiber((fiber) => fiber.getRef(References.TracerEnabled) ? Effect.withSpan(name, options, NO_STACK)(effect) : effect)
