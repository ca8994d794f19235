/**
 * The settings of model files, defined once: what the engine's fetcher and
 * analyser take, their defaults, and how each is read from the environment
 * (MODEL_FETCH_*, MODEL_ANALYSIS_*, MODEL_MAX_*). AppConfig reads them with
 * everything else at start; the engine's own defaults read the same
 * definitions when nothing was provided (tools, tests).
 */
import { Config, Duration } from "effect"
import { DEFAULT_MAX_TRIANGLES, DEFAULT_MAX_UNPACKED_BYTES } from "./ModelLimits.ts"

export interface ModelFetchSettings {
  /** Whether loopback and private addresses may be fetched (tests, closed networks). */
  readonly allowPrivate: boolean
  readonly maxBytes: number
  readonly timeout: Duration.Duration
  readonly maxRedirects: number
  /** Host names (and their subdomains) that are placeholders: not fetched. */
  readonly placeholderHosts: ReadonlyArray<string>
}

export const DEFAULT_MODEL_FETCH: ModelFetchSettings = {
  allowPrivate: false,
  maxBytes: 100 * 1024 * 1024,
  timeout: Duration.seconds(20),
  maxRedirects: 3,
  placeholderHosts: []
}

/** MODEL_FETCH_*, defaults for what is not set. */
export const modelFetchConfig: Config.Config<ModelFetchSettings> = Config.all({
  allowPrivate: Config.Boolean("MODEL_FETCH_ALLOW_PRIVATE").pipe(Config.withDefault(DEFAULT_MODEL_FETCH.allowPrivate)),
  maxBytes: Config.Int("MODEL_FETCH_MAX_BYTES").pipe(Config.withDefault(DEFAULT_MODEL_FETCH.maxBytes)),
  timeout: Config.Duration("MODEL_FETCH_TIMEOUT").pipe(Config.withDefault(DEFAULT_MODEL_FETCH.timeout)),
  maxRedirects: Config.Int("MODEL_FETCH_MAX_REDIRECTS").pipe(Config.withDefault(DEFAULT_MODEL_FETCH.maxRedirects)),
  placeholderHosts: Config.String("MODEL_FETCH_PLACEHOLDER_HOSTS").pipe(
    Config.withDefault(DEFAULT_MODEL_FETCH.placeholderHosts.join(",")),
    // `none` (or empty) for no placeholders.
    Config.map((list) =>
      list.trim().toLowerCase() === "none"
        ? []
        : list.split(",").map((host) => host.trim().toLowerCase().replace(/^\.+/, "")).filter((host) => host !== "")
    )
  )
})

export interface ModelAnalysisSettings {
  /** Threads of the pool (MODEL_ANALYSIS_WORKERS). */
  readonly workers: number
  /** An analysis's running time, from when its thread starts it (MODEL_ANALYSIS_TIMEOUT). */
  readonly timeout: Duration.Duration
  /** JavaScript heap of each thread, MB (MODEL_ANALYSIS_MAX_MEMORY_MB). */
  readonly maxMemoryMb: number
  /** Triangles of a model (MODEL_MAX_TRIANGLES). */
  readonly maxTriangles: number
  /** Bytes a 3MF's parts may unpack to (MODEL_MAX_UNPACKED_BYTES). */
  readonly maxUnpackedBytes: number
  /** Analyses one app may run at once; by default half the workers, rounded up. */
  readonly perApp?: number
}

/** The triangle and unpacked-size defaults are ModelLimits.ts's. */
export const DEFAULT_MODEL_ANALYSIS: ModelAnalysisSettings = {
  workers: 2,
  timeout: Duration.seconds(20),
  maxMemoryMb: 512,
  maxTriangles: DEFAULT_MAX_TRIANGLES,
  maxUnpackedBytes: DEFAULT_MAX_UNPACKED_BYTES
}

/** MODEL_ANALYSIS_* and MODEL_MAX_*, defaults for what is not set; see `modelAnalysisProblem`. */
export const modelAnalysisConfig: Config.Config<ModelAnalysisSettings> = Config.all({
  workers: Config.Int("MODEL_ANALYSIS_WORKERS").pipe(Config.withDefault(DEFAULT_MODEL_ANALYSIS.workers)),
  timeout: Config.Duration("MODEL_ANALYSIS_TIMEOUT").pipe(Config.withDefault(DEFAULT_MODEL_ANALYSIS.timeout)),
  maxMemoryMb: Config.Int("MODEL_ANALYSIS_MAX_MEMORY_MB").pipe(Config.withDefault(DEFAULT_MODEL_ANALYSIS.maxMemoryMb)),
  maxTriangles: Config.Int("MODEL_MAX_TRIANGLES").pipe(Config.withDefault(DEFAULT_MODEL_ANALYSIS.maxTriangles)),
  maxUnpackedBytes: Config.Int("MODEL_MAX_UNPACKED_BYTES").pipe(Config.withDefault(DEFAULT_MODEL_ANALYSIS.maxUnpackedBytes))
})

/** What is wrong with the analysis settings, if anything: every number must be positive. */
export const modelAnalysisProblem = (settings: ModelAnalysisSettings): string | undefined => {
  const numbers: ReadonlyArray<readonly [string, number]> = [
    ["MODEL_ANALYSIS_WORKERS", settings.workers],
    ["MODEL_ANALYSIS_TIMEOUT (ms)", Duration.toMillis(settings.timeout)],
    ["MODEL_ANALYSIS_MAX_MEMORY_MB", settings.maxMemoryMb],
    ["MODEL_MAX_TRIANGLES", settings.maxTriangles],
    ["MODEL_MAX_UNPACKED_BYTES", settings.maxUnpackedBytes]
  ]
  const wrong = numbers.find(([, value]) => !(value > 0) || !Number.isFinite(value))
  return wrong === undefined ? undefined : `${wrong[0]} must be positive, not ${wrong[1]}`
}
