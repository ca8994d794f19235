/**
 * Telemetry of a process (the gateway, or the engine served on its own):
 *
 * - traces and metrics exported over OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT
 *   is set (`<endpoint>/v1/traces`, `<endpoint>/v1/metrics`;
 *   OTEL_EXPORTER_OTLP_PROTOCOL `http/protobuf`, the default, or `http/json`;
 *   OTEL_SERVICE_NAME; OTEL_METRIC_EXPORT_INTERVAL in ms, default 10000).
 *   Without an exporter, tracing is switched off (no span is made) and the
 *   metric instruments are no-ops, so neither costs anything on the request
 *   path;
 * - two durations are measured by spans already, and recorded from them when
 *   the span ends: a Downstream call (the `Downstream.call` span, with its
 *   operation and, when it failed, its `error.source`) and the time an SQL
 *   statement waited for a connection (effect/sql notes it on the
 *   statement's span when its span propagation is on, which it is with an
 *   exporter). Tracing and metrics are on together (one endpoint), so
 *   neither metric misses a call;
 * - logs as JSON lines on stdout (telemetry/JsonLog.ts), whatever the exporter.
 *
 * Spans never carry a secret: Effect records no request header unless told
 * to, and redacts `authorization` and `x-admin-token` if it ever does.
 */
import { Effect, Layer, Option, References, Tracer } from "effect"
import { FetchHttpClient, Headers } from "effect/http"
import { OtlpExporter, OtlpMetrics, OtlpSerialization, OtlpTracer } from "effect/observability"
import { Statement } from "effect/sql"
import { readSettings } from "../domain/Setting.ts"
import { TELEMETRY_SETTINGS } from "../services/Settings.ts"
import { Instruments, makeInstruments, type TelemetryInstruments } from "./telemetry/Instruments.ts"
import { JsonLoggerLive } from "./telemetry/JsonLog.ts"

const REDACTED_HEADERS = ["authorization", "x-admin-token", "cookie", "set-cookie", "x-api-key"]

/** OTEL_*, as src/services/Settings.ts defines them (AppConfig has checked them with every other variable). */
const settings = readSettings(TELEMETRY_SETTINGS).pipe(Effect.orDie)

/** The span of one Downstream call (ForwardHandlers, McpToolCalls): `downstream.operation`, and `error.source` when it failed. */
const DOWNSTREAM_SPAN = "Downstream.call"
/** What effect/sql notes on a statement's span: milliseconds from the statement's start to its connection. */
const CONNECTION_WAIT_MS = "db.client.connection.wait_time_ms"

const stringOf = (value: unknown) => typeof value === "string" ? value : undefined

/** Records what an ended span measured: a Downstream call's duration, a statement's wait for a connection. */
const recordSpan = (instruments: TelemetryInstruments, span: Tracer.Span, seconds: number) => {
  if (span.name === DOWNSTREAM_SPAN) {
    const operation = stringOf(span.attributes.get("downstream.operation"))
    if (operation !== undefined) instruments.downstreamCall(operation, stringOf(span.attributes.get("error.source")), seconds)
    return
  }
  const waitMs = span.attributes.get(CONNECTION_WAIT_MS)
  if (typeof waitMs === "number") instruments.connectionWait(stringOf(span.attributes.get("db.client.connection.pool.name")), waitMs / 1000)
}

/**
 * `tracer`, recording the Downstream call and SQL statement spans (client
 * spans) into `instruments` as they end; any other span is `tracer`'s own,
 * untouched.
 */
const measuringSpans = (tracer: Tracer.Tracer, instruments: TelemetryInstruments): Tracer.Tracer =>
  Tracer.make({
    context: tracer.context,
    span(options) {
      const span = tracer.span(options)
      if (options.name !== DOWNSTREAM_SPAN && options.kind !== "client") return span
      const end = span.end
      span.end = (endTime, exit) => {
        end.call(span, endTime, exit)
        recordSpan(instruments, span, Number(endTime - options.startTime) / 1e9)
      }
      return span
    }
  })

/** Telemetry for a process whose `service.name` is `defaultServiceName` unless OTEL_SERVICE_NAME says otherwise. */
export const telemetryFor = (defaultServiceName: string) =>
  Layer.unwrap(Effect.gen(function*() {
    const config = yield* settings
    const always = Layer.merge(Layer.succeed(Headers.CurrentRedactedNames, REDACTED_HEADERS), JsonLoggerLive)
    if (Option.isNone(config.endpoint)) return Layer.merge(always, Layer.succeed(References.TracerEnabled, false))

    const base = config.endpoint.value.replace(/\/+$/, "")
    const resource = { serviceName: Option.getOrElse(config.serviceName, () => defaultServiceName), serviceVersion: "1.0.0" }
    // The instruments record into the default metric registry, the one the exporter snapshots.
    const instruments = makeInstruments(yield* Effect.context<never>())
    // OtlpTracer.layer, its tracer measuring the spans that time what a metric reports.
    const tracer = Layer.effect(
      Tracer.Tracer,
      Effect.map(OtlpTracer.make({ url: `${base}/v1/traces`, resource }), (otlp) => measuringSpans(otlp, instruments))
    ).pipe(Layer.provideMerge(OtlpExporter.layerFlusher))
    const exporters = Layer.merge(
      tracer,
      OtlpMetrics.layer({ url: `${base}/v1/metrics`, resource, exportInterval: config.metricIntervalMs })
    ).pipe(
      Layer.provide(config.protocol === "http/json" ? OtlpSerialization.layerJson : OtlpSerialization.layerProtobuf),
      Layer.provide(FetchHttpClient.layer)
    )
    // A statement's span then notes how long it waited for a connection (and parents what runs under it).
    const connectionWaits = Layer.succeed(Statement.SpanPropagationEnabled, true)
    return Layer.mergeAll(exporters, Layer.succeed(Instruments, instruments), connectionWaits, always)
  }))

/** The gateway's telemetry (`service.name` mfg-public-api by default). */
export const TelemetryLive = telemetryFor("mfg-public-api")
