/**
 * The sampler of OTEL_TRACES_SAMPLER (the OpenTelemetry SDK environment
 * specification's): which spans are recorded and exported.
 *
 * Effect decides a span's `sampled` from its parent (a span under an
 * unsampled one is unsampled, a caller's `traceparent` flags included) and
 * otherwise records it: `parentbased_always_on`, the default. The other
 * samplers are applied here, around the exporting tracer:
 *
 * - `always_on`, `always_off`: every span, or none, whatever the parent;
 * - `traceidratio`: a span is kept when its trace id says so, so that every
 *   span of a trace, in every service sampling by the same rule, makes the
 *   same decision: the trace id's lower 56 bits (its random part in W3C
 *   Trace Context level 2) read as a number below `ratio` × 2^56;
 * - `parentbased_*`: a span with a parent (in the process, or the caller's)
 *   follows it; a new trace is decided by the named sampler.
 *
 * A span that is not kept is a non-recording span with the ids the exporting
 * tracer gave it: its trace context still goes on (`traceparent` flags 00),
 * and nothing of it is exported.
 */
import { type Context, type Exit, Option, Tracer } from "effect"
import type { SamplerName } from "../../services/Settings.ts"

const RANDOM_BITS = 56n

/** Whether the trace `traceId` is kept at `ratio` (0–1). */
export const keepsTrace = (traceId: string, ratio: number): boolean => {
  if (ratio >= 1) return true
  if (ratio <= 0) return false
  const threshold = BigInt(Math.floor(ratio * 2 ** Number(RANDOM_BITS)))
  return BigInt(`0x${traceId.padStart(32, "0").slice(-14)}`) < threshold
}

/** A span that records nothing, with the trace and span ids of `span` (which is dropped: never ended, never exported). */
class NonRecordingSpan implements Tracer.Span {
  readonly _tag = "Span"
  readonly sampled = false
  readonly name: string
  readonly spanId: string
  readonly traceId: string
  readonly parent: Option.Option<Tracer.AnySpan>
  readonly annotations: Context.Context<never>
  readonly links: ReadonlyArray<Tracer.SpanLink>
  readonly kind: Tracer.SpanKind
  readonly attributes = new Map<string, unknown>()
  status: Tracer.SpanStatus
  constructor(span: Tracer.Span) {
    this.name = span.name
    this.spanId = span.spanId
    this.traceId = span.traceId
    this.parent = span.parent
    this.annotations = span.annotations
    this.links = span.links
    this.kind = span.kind
    this.status = span.status
  }
  end(endTime: bigint, exit: Exit.Exit<unknown, unknown>): void {
    if (this.status._tag === "Started") this.status = { _tag: "Ended", startTime: this.status.startTime, endTime, exit }
  }
  attribute(): void {}
  event(): void {}
  addLinks(): void {}
}

type Decision = "parent" | "keep" | "drop" | "ratio"

/** What `sampler` decides for a span with or without a parent (`ratio`: by its trace id). */
const decisionOf = (sampler: SamplerName, hasParent: boolean): Decision => {
  switch (sampler) {
    case "always_on":
      return "keep"
    case "always_off":
      return "drop"
    case "traceidratio":
      return "ratio"
    case "parentbased_always_on":
      return hasParent ? "parent" : "keep"
    case "parentbased_always_off":
      return hasParent ? "parent" : "drop"
    case "parentbased_traceidratio":
      return hasParent ? "parent" : "ratio"
  }
}

/** `tracer`, its spans sampled by `sampler` (`ratio` for the trace id ratio samplers); the default sampler leaves it as it is. */
export const sampledTracer = (tracer: Tracer.Tracer, sampler: SamplerName, ratio: number): Tracer.Tracer => {
  if (sampler === "parentbased_always_on") return tracer
  return Tracer.make({
    context: tracer.context,
    span(options) {
      const decision = decisionOf(sampler, Option.isSome(options.parent))
      if (decision === "parent") return tracer.span(options)
      if (decision === "drop") return tracer.span({ ...options, sampled: false })
      if (decision === "keep") return tracer.span({ ...options, sampled: true })
      // A span with a parent has its trace id already; a new trace's is drawn by the exporting tracer, then judged.
      if (Option.isSome(options.parent)) return tracer.span({ ...options, sampled: keepsTrace(options.parent.value.traceId, ratio) })
      const span = tracer.span({ ...options, sampled: true })
      return keepsTrace(span.traceId, ratio) ? span : new NonRecordingSpan(span)
    }
  })
}
