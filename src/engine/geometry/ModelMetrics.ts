/**
 * The model files' metrics, recorded with Effect's Metric into the
 * process's metric registry: the one the OTLP exporter of whichever process
 * runs the engine (the gateway, or `npm run engine`) sends when
 * OTEL_EXPORTER_OTLP_ENDPOINT is set. Without an exporter they are kept in
 * memory and never read; a download or an analysis takes milliseconds to
 * seconds, so a measurement costs nothing beside it.
 *
 * | metric | kind, unit | attributes |
 * |---|---|---|
 * | `model.download.duration` | histogram, s | `error.type` when it failed |
 * | `model.download.size` | histogram, By | none: the files downloaded |
 * | `model.analysis.duration` | histogram, s | `error.type` when it failed |
 *
 * A download is timed from its first request to its last byte (redirects
 * included); an analysis from its request to its outcome, so the wait for
 * an analysis thread (the app's share, then the pool) is part of it. A
 * placeholder host downloads nothing and is not measured; an interrupted
 * download or analysis (the request went away) has no outcome and is not
 * either.
 */
import { Cause, Effect, Exit, Metric } from "effect"
import type { EngineError } from "../EngineError.ts"
import type { ModelError } from "./mesh.ts"

/** Seconds: a small file on a near host in tens of milliseconds, MODEL_FETCH_TIMEOUT (20 s by default) at most. */
const DOWNLOAD_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60]
/** Bytes: from a few KiB to MODEL_FETCH_MAX_BYTES (100 MiB by default). */
const SIZE_BUCKETS = [16_384, 65_536, 262_144, 1_048_576, 4_194_304, 16_777_216, 67_108_864, 104_857_600, 268_435_456]
/** Seconds: a simple part in milliseconds, MODEL_ANALYSIS_TIMEOUT (20 s by default) plus the wait for a thread. */
const ANALYSIS_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60]

/** The `error.type` of a failure other than the typed one (a defect): OpenTelemetry's fallback value. */
const OTHER = "_OTHER"

/** A duration histogram, one series per outcome: success, or each `error.type`. */
const durationByOutcome = (name: string, description: string, boundaries: ReadonlyArray<number>) => {
  const series = new Map<string, Metric.Histogram<number>>()
  return (errorType: string | undefined) => {
    const key = errorType ?? ""
    let metric = series.get(key)
    if (metric === undefined) {
      metric = Metric.histogram(name, {
        description,
        boundaries,
        attributes: errorType === undefined ? { unit: "s" } : { unit: "s", "error.type": errorType }
      })
      series.set(key, metric)
    }
    return metric
  }
}

const downloadDuration = durationByOutcome(
  "model.download.duration",
  "Duration of model file downloads, first request to last byte; error.type when one failed",
  DOWNLOAD_BUCKETS
)
const downloadSize = Metric.histogram("model.download.size", {
  description: "Size of the model files downloaded",
  boundaries: SIZE_BUCKETS,
  attributes: { unit: "By" }
})
const analysisDuration = durationByOutcome(
  "model.analysis.duration",
  "Duration of model file analyses, the wait for a thread included; error.type when one failed",
  ANALYSIS_BUCKETS
)

/** `effect`, its duration recorded by outcome once it ends (not when interrupted). */
const timed = <A, E>(
  effect: Effect.Effect<A, E>,
  histogram: (errorType: string | undefined) => Metric.Histogram<number>,
  errorType: (error: E) => string
): Effect.Effect<A, E> =>
  Effect.suspend(() => {
    const started = performance.now()
    return Effect.onExit(effect, (exit) => {
      const seconds = (performance.now() - started) / 1000
      if (Exit.isSuccess(exit)) return Metric.update(histogram(undefined), seconds)
      if (Cause.hasInterruptsOnly(exit.cause)) return Effect.void
      const failure = Cause.findError(exit.cause)
      return Metric.update(histogram(failure._tag === "Success" ? errorType(failure.success) : OTHER), seconds)
    })
  })

/** A model file's download, timed, and its size when it arrived. */
export const measuredDownload = <A extends { readonly bytes: Uint8Array }>(download: Effect.Effect<A, EngineError>): Effect.Effect<A, EngineError> =>
  timed(download, downloadDuration, (error) => error.type).pipe(
    Effect.tap(({ bytes }) => Metric.update(downloadSize, bytes.length))
  )

/** A model file's analysis, timed; a file that cannot be read is `UnreadableModel`, as the API answers it. */
export const measuredAnalysis = <A>(analysis: Effect.Effect<A, ModelError>): Effect.Effect<A, ModelError> =>
  timed(analysis, analysisDuration, (error) => error.type ?? "UnreadableModel")
