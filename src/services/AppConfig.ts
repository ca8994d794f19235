/**
 * The service's configuration, read once from the environment at start and
 * checked there: an invalid value stops the start with a message naming it.
 * Names and defaults are the interface contract (docs/operations.md).
 */
import { Config, Context, Effect, Layer, Option, Redacted, Result } from "effect"
import { InvalidConfig } from "../domain/Errors.ts"
import { type IpRange, parseIpRange } from "../domain/IpAllowList.ts"
import { modelAnalysisConfig, modelAnalysisProblem, type ModelAnalysisSettings, modelFetchConfig, type ModelFetchSettings } from "../domain/ModelSettings.ts"
import { DEFAULT_RATE_LIMIT, parseRateLimit, type RateLimitPolicy } from "../domain/RateLimit.ts"

/** The 1.0.0 release of this interface: secrets issued before it cannot authenticate. */
export const RELEASE_1_0_0 = "2026-11-01T00:00:00.000Z"

/** MAX_BODY_BYTES unless set: 1 MiB, far above any JSON payload of the API. */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024

export interface AppConfigShape {
  readonly port: number
  readonly host: string
  readonly dataDir: string
  readonly databaseUrl: Option.Option<Redacted.Redacted>
  readonly downstreamUrl: Option.Option<string>
  readonly releasedAt: Date
  readonly adminToken: Option.Option<Redacted.Redacted>
  readonly trustedProxies: ReadonlyArray<IpRange>
  /** The largest request body, in bytes (MAX_BODY_BYTES): 413 above it. */
  readonly maxBodyBytes: number
  /** Extra wait before a meter flush, to gather more calls into one commit (0: flush as soon as the previous one ends). */
  readonly meterFlushWindowMs: number
  /** How long one call of a remote engine may take, answer body included (DOWNSTREAM_TIMEOUT_MS). */
  readonly downstreamTimeoutMs: number
  /** The per-request JSON line on stdout (REQUEST_LOG, default true). */
  readonly requestLog: boolean
  /** Browser origins MCP accepts besides same-host loopback ones (MCP_ALLOWED_ORIGINS, comma separated, exact). */
  readonly mcpAllowedOrigins: ReadonlyArray<string>
  /** Origins allowed to call from a browser (CORS_ORIGINS): exact origins as browsers send them, or `*` alone; empty: no CORS. */
  readonly corsOrigins: ReadonlyArray<string>
  /** The secret between gateway and remote engine (ENGINE_TOKEN). */
  readonly engineToken: Option.Option<Redacted.Redacted>
  /** Model file downloads (MODEL_FETCH_*). */
  readonly modelFetch: ModelFetchSettings
  /** Model file analysis (MODEL_ANALYSIS_*, MODEL_MAX_*). */
  readonly modelAnalysis: ModelAnalysisSettings
  /** Every app's budget unless it has an override (RATE_LIMIT, `600/60s` unless set); undefined: `off`. */
  readonly rateLimit: RateLimitPolicy | undefined
  /** The rate limits' shared store (REDIS_URL); none: each instance counts in its own memory. */
  readonly redisUrl: Option.Option<Redacted.Redacted>
}

/** DOWNSTREAM_TIMEOUT_MS unless set. */
export const DEFAULT_DOWNSTREAM_TIMEOUT_MS = 10_000

const raw = Config.all({
  port: Config.Port("PORT").pipe(Config.withDefault(8080)),
  host: Config.String("HOST").pipe(Config.withDefault("127.0.0.1")),
  dataDir: Config.String("DATA_DIR").pipe(Config.withDefault("./data")),
  databaseUrl: Config.option(Config.Redacted("DATABASE_URL")),
  downstreamUrl: Config.option(Config.String("DOWNSTREAM_URL")),
  releasedAt: Config.String("RELEASED_AT").pipe(Config.withDefault(RELEASE_1_0_0)),
  adminToken: Config.option(Config.Redacted("ADMIN_TOKEN")),
  trustedProxies: Config.String("TRUSTED_PROXIES").pipe(Config.withDefault("")),
  meterFlushWindowMs: Config.Int("METER_FLUSH_WINDOW_MS").pipe(Config.withDefault(0)),
  maxBodyBytes: Config.Int("MAX_BODY_BYTES").pipe(Config.withDefault(DEFAULT_MAX_BODY_BYTES)),
  downstreamTimeoutMs: Config.Int("DOWNSTREAM_TIMEOUT_MS").pipe(Config.withDefault(DEFAULT_DOWNSTREAM_TIMEOUT_MS)),
  engineToken: Config.option(Config.Redacted("ENGINE_TOKEN")),
  requestLog: Config.Boolean("REQUEST_LOG").pipe(Config.withDefault(true)),
  rateLimit: Config.String("RATE_LIMIT").pipe(Config.withDefault(DEFAULT_RATE_LIMIT)),
  redisUrl: Config.option(Config.Redacted("REDIS_URL")),
  corsOrigins: Config.String("CORS_ORIGINS").pipe(Config.withDefault("")),
  mcpAllowedOrigins: Config.String("MCP_ALLOWED_ORIGINS").pipe(
    Config.withDefault(""),
    Config.map((value) => value.split(",").map((origin) => origin.trim()).filter((origin) => origin.length > 0))
  )
})

/** A group of variables read on its own, so that an invalid one is named with its group. */
const group = <A>(config: Config.Config<A>, names: string) =>
  Effect.gen(function*() {
    return yield* config
  }).pipe(Effect.mapError((error) => new InvalidConfig({ message: `${names}: ${error.message}` })))

const parseRanges = (text: string): Result.Result<ReadonlyArray<IpRange>, string> => {
  const ranges: Array<IpRange> = []
  for (const entry of text.split(",").map((s) => s.trim()).filter((s) => s.length > 0)) {
    const parsed = parseIpRange(entry)
    if (Result.isFailure(parsed)) return Result.fail(`${entry}: ${parsed.failure}`)
    ranges.push(parsed.success)
  }
  return Result.succeed(ranges)
}

/**
 * CORS_ORIGINS: comma-separated origins, each `http(s)://host[:port]` with
 * nothing after it (no path, not even a trailing slash), or `*` alone (every
 * origin). Each is kept as a browser sends it (lower case, no default port).
 */
export const parseCorsOrigins = (text: string): Result.Result<ReadonlyArray<string>, string> => {
  const entries = text.split(",").map((s) => s.trim()).filter((s) => s.length > 0)
  if (entries.includes("*")) return entries.length === 1 ? Result.succeed(["*"]) : Result.fail("* (every origin) stands alone")
  const origins: Array<string> = []
  for (const entry of entries) {
    const url = /^https?:\/\/[^/?#@\s]+$/i.test(entry) ? URL.parse(entry) : null
    if (url === null) return Result.fail(`${entry} is not an origin: http(s)://host[:port], no path`)
    origins.push(url.origin)
  }
  return Result.succeed(origins)
}

/**
 * Why a token cannot serve as ADMIN_TOKEN: a header value loses its
 * surrounding whitespace on the way, so such a token could never be presented.
 */
const adminTokenProblem = (token: string): string | undefined => {
  if (token.trim() === "") return "is blank"
  if (token.trim() !== token) return "has leading or trailing whitespace, which no X-Admin-Token header can carry"
  if (token.length < 16) return "must be at least 16 characters"
  return undefined
}

/** RATE_LIMIT: `off`, or a budget such as `600/60s`. */
const rateLimitOf = (text: string): Result.Result<RateLimitPolicy | undefined, string> =>
  text.trim().toLowerCase() === "off" ? Result.succeed(undefined) : parseRateLimit(text)

/** Why REDIS_URL cannot be used: it must be a redis:// or rediss:// URL. */
const redisUrlProblem = (url: string): string | undefined => {
  try {
    const parsed = new URL(url)
    return parsed.protocol === "redis:" || parsed.protocol === "rediss:" ? undefined : "must be a redis:// or rediss:// URL"
  } catch {
    return "is not a URL (redis://host:6379)"
  }
}

export const loadAppConfig = Effect.gen(function*() {
  const config = yield* raw
  const releasedAt = Date.parse(config.releasedAt)
  if (Number.isNaN(releasedAt)) {
    return yield* new InvalidConfig({ message: `RELEASED_AT is not a date: ${config.releasedAt}` })
  }
  const proxies = parseRanges(config.trustedProxies)
  if (Result.isFailure(proxies)) {
    return yield* new InvalidConfig({ message: `TRUSTED_PROXIES: ${proxies.failure}` })
  }
  if (config.adminToken._tag === "Some") {
    const problem = adminTokenProblem(Redacted.value(config.adminToken.value))
    if (problem !== undefined) return yield* new InvalidConfig({ message: `ADMIN_TOKEN ${problem}` })
  }
  if (config.maxBodyBytes < 1) {
    return yield* new InvalidConfig({ message: `MAX_BODY_BYTES must be a positive number of bytes, not ${config.maxBodyBytes}` })
  }
  if (config.downstreamTimeoutMs <= 0) {
    return yield* new InvalidConfig({ message: "DOWNSTREAM_TIMEOUT_MS must be a positive number of milliseconds" })
  }
  const rateLimit = rateLimitOf(config.rateLimit)
  if (Result.isFailure(rateLimit)) return yield* new InvalidConfig({ message: `RATE_LIMIT: ${rateLimit.failure}, or off` })
  if (config.redisUrl._tag === "Some") {
    const problem = redisUrlProblem(Redacted.value(config.redisUrl.value))
    if (problem !== undefined) return yield* new InvalidConfig({ message: `REDIS_URL ${problem}` })
  }
  const corsOrigins = parseCorsOrigins(config.corsOrigins)
  if (Result.isFailure(corsOrigins)) return yield* new InvalidConfig({ message: `CORS_ORIGINS: ${corsOrigins.failure}` })
  const modelFetch = yield* group(modelFetchConfig, "MODEL_FETCH_*")
  const modelAnalysis = yield* group(modelAnalysisConfig, "MODEL_ANALYSIS_* / MODEL_MAX_*")
  const analysisProblem = modelAnalysisProblem(modelAnalysis)
  if (analysisProblem !== undefined) return yield* new InvalidConfig({ message: analysisProblem })
  return {
    ...config,
    modelFetch,
    modelAnalysis,
    releasedAt: new Date(releasedAt),
    trustedProxies: proxies.success,
    rateLimit: rateLimit.success,
    corsOrigins: corsOrigins.success
  } satisfies AppConfigShape
})

export class AppConfig extends Context.Service<AppConfig, AppConfigShape>()("mfg/services/AppConfig") {
  static readonly layer = Layer.effect(AppConfig, loadAppConfig)
  /** The environment's configuration with some values replaced (tests, tools). */
  static readonly layerWith = (overrides: Partial<AppConfigShape>) =>
    Layer.effect(AppConfig, Effect.map(loadAppConfig, (config) => ({ ...config, ...overrides })))
}
