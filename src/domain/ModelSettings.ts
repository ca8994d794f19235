/**
 * The settings of model files, defined once: what the engine's fetcher and
 * analyser take, their defaults, and how each is read from the environment
 * (MODEL_FETCH_*, MODEL_ANALYSIS_*, MODEL_MAX_*). AppConfig reads them with
 * everything else at start; the engine's own defaults read the same
 * definitions when nothing was provided (tools, tests).
 */
import { Duration, type Effect, Result } from "effect"
import type { InvalidConfig } from "./Errors.ts"
import { DEFAULT_MAX_TRIANGLES, DEFAULT_MAX_UNPACKED_BYTES } from "./ModelLimits.ts"
import { boolean, duration, integer, readSettings, setting } from "./Setting.ts"

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

/** MODEL_FETCH_*: each variable defined once (type, default, range, meaning). */
export const MODEL_FETCH_SETTINGS = {
  allowPrivate: setting("MODEL_FETCH_ALLOW_PRIVATE", {
    ...boolean,
    default: DEFAULT_MODEL_FETCH.allowPrivate,
    defaultText: "false",
    meaning: "let the engine download model files from loopback, private and other special-purpose addresses " +
      "(refused by default: SSRF, see [Model downloads](#model-downloads)); tests, closed networks, and the integration walkthrough " +
      "on your own machine (`cli serve-fixtures`) only"
  }),
  maxBytes: setting("MODEL_FETCH_MAX_BYTES", {
    ...integer({ min: 1, unit: "bytes" }),
    default: DEFAULT_MODEL_FETCH.maxBytes,
    defaultText: "104857600 (100 MiB)",
    meaning: "largest model download; a larger file is refused (422 `ModelTooLarge`)"
  }),
  timeout: setting("MODEL_FETCH_TIMEOUT", {
    ...duration({ min: Duration.millis(1) }),
    default: DEFAULT_MODEL_FETCH.timeout,
    defaultText: "20 seconds",
    meaning: "time of one model download; keep it below `DOWNSTREAM_TIMEOUT_MS` when the engine is remote"
  }),
  maxRedirects: setting("MODEL_FETCH_MAX_REDIRECTS", {
    ...integer({ min: 0, max: 20 }),
    default: DEFAULT_MODEL_FETCH.maxRedirects,
    defaultText: "3",
    meaning: "redirects a model download follows (each checked like the first URL)"
  }),
  placeholderHosts: setting("MODEL_FETCH_PLACEHOLDER_HOSTS", {
    type: "list of domains",
    range: "comma separated, or `none`",
    parse: (list: string) =>
      Result.succeed(
        list.trim().toLowerCase() === "none"
          ? []
          : list.split(",").map((host) => host.trim().toLowerCase().replace(/^\.+/, "")).filter((host) => host !== "")
      ),
    default: DEFAULT_MODEL_FETCH.placeholderHosts,
    defaultText: "none",
    meaning: "domains (and their subdomains) whose model urls are not downloaded (the part has no geometry yet); the tests use `example`"
  })
}

/** MODEL_FETCH_*, defaults for what is not set. */
export const modelFetchConfig: Effect.Effect<ModelFetchSettings, InvalidConfig> = readSettings(MODEL_FETCH_SETTINGS)

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

/** MODEL_ANALYSIS_* and MODEL_MAX_*: each variable defined once. */
export const MODEL_ANALYSIS_SETTINGS = {
  workers: setting("MODEL_ANALYSIS_WORKERS", {
    ...integer({ min: 1, max: 256 }),
    default: DEFAULT_MODEL_ANALYSIS.workers,
    defaultText: "2",
    meaning: "worker threads that parse and measure model files (never the request loop); one app uses at most half of them " +
      "(rounded up) at once, its further files wait for its own turn"
  }),
  timeout: setting("MODEL_ANALYSIS_TIMEOUT", {
    ...duration({ min: Duration.millis(1) }),
    default: DEFAULT_MODEL_ANALYSIS.timeout,
    defaultText: "20 seconds",
    meaning: "running time of one analysis, from when its thread starts it; past it the thread is terminated and the part " +
      "refused (422 `ModelAnalysisTimeout`)"
  }),
  maxMemoryMb: setting("MODEL_ANALYSIS_MAX_MEMORY_MB", {
    ...integer({ min: 16, unit: "MB" }),
    default: DEFAULT_MODEL_ANALYSIS.maxMemoryMb,
    defaultText: "512",
    meaning: "JavaScript heap of each analysis thread; running out is a 422 `ModelAnalysisOutOfMemory`, the process unharmed"
  }),
  maxTriangles: setting("MODEL_MAX_TRIANGLES", {
    ...integer({ min: 1 }),
    default: DEFAULT_MODEL_ANALYSIS.maxTriangles,
    defaultText: String(DEFAULT_MODEL_ANALYSIS.maxTriangles),
    meaning: "triangles of a model after 3MF instancing (vertices at most 3×), counted before allocating; over it a 422 `ModelTooComplex`"
  }),
  maxUnpackedBytes: setting("MODEL_MAX_UNPACKED_BYTES", {
    ...integer({ min: 1, unit: "bytes" }),
    default: DEFAULT_MODEL_ANALYSIS.maxUnpackedBytes,
    defaultText: `${DEFAULT_MODEL_ANALYSIS.maxUnpackedBytes} (512 MiB)`,
    meaning: "bytes a 3MF's parts may unpack to, counted as they are produced (declared sizes are not trusted); over it a 422 `ModelTooLarge`"
  })
}

/** MODEL_ANALYSIS_* and MODEL_MAX_*, defaults for what is not set. */
export const modelAnalysisConfig: Effect.Effect<ModelAnalysisSettings, InvalidConfig> = readSettings(MODEL_ANALYSIS_SETTINGS)

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
