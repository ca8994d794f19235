/**
 * What the HTTP and database semantic conventions ask of a span that
 * Effect's OTLP tracer does not do, applied to the spans of each export
 * batch before it is encoded (the data Effect hands its serializer, never
 * the encoded bytes):
 *
 * - a server span is named `{method} {http.route}` (`GET /v1/customer/{id}`)
 *   once the route is known: Effect names it when the request arrives, by its
 *   method alone. Without a route (an unknown path) the name stays the method;
 * - a span that did not fail leaves its status unset: Effect sets `Ok` on
 *   every span that succeeded, which the conventions leave to applications,
 *   so a 4xx server span (which did not fail: the client erred) stays unset
 *   and only a 5xx, or a failed operation, is `Error`.
 */
import { Effect, Layer } from "effect"
import { OtlpSerialization, type OtlpTracer } from "effect/observability"

type TraceData = OtlpTracer.TraceData

type ResourceSpan = TraceData["resourceSpans"][number]
type ScopeSpan = ResourceSpan["scopeSpans"][number]
type OtlpSpan = ScopeSpan["spans"][number]

const SERVER = 2
const STATUS_OK = 1
const STATUS_UNSET = 0 as const

const stringAttribute = (span: OtlpSpan, key: string) => {
  const found = span.attributes.find((attribute) => attribute.key === key)
  return typeof found?.value.stringValue === "string" ? found.value.stringValue : undefined
}

const shaped = (span: OtlpSpan): OtlpSpan => {
  const route = span.kind === SERVER ? stringAttribute(span, "http.route") : undefined
  const method = route === undefined ? undefined : stringAttribute(span, "http.request.method")
  const name = method === undefined ? span.name : `${method} ${route}`
  const status = span.status.code === STATUS_OK ? { code: STATUS_UNSET } : span.status
  return name === span.name && status === span.status ? span : { ...span, name, status }
}

/** `data` with its spans shaped as above. */
export const shapeTraces = (data: TraceData): TraceData => ({
  resourceSpans: data.resourceSpans.map((resource) => ({
    ...resource,
    scopeSpans: resource.scopeSpans.map((scope) => ({ ...scope, spans: scope.spans.map(shaped) }))
  }))
})

/** `serialization`, shaping the spans of each batch first. */
export const shapingSpans = (serialization: Layer.Layer<OtlpSerialization.OtlpSerialization>) =>
  Layer.effect(
    OtlpSerialization.OtlpSerialization,
    Effect.map(Effect.service(OtlpSerialization.OtlpSerialization), (encode) => ({
      ...encode,
      traces: (data: TraceData) => encode.traces(shapeTraces(data))
    }))
  ).pipe(Layer.provide(serialization))
