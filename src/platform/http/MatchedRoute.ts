/**
 * What the router does around the handler of a route it matched, for a
 * request answered in front of it (RecordReadDirect, McpToolCallDirect): the
 * route on the request's server span (when it is traced), errors reported,
 * and the handler interruptible.
 */
import { Context, Effect, type Fiber, Tracer } from "effect"

export const asMatchedRoute = <A, E, R>(fiber: Fiber.Fiber<unknown, unknown>, route: string, handler: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> => {
  if (fiber.getRef(Tracer.Tracer) !== Tracer.nativeTracer) {
    const span = Context.getOrUndefined(fiber.context, Tracer.ParentSpan)
    if (span !== undefined && span._tag === "Span" && span.sampled) span.attribute("http.route", route)
  }
  return handler.pipe(Effect.withErrorReporting, Effect.interruptible)
}
