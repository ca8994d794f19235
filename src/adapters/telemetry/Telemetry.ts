/**
 * Telemetry of a process (the gateway, or the engine served on its own):
 *
 * - traces and metrics exported over OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT
 *   is set and OTEL_SDK_DISABLED is not `true` (`<endpoint>/v1/traces`,
 *   `<endpoint>/v1/metrics`), configured by the OpenTelemetry SDK
 *   environment specification's variables (src/services/Settings.ts: the
 *   protocol, headers, timeouts, sampler, metric interval, resource). Without
 *   an exporter, tracing is switched off (no span is made) and the metric
 *   instruments are no-ops, so neither costs anything on the request path;
 * - the resource (telemetry/Resource.ts) names the service, its version, its
 *   namespace and this process (`service.instance.id`), so that several
 *   instances exporting to one backend are several series;
 * - two durations are measured by spans already, and recorded from them when
 *   the span ends: a Downstream call (the `Downstream.call` span, with its
 *   operation and, when it failed, its `error.source`) and the time an SQL
 *   statement waited for a connection (effect/sql notes it on the
 *   statement's span when its span propagation is on, which it is with an
 *   exporter). Tracing and metrics are on together (one endpoint), so
 *   neither metric misses a call;
 * - a failed export is counted and said at most once a minute
 *   (telemetry/ExportClient.ts);
 * - logs as JSON lines on stdout (telemetry/JsonLog.ts), whatever the exporter.
 *
 * Spans never carry a secret: Effect records no request header unless told
 * to, and redacts `authorization` and `x-admin-token` if it ever does.
 */
import { Effect, Layer, Option, References, Tracer } from "effect"
import { FetchHttpClient, Headers, HttpClient } from "effect/http"
import { OtlpExporter, OtlpMetrics, OtlpSerialization, OtlpTracer } from "effect/observability"
import { Statement } from "effect/sql"
import { readSettings } from "../../domain/Setting.ts"
import { Instruments, makeInstruments, type TelemetryInstruments } from "../../platform/telemetry/Instruments.ts"
import { InstrumentsNoOp } from "../../platform/telemetry/Instruments.ts"
import { JsonLoggerLive } from "../../platform/telemetry/JsonLog.ts"
import { SERVER_SETTINGS, TELEMETRY_SETTINGS } from "../../services/Settings.ts"
import { exportClient, exportFailureReporter, type Signal } from "./ExportClient.ts"
import { resourceOf } from "./Resource.ts"
import { sampledTracer } from "./Sampler.ts"
import { shapingSpans } from "./SpanShaping.ts"

const REDACTED_HEADERS = ["authorization", "x-admin-token", "cookie", "set-cookie", "x-api-key"]

/** OTEL_*, as src/services/Settings.ts defines them (AppConfig has checked them with every other variable). */
const settings = readSettings(TELEMETRY_SETTINGS).pipe(Effect.orDie)
/** Whether the database is the embedded one (its statements' spans name no server). */
const embedded = Effect.map(readSettings({ databaseUrl: SERVER_SETTINGS.databaseUrl }).pipe(Effect.orDie), (read) => Option.isNone(read.databaseUrl))

/** What @effect/sql-pg says of every connection: a TCP server, `localhost:5432` unless told otherwise. */
const SERVER_ATTRIBUTES: ReadonlySet<string> = new Set(["server.address", "server.port"])

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
 * The embedded database is reached over a Unix socket of DATA_DIR, not at
 * the `localhost:5432` @effect/sql-pg names on every statement's span: a
 * statement's span (one that says `db.system.name` first) keeps no
 * `server.address` or `server.port`. Other client spans (a model download)
 * keep theirs.
 */
const withoutDatabaseServer = (span: Tracer.Span) => {
  const set = span.attribute
  let statement = false
  span.attribute = (key, value) => {
    if (key === "db.system.name") statement = true
    else if (statement && SERVER_ATTRIBUTES.has(key)) return
    set.call(span, key, value)
  }
}

/**
 * `tracer`, recording the Downstream call and SQL statement spans (client
 * spans) into `instruments` as they end; any other span is `tracer`'s own,
 * untouched.
 */
const measuringSpans = (tracer: Tracer.Tracer, instruments: TelemetryInstruments, embeddedDatabase: boolean): Tracer.Tracer =>
  Tracer.make({
    context: tracer.context,
    span(options) {
      const span = tracer.span(options)
      // Statements are client spans, transactions (`sql.transaction`) internal ones.
      if (embeddedDatabase && (options.kind === "client" || options.name === "sql.transaction")) withoutDatabaseServer(span)
      if (options.name !== DOWNSTREAM_SPAN && options.kind !== "client") return span
      const end = span.end
      span.end = (endTime, exit) => {
        end.call(span, endTime, exit)
        recordSpan(instruments, span, Number(endTime - options.startTime) / 1e9)
      }
      return span
    }
  })

/** The OTLP URL of `signal` under the base endpoint, as the specification appends it. */
const signalUrl = (base: string, signal: Signal) => `${base.replace(/\/+$/, "")}/v1/${signal}`

/** Telemetry for a process whose `service.name` is `defaultServiceName` unless OTEL_SERVICE_NAME (or OTEL_RESOURCE_ATTRIBUTES) says otherwise. */
export const telemetryFor = (defaultServiceName: string) =>
  Layer.unwrap(Effect.gen(function*() {
    const config = yield* settings
    const always = Layer.merge(Layer.succeed(Headers.CurrentRedactedNames, REDACTED_HEADERS), JsonLoggerLive)
    if (Option.isNone(config.endpoint) || config.disabled) {
      return Layer.mergeAll(always, Layer.succeed(References.TracerEnabled, false), InstrumentsNoOp)
    }

    const resource = resourceOf(defaultServiceName, config)
    // The instruments record into the default metric registry, the one the exporter snapshots.
    const instruments = makeInstruments(yield* Effect.context<never>())
    const report = exportFailureReporter(instruments)
    const headers = (own: Option.Option<Readonly<Record<string, string>>>) => ({
      ...Option.getOrElse(config.headers, () => ({})),
      ...Option.getOrElse(own, () => ({}))
    })
    // Each exporter's HTTP client: bounded by its timeout, its failures counted and reported.
    const clientOf = (signal: Signal, url: string, timeoutMs: Option.Option<number>) =>
      Layer.effect(
        HttpClient.HttpClient,
        Effect.map(
          Effect.service(HttpClient.HttpClient),
          (client) => exportClient(client, { signal, url, timeoutMs: Option.getOrElse(timeoutMs, () => config.timeoutMs), report })
        )
      ).pipe(Layer.provide(FetchHttpClient.layer))

    const base = config.endpoint.value
    const tracesUrl = Option.getOrElse(config.tracesEndpoint, () => signalUrl(base, "traces"))
    const metricsUrl = Option.getOrElse(config.metricsEndpoint, () => signalUrl(base, "metrics"))
    const ratio = Option.getOrElse(config.samplerArg, () => 1)
    const embeddedDatabase = yield* embedded
    // OtlpTracer.layer, its tracer sampling (OTEL_TRACES_SAMPLER) and measuring the spans that time what a metric reports.
    const tracer = Layer.effect(
      Tracer.Tracer,
      Effect.map(
        OtlpTracer.make({ url: tracesUrl, resource, headers: headers(config.tracesHeaders) }),
        (otlp) => sampledTracer(measuringSpans(otlp, instruments, embeddedDatabase), config.sampler, ratio)
      )
    ).pipe(
      Layer.provideMerge(OtlpExporter.layerFlusher),
      Layer.provide(clientOf("traces", tracesUrl, config.tracesTimeoutMs))
    )
    const metrics = OtlpMetrics.layer({
      url: metricsUrl,
      resource,
      headers: headers(config.metricsHeaders),
      exportInterval: config.metricIntervalMs
    }).pipe(Layer.provide(clientOf("metrics", metricsUrl, config.metricsTimeoutMs)))
    const serialization = config.protocol === "http/json" ? OtlpSerialization.layerJson : OtlpSerialization.layerProtobuf
    const exporters = Layer.merge(tracer, metrics).pipe(Layer.provide(shapingSpans(serialization)))
    // A statement's span then notes how long it waited for a connection (and parents what runs under it).
    const connectionWaits = Layer.succeed(Statement.SpanPropagationEnabled, true)
    return Layer.mergeAll(exporters, Layer.succeed(Instruments, instruments), connectionWaits, always)
  }))

/** The gateway's telemetry (`service.name` mfg-public-api by default). */
export const TelemetryLive = telemetryFor("mfg-public-api")
