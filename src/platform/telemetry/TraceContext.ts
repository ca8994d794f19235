/**
 * The W3C trace context a request arrived with: the `traceparent` (and
 * `tracestate`) HTTP headers, or, for MCP, the same keys in `params._meta`
 * (MCP 2026-07-28, "OpenTelemetry trace context"). The HTTP header wins when
 * both are present.
 *
 * It serves three purposes, whether or not tracing is on: the trace id of
 * the request log line, the parent of the MCP span when the trace came in
 * `_meta`, and what DownstreamHttp forwards to a remote engine (unchanged
 * when tracing is off; with tracing on the HTTP client replaces the
 * `traceparent` with its own span's, in the same trace).
 */
import { Context, Tracer } from "effect"

export interface IncomingTrace {
  /** The header value as received (validated, lower case). */
  readonly traceparent: string
  readonly tracestate: string | undefined
  readonly traceId: string
  /** The caller's span, the parent of ours. */
  readonly spanId: string
  readonly sampled: boolean
}

/** version-traceid-parentid-flags (W3C Trace Context level 1; later versions may append fields). */
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/
const ZERO_TRACE = "00000000000000000000000000000000"
const ZERO_SPAN = "0000000000000000"
/** A bound on what is carried along: the W3C limit of 32 list members fits in it. */
const MAX_TRACESTATE = 512

/** A valid trace context, or undefined (absent, malformed, the forbidden version ff, all-zero ids). */
export const parseTraceContext = (traceparent: unknown, tracestate?: unknown): IncomingTrace | undefined => {
  if (typeof traceparent !== "string" || traceparent.length > 256) return undefined
  const value = traceparent.trim().toLowerCase()
  const match = TRACEPARENT.exec(value)
  if (match === null) return undefined
  const [, version, traceId, spanId, flags, rest] = match
  if (version === "ff" || (version === "00" && rest !== undefined)) return undefined
  if (traceId === ZERO_TRACE || spanId === ZERO_SPAN) return undefined
  const state = typeof tracestate === "string" && tracestate.length > 0 && tracestate.length <= MAX_TRACESTATE
    ? tracestate
    : undefined
  return {
    traceparent: value,
    tracestate: state,
    traceId: traceId!,
    spanId: spanId!,
    sampled: (parseInt(flags!, 16) & 1) === 1
  }
}

/** The trace context of HTTP request headers. */
export const traceFromHeaders = (headers: Readonly<Record<string, string | undefined>>): IncomingTrace | undefined => {
  const traceparent = headers["traceparent"]
  return traceparent === undefined ? undefined : parseTraceContext(traceparent, headers["tracestate"])
}

/** The trace context of an MCP request's `params._meta`, if it carries one. */
export const traceFromMcpParams = (params: unknown): IncomingTrace | undefined => {
  if (typeof params !== "object" || params === null) return undefined
  const meta = (params as { readonly _meta?: unknown })._meta
  if (typeof meta !== "object" || meta === null) return undefined
  const { traceparent, tracestate } = meta as { readonly traceparent?: unknown; readonly tracestate?: unknown }
  return parseTraceContext(traceparent, tracestate)
}

/** The caller's span, as the parent of a span of ours. */
export const parentSpanOf = (trace: IncomingTrace): Tracer.ExternalSpan =>
  Tracer.externalSpan({ traceId: trace.traceId, spanId: trace.spanId, sampled: trace.sampled })

/**
 * The trace context of the request being served, for what is called on its
 * behalf (DownstreamHttp). Provided by the request guard only when the
 * request carried one, so the usual call pays nothing.
 */
export const IncomingTraceContext = Context.Reference<IncomingTrace | undefined>("mfg/telemetry/IncomingTraceContext", {
  defaultValue: () => undefined
})
