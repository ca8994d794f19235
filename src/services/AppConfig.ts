/**
 * The service's configuration, read once from the environment at start and
 * checked there: every variable is read whichever others are set, and any
 * invalid one stops the start with a problem naming it (all of them, not only
 * the first). Each variable is defined once, in src/services/Settings.ts and
 * src/domain/ModelSettings.ts, from which docs/operations.md's table is made.
 */
import { Context, type Duration, Effect, Layer, type Option, type Redacted, Result } from "effect"
import { InvalidConfig } from "../domain/Errors.ts"
import type { IpRange } from "../domain/IpAllowList.ts"
import { modelAnalysisConfig, type ModelAnalysisSettings, modelFetchConfig, type ModelFetchSettings } from "../domain/ModelSettings.ts"
import type { RateLimitPolicy } from "../domain/RateLimit.ts"
import { readSettings } from "../domain/Setting.ts"
import { webhookConfig, type WebhookSettings } from "../domain/WebhookSettings.ts"
import { SERVER_SETTINGS, TELEMETRY_SETTINGS } from "./Settings.ts"

export { DEFAULT_DOWNSTREAM_TIMEOUT_MS, DEFAULT_MAX_BODY_BYTES, parseCorsOrigins, RELEASE_1_0_0 } from "./Settings.ts"

export interface AppConfigShape {
  readonly port: number
  readonly host: string
  readonly dataDir: string
  readonly databaseUrl: Option.Option<Redacted.Redacted>
  /** How long start-up retries PostgreSQL (DATABASE_CONNECT_TIMEOUT). */
  readonly databaseConnectTimeout: Duration.Duration
  /** The longest a call waits on the database, for a connection and its statements (DATABASE_QUERY_TIMEOUT). */
  readonly databaseQueryTimeout: Duration.Duration
  readonly downstreamUrl: Option.Option<string>
  readonly releasedAt: Date
  readonly adminToken: Option.Option<Redacted.Redacted>
  readonly trustedProxies: ReadonlyArray<IpRange>
  /** The largest uploaded model file, in bytes (MODEL_UPLOAD_MAX_BYTES): 413 above it. */
  readonly modelUploadMaxBytes: number
  /** The largest request body, in bytes (MAX_BODY_BYTES): 413 above it. */
  readonly maxBodyBytes: number
  /** Extra wait before a meter flush, to gather more calls into one commit (0: flush as soon as the previous one ends). */
  readonly meterFlushWindowMs: number
  /** How long a meter row waits for its outcome before the sweep settles it as unknown (METER_OUTCOME_TIMEOUT). */
  readonly meterOutcomeTimeout: Duration.Duration
  /** How long meter rows are kept (METER_RETENTION); older periods keep their totals per day. */
  readonly meterRetention: Duration.Duration
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
  /** Webhook delivery (WEBHOOK_TIMEOUT, CLUSTER_RUNNER_*). */
  readonly webhooks: WebhookSettings
}

/** Every group read before any problem is reported, so that one start names every invalid variable. */
export const loadAppConfig: Effect.Effect<AppConfigShape, InvalidConfig> = Effect.all(
  // The telemetry's own variables are checked here too (the telemetry layer reads them again), so that one start names them all.
  [readSettings(SERVER_SETTINGS), modelFetchConfig, modelAnalysisConfig, webhookConfig, readSettings(TELEMETRY_SETTINGS)],
  { mode: "result" }
).pipe(
  Effect.flatMap(([server, modelFetch, modelAnalysis, webhooks, telemetry]) => {
    if (
      Result.isSuccess(server) && Result.isSuccess(modelFetch) && Result.isSuccess(modelAnalysis) && Result.isSuccess(webhooks) &&
      Result.isSuccess(telemetry)
    ) {
      return Effect.succeed({
        ...server.success,
        modelFetch: modelFetch.success,
        modelAnalysis: modelAnalysis.success,
        webhooks: webhooks.success
      })
    }
    const failures = [server, modelFetch, modelAnalysis, webhooks, telemetry] as ReadonlyArray<Result.Result<unknown, InvalidConfig>>
    const problems = failures.flatMap((each) => Result.isFailure(each) ? each.failure.problems ?? [] : [])
    return Effect.fail(InvalidConfig.of(problems))
  })
)

export class AppConfig extends Context.Service<AppConfig, AppConfigShape>()("mfg/services/AppConfig") {
  static readonly layer = Layer.effect(AppConfig, loadAppConfig)
  /** The environment's configuration with some values replaced (tests, tools). */
  static readonly layerWith = (overrides: Partial<AppConfigShape>) =>
    Layer.effect(AppConfig, Effect.map(loadAppConfig, (config) => ({ ...config, ...overrides })))
}
