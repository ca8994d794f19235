/**
 * The service's metrics, exported over OTLP (`<endpoint>/v1/metrics`) when
 * OTEL_EXPORTER_OTLP_ENDPOINT is set:
 *
 * | metric | kind, unit | attributes |
 * |---|---|---|
 * | `http.server.request.duration` | histogram, s | `http.request.method`, `http.route` (when known), `http.response.status_code` |
 * | `auth.failures` | counter | `auth.failure.cause` |
 * | `meter.flush.size` | histogram, calls | none |
 * | `meter.flush.duration` | histogram, s | none |
 * | `downstream.errors` | counter | `error.source`, `http.response.status_code` |
 * | `downstream.call.duration` | histogram, s | `downstream.operation`; `error.source` when it failed |
 * | `db.client.connection.open` | gauge, {connection} | `db.client.connection.pool.name` |
 * | `db.client.connection.max` | gauge, {connection} | `db.client.connection.pool.name` |
 * | `db.client.connection.wait_time` | histogram, s | `db.client.connection.pool.name` |
 * | `telemetry.export.failures` | counter | `signal` (`traces`, `metrics`), `error.type` (status code, `timeout`, `unreachable`) |
 *
 * The request count is the duration histogram's count (per route, method
 * and status), as the OpenTelemetry HTTP conventions do. The downstream call
 * duration and the connection wait are read from the spans that already
 * measure them (Telemetry.ts), the pool's connections from its sockets
 * (storage/PoolMetrics.ts). The rate limits' counters are RateLimiting's,
 * the model files' the engine's (src/engine/geometry/ModelMetrics.ts).
 *
 * Without an exporter the instruments are no-ops (`InstrumentsNoOp`),
 * so the request path does no metric work at all. With one, each series is
 * an Effect Metric created once per attribute set and updated in place: a
 * string key and two map lookups per measurement.
 */
import { Context, Layer, Metric } from "effect"

export interface TelemetryInstruments {
  /** Whether measurements are kept (an exporter is configured). */
  readonly enabled: boolean
  readonly request: (method: string, route: string | undefined, status: number, seconds: number) => void
  /** An authentication failure, by its internal cause (never in a response). */
  readonly authFailure: (cause: string) => void
  readonly meterFlush: (calls: number, seconds: number) => void
  /** A Downstream call that failed, by the `error.source` it names. */
  readonly downstreamError: (source: string, status: number) => void
  /** A Downstream call, succeeded (`errorSource` undefined) or failed, and how long it took. */
  readonly downstreamCall: (operation: string, errorSource: string | undefined, seconds: number) => void
  /** How long an SQL statement waited for a connection of `pool` (undefined: a pool without a name). */
  readonly connectionWait: (pool: string | undefined, seconds: number) => void
  /** The connections `pool` holds open now. */
  readonly poolConnections: (pool: string, open: number) => void
  /** The most connections `pool` opens. */
  readonly poolMax: (pool: string, max: number) => void
  /** An OTLP export request of `signal` that failed, by `error.type`. */
  readonly exportFailure: (signal: string, errorType: string) => void
}

const ignore = () => {}

export const NO_INSTRUMENTS: TelemetryInstruments = {
  enabled: false,
  request: ignore,
  authFailure: ignore,
  meterFlush: ignore,
  downstreamError: ignore,
  downstreamCall: ignore,
  connectionWait: ignore,
  poolConnections: ignore,
  poolMax: ignore,
  exportFailure: ignore
}

/** The instruments in use: recording when TelemetryLive configured an exporter, else no-ops. */
export class Instruments extends Context.Service<Instruments, TelemetryInstruments>()("mfg/telemetry/Instruments") {}

/** Instruments that keep nothing: a process without an exporter, a CLI command, a test. */
export const InstrumentsNoOp = Layer.succeed(Instruments, NO_INSTRUMENTS)

/** Request durations, in seconds: the OpenTelemetry HTTP semantic conventions' buckets. */
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10]
/** Meter flush latency, in seconds: a flush is one INSERT, usually a few milliseconds. */
const FLUSH_DURATION_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5]
/** Calls per flush (group commit): 1 when idle, more under load. */
const FLUSH_SIZE_BUCKETS = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]
/** Waiting for a connection, in seconds: none while the pool has one free, a connection's opening when it has not. */
const CONNECTION_WAIT_BUCKETS = [0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5]

const POOL_NAME = "db.client.connection.pool.name"

/** One Effect Metric per attribute set, made on first use. */
const seriesOf = <M>(make: (attributes: Record<string, string>) => M) => {
  const made = new Map<string, M>()
  return (key: string, attributes: () => Record<string, string>): M => {
    let metric = made.get(key)
    if (metric === undefined) {
      metric = make(attributes())
      made.set(key, metric)
    }
    return metric
  }
}

/**
 * Instruments recording into the metric registry of `context` (the one the
 * OTLP exporter snapshots). Effect reads a metric's unit from its `unit`
 * attribute, so duration and size series carry one.
 */
export const makeInstruments = (context: Context.Context<never>): TelemetryInstruments => {
  const requests = seriesOf((attributes) =>
    Metric.histogram("http.server.request.duration", {
      description: "Duration of HTTP server requests",
      boundaries: DURATION_BUCKETS,
      attributes: { unit: "s", ...attributes }
    })
  )
  const authFailures = seriesOf((attributes) =>
    Metric.counter("auth.failures", {
      description: "Authentication failures by cause (internal: every cause answers the same 401)",
      incremental: true,
      attributes
    })
  )
  const downstreamErrors = seriesOf((attributes) =>
    Metric.counter("downstream.errors", {
      description: "Failed Downstream calls by the source the error names",
      incremental: true,
      attributes
    })
  )
  const downstreamCalls = seriesOf((attributes) =>
    Metric.histogram("downstream.call.duration", {
      description: "Duration of Downstream calls (the engine, embedded or remote), by operation; error.source when one failed",
      boundaries: DURATION_BUCKETS,
      attributes: { unit: "s", ...attributes }
    })
  )
  const connectionWaits = seriesOf((attributes) =>
    Metric.histogram("db.client.connection.wait_time", {
      description: "Time an SQL statement waited for a connection of its pool (a free one, or one being opened)",
      boundaries: CONNECTION_WAIT_BUCKETS,
      attributes: { unit: "s", ...attributes }
    })
  )
  const poolOpen = seriesOf((attributes) =>
    Metric.gauge("db.client.connection.open", {
      description: "Connections the SQL pool holds open to the database (its sockets)",
      attributes: { unit: "{connection}", ...attributes }
    })
  )
  const poolMax = seriesOf((attributes) =>
    Metric.gauge("db.client.connection.max", {
      description: "The most connections the SQL pool opens",
      attributes: { unit: "{connection}", ...attributes }
    })
  )
  const exportFailures = seriesOf((attributes) =>
    Metric.counter("telemetry.export.failures", {
      description: "OTLP export requests that failed (no answer in time, no connection, or an answer other than 2xx)",
      incremental: true,
      attributes
    })
  )
  const flushSize = Metric.histogram("meter.flush.size", {
    description: "Calls written by one meter flush (group commit)",
    boundaries: FLUSH_SIZE_BUCKETS,
    attributes: { unit: "{call}" }
  })
  const flushDuration = Metric.histogram("meter.flush.duration", {
    description: "Duration of one meter flush (the INSERT every metered call waits for)",
    boundaries: FLUSH_DURATION_BUCKETS,
    attributes: { unit: "s" }
  })

  return {
    enabled: true,
    request: (method, route, status, seconds) => {
      const code = String(status)
      requests(`${method} ${code} ${route ?? ""}`, () => ({
        "http.request.method": method,
        "http.response.status_code": code,
        ...(route === undefined ? {} : { "http.route": route })
      })).updateUnsafe(seconds, context)
    },
    authFailure: (cause) => authFailures(cause, () => ({ "auth.failure.cause": cause })).updateUnsafe(1, context),
    meterFlush: (calls, seconds) => {
      flushSize.updateUnsafe(calls, context)
      flushDuration.updateUnsafe(seconds, context)
    },
    downstreamError: (source, status) => {
      const code = String(status)
      downstreamErrors(`${source} ${code}`, () => ({ "error.source": source, "http.response.status_code": code }))
        .updateUnsafe(1, context)
    },
    downstreamCall: (operation, errorSource, seconds) =>
      downstreamCalls(`${operation} ${errorSource ?? ""}`, () => ({
        "downstream.operation": operation,
        ...(errorSource === undefined ? {} : { "error.source": errorSource })
      })).updateUnsafe(seconds, context),
    connectionWait: (pool, seconds) => connectionWaits(pool ?? "", () => pool === undefined ? {} : { [POOL_NAME]: pool }).updateUnsafe(seconds, context),
    poolConnections: (pool, open) => poolOpen(pool, () => ({ [POOL_NAME]: pool })).updateUnsafe(open, context),
    poolMax: (pool, max) => poolMax(pool, () => ({ [POOL_NAME]: pool })).updateUnsafe(max, context),
    exportFailure: (signal, errorType) => exportFailures(`${signal} ${errorType}`, () => ({ signal, "error.type": errorType })).updateUnsafe(1, context)
  }
}
