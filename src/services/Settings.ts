/**
 * Every environment variable of the gateway and the engine, defined once
 * (src/domain/Setting.ts): AppConfig and the telemetry read these
 * definitions, and the configuration table of docs/operations.md is
 * generated from them (`npm run docs:settings`; a test checks it is current).
 */
import { Duration, Result } from "effect"
import { parseIpRange } from "../domain/IpAllowList.ts"
import { MODEL_ANALYSIS_SETTINGS, MODEL_FETCH_SETTINGS } from "../domain/ModelSettings.ts"
import { DEFAULT_RATE_LIMIT, parseRateLimit } from "../domain/RateLimit.ts"
import { DEFAULT_MODEL_UPLOAD_MAX_BYTES } from "../domain/resources/modelFileUpload.ts"
import {
  boolean,
  decimal,
  duration,
  integer,
  keyValueList,
  oneOf,
  optionalSetting,
  secret,
  secretUrl,
  setting,
  type SettingDoc,
  text,
  url
} from "../domain/Setting.ts"
import { WEBHOOK_SETTINGS } from "../domain/WebhookSettings.ts"

/** The 1.0.0 release of this interface: secrets issued before it cannot authenticate. */
export const RELEASE_1_0_0 = "2026-11-01T00:00:00.000Z"

/** MAX_BODY_BYTES unless set: 1 MiB, far above any JSON payload of the API. */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024

/** DOWNSTREAM_TIMEOUT_MS unless set. */
export const DEFAULT_DOWNSTREAM_TIMEOUT_MS = 10_000

/** TRUSTED_PROXIES: comma-separated CIDRs (or single addresses). */
const parseRanges = (list: string) => {
  const ranges = []
  for (const entry of list.split(",").map((s) => s.trim()).filter((s) => s.length > 0)) {
    const parsed = parseIpRange(entry)
    if (Result.isFailure(parsed)) return Result.fail(`${entry}: ${parsed.failure}`)
    ranges.push(parsed.success)
  }
  return Result.succeed(ranges)
}

const listOf = (value: string) => value.split(",").map((s) => s.trim()).filter((s) => s.length > 0)

/** An origin as a browser sends it (`http(s)://host[:port]`, lower case, no default port), or why `entry` is none. */
const originOf = (entry: string): Result.Result<string, string> => {
  const parsed = /^https?:\/\/[^/?#@\s]+$/i.test(entry) ? URL.parse(entry) : null
  return parsed === null ? Result.fail(`${entry} is not an origin: http(s)://host[:port], no path`) : Result.succeed(parsed.origin)
}

const parseOrigins = (value: string): Result.Result<ReadonlyArray<string>, string> => Result.all(listOf(value).map(originOf))

/**
 * CORS_ORIGINS: comma-separated origins, each `http(s)://host[:port]` with
 * nothing after it (no path, not even a trailing slash), or `*` alone (every
 * origin). Each is kept as a browser sends it (lower case, no default port).
 */
export const parseCorsOrigins = (value: string): Result.Result<ReadonlyArray<string>, string> => {
  const entries = listOf(value)
  if (entries.includes("*")) return entries.length === 1 ? Result.succeed(["*"]) : Result.fail("* (every origin) stands alone")
  return parseOrigins(value)
}

/**
 * Why a token cannot serve as ADMIN_TOKEN: a header value loses its
 * surrounding whitespace on the way, so such a token could never be presented.
 */
const adminTokenProblem = (token: string): string | undefined => {
  if (token.trim() === "") return "it is blank"
  if (token.trim() !== token) return "it has leading or trailing whitespace, which no X-Admin-Token header can carry"
  if (token.length < 16) return "it must be at least 16 characters"
  return undefined
}

/** RATE_LIMIT: `off`, or a budget such as `600/60s`. */
const parseRateLimitSetting = (value: string) =>
  value.trim().toLowerCase() === "off"
    ? Result.succeed(undefined)
    : Result.mapError(parseRateLimit(value), (why) => `${why}, or off`)

const parseDate = (value: string) => {
  const at = Date.parse(value)
  return Number.isNaN(at) ? Result.fail("must be a date (2026-11-01T00:00:00.000Z)") : Result.succeed(new Date(at))
}

/** The variables of the process: where it listens and stores, its limits and its neighbours. */
export const SERVER_SETTINGS = {
  port: setting("PORT", { ...integer({ min: 0, max: 65535 }), default: 8080, defaultText: "8080", meaning: "HTTP port" }),
  host: setting("HOST", {
    ...text,
    type: "address or host name",
    default: "127.0.0.1",
    defaultText: "127.0.0.1",
    meaning: "bind address (0.0.0.0 in containers)"
  }),
  dataDir: setting("DATA_DIR", {
    ...text,
    type: "path",
    default: "./data",
    defaultText: "./data",
    meaning: "embedded PGlite directory (used when `DATABASE_URL` is unset); one process serves it at a time"
  }),
  databaseUrl: optionalSetting("DATABASE_URL", {
    ...secretUrl(["postgres:", "postgresql:"]),
    meaning: "PostgreSQL connection string; switches storage to PostgreSQL (never logged: it may carry a password)"
  }),
  databaseConnectTimeout: setting("DATABASE_CONNECT_TIMEOUT", {
    ...duration({ min: Duration.seconds(1) }),
    default: Duration.seconds(30),
    defaultText: "30 seconds",
    meaning: "how long start-up retries PostgreSQL (with backoff, a log line per attempt) before it gives up (exit 69); `30s`, " +
      "`30 seconds` and `1m` are all accepted, as for every duration"
  }),
  databaseQueryTimeout: setting("DATABASE_QUERY_TIMEOUT", {
    ...duration({ min: Duration.millis(100) }),
    default: Duration.seconds(5),
    defaultText: "5 seconds",
    meaning: "the longest a call waits on the database, for a connection and for its statements: past it the call is a 503 " +
      "`StorageUnavailable` (a database that stops answering: [Database outages](#database-outages))"
  }),
  downstreamUrl: optionalSetting("DOWNSTREAM_URL", {
    ...url(["http:", "https:"]),
    meaning: "remote engine base URL (`npm run engine`); unset: the engine runs embedded in the gateway"
  }),
  downstreamTimeoutMs: setting("DOWNSTREAM_TIMEOUT_MS", {
    ...integer({ min: 1, max: 600_000, unit: "ms" }),
    default: DEFAULT_DOWNSTREAM_TIMEOUT_MS,
    defaultText: String(DEFAULT_DOWNSTREAM_TIMEOUT_MS),
    meaning: "a remote engine that does not answer within it is a 504 naming `engine`"
  }),
  engineToken: optionalSetting("ENGINE_TOKEN", {
    ...secret(),
    meaning: "shared secret between gateway and engine (`Authorization: Bearer` on the engine's API); required for an engine " +
      "listening on an address other than loopback"
  }),
  releasedAt: setting("RELEASED_AT", {
    type: "date",
    parse: parseDate,
    default: new Date(RELEASE_1_0_0),
    defaultText: `\`${RELEASE_1_0_0}\`, the 1.0.0 release`,
    meaning: "secrets issued before it cannot authenticate until regenerated"
  }),
  adminToken: optionalSetting("ADMIN_TOKEN", {
    ...secret(adminTokenProblem),
    range: "at least 16 characters, no surrounding whitespace",
    meaning: "enables the admin API (`X-Admin-Token`); unset, the admin API answers 404"
  }),
  maxBodyBytes: setting("MAX_BODY_BYTES", {
    ...integer({ min: 1, max: 1024 * 1024 * 1024, unit: "bytes" }),
    default: DEFAULT_MAX_BODY_BYTES,
    defaultText: "1048576 (1 MiB)",
    meaning: "largest request body on every surface (REST, MCP, admin API): a larger one is a 413 before it is read whole " +
      "(at once when its `Content-Length` says so, else when the bytes read pass the limit; on MCP a `Content-Length` up to twice " +
      "the limit is read on, unkept, for the JSON-RPC id the 413 carries), and its connection is closed"
  }),
  modelUploadMaxBytes: setting("MODEL_UPLOAD_MAX_BYTES", {
    ...integer({ min: 1, max: 1024 * 1024 * 1024, unit: "bytes" }),
    default: DEFAULT_MODEL_UPLOAD_MAX_BYTES,
    defaultText: "104857600 (100 MiB)",
    meaning: "largest model file `POST /v1/model-file` accepts (MAX_BODY_BYTES does not apply to it): a larger one is a 413 " +
      "(at once when its `Content-Length` says so, else when the bytes read pass the limit), and nothing of it is kept"
  }),
  trustedProxies: setting("TRUSTED_PROXIES", {
    type: "list of CIDRs",
    range: "comma separated",
    parse: parseRanges,
    default: [],
    defaultText: "empty",
    meaning: "proxies whose `X-Forwarded-For` is believed (right-most untrusted hop)"
  }),
  rateLimit: setting("RATE_LIMIT", {
    type: "budget",
    range: "`<limit>/<window>` (window in `s`, `m` or `h`; at most 1,000,000,000 calls and 24 h), or `off`",
    parse: parseRateLimitSetting,
    default: parseRateLimitSetting(DEFAULT_RATE_LIMIT).pipe(Result.getOrThrow),
    defaultText: `\`${DEFAULT_RATE_LIMIT}\``,
    meaning: "every app's budget of authenticated calls (`600/60s`, `100/1m`, `5000/1h`); `off`: no limit and no `RateLimit` " +
      "headers, but an app's own override still applies ([Rate limits](#rate-limits))"
  }),
  redisUrl: optionalSetting("REDIS_URL", {
    ...secretUrl(["redis:", "rediss:"]),
    meaning: "the Redis that holds the rate limits' counters, shared by every instance; unset: each instance counts in its own " +
      "memory ([Rate limits](#rate-limits))"
  }),
  meterFlushWindowMs: setting("METER_FLUSH_WINDOW_MS", {
    ...integer({ min: 0, max: 1000, unit: "ms" }),
    default: 0,
    defaultText: "0",
    meaning: "extra wait before a meter flush to gather more calls (0: flush as soon as the previous flush ends); every metered " +
      "call waits for its flush"
  }),
  meterOutcomeTimeout: setting("METER_OUTCOME_TIMEOUT", {
    ...duration({ min: Duration.seconds(1) }),
    default: Duration.seconds(60),
    defaultText: "60 seconds",
    meaning: "how long a call's meter row may wait for its outcome (status, duration) before a sweep settles it as unknown " +
      "(its instance died before writing it; [Outcomes](#outcomes-and-the-sweep))"
  }),
  meterRetention: setting("METER_RETENTION", {
    ...duration({ min: Duration.days(1) }),
    default: Duration.days(400),
    defaultText: "400 days",
    meaning: "how long meter rows (one per call) are kept; older ones are deleted once their usage totals are kept per day " +
      "([Meter retention](#meter-retention))"
  }),
  requestLog: setting("REQUEST_LOG", {
    ...boolean,
    default: true,
    defaultText: "true",
    meaning: "one JSON line per request on stdout; `false` switches the request lines off (other log lines stay)"
  }),
  corsOrigins: setting("CORS_ORIGINS", {
    type: "list of origins",
    range: "comma separated `http(s)://host[:port]` (no path), or `*` alone",
    parse: parseCorsOrigins,
    default: [],
    defaultText: "unset",
    meaning: "origins whose pages may call `/v1` from a browser (`https://app.example.com`, `http://localhost:5173`); `*` allows " +
      "every origin; unset: no CORS header at all ([integration.md](integration.md#browsers-cors))"
  }),
  mcpAllowedOrigins: setting("MCP_ALLOWED_ORIGINS", {
    type: "list of origins",
    range: "comma separated `http(s)://host[:port]` (no path)",
    parse: parseOrigins,
    default: [],
    defaultText: "empty",
    meaning: "browser origins allowed to call `POST /v1/mcp` besides same-host loopback ones (requests without `Origin` are " +
      "allowed; see [mcp.md](mcp.md))"
  })
}

/** The samplers of OTEL_TRACES_SAMPLER (the OpenTelemetry SDK environment specification's names). */
export const SAMPLERS = [
  "always_on",
  "always_off",
  "traceidratio",
  "parentbased_always_on",
  "parentbased_always_off",
  "parentbased_traceidratio"
] as const
export type SamplerName = typeof SAMPLERS[number]

const exportHeaders = (name: string, meaning: string) => optionalSetting(name, { ...keyValueList({ decodeKeys: false }), secret: true, meaning })

const exportTimeout = (name: string, meaning: string) => optionalSetting(name, { ...integer({ min: 1, unit: "ms" }), meaning })

/** OTEL_*: the telemetry's exporter, as the OpenTelemetry SDK environment specification names and defines them. */
export const TELEMETRY_SETTINGS = {
  disabled: setting("OTEL_SDK_DISABLED", {
    ...boolean,
    default: false,
    defaultText: "false",
    meaning: "`true`: no span and no metric is made or exported, whatever the other `OTEL_*` variables say"
  }),
  endpoint: optionalSetting("OTEL_EXPORTER_OTLP_ENDPOINT", {
    ...url(["http:", "https:"]),
    meaning: "OTLP/HTTP collector base URL: spans go to `<endpoint>/v1/traces`, metrics to `<endpoint>/v1/metrics`; unset: " +
      "tracing and metrics off, at no cost ([Telemetry](#telemetry))"
  }),
  tracesEndpoint: optionalSetting("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", {
    ...url(["http:", "https:"]),
    meaning: "the full URL spans are sent to, used as it is, instead of `<endpoint>/v1/traces` (export is on only with " +
      "`OTEL_EXPORTER_OTLP_ENDPOINT` set)"
  }),
  metricsEndpoint: optionalSetting("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", {
    ...url(["http:", "https:"]),
    meaning: "the full URL metrics are sent to, used as it is, instead of `<endpoint>/v1/metrics` (export is on only with " +
      "`OTEL_EXPORTER_OTLP_ENDPOINT` set)"
  }),
  protocol: setting("OTEL_EXPORTER_OTLP_PROTOCOL", {
    type: "text",
    range: "`http/protobuf` or `http/json`",
    parse: (value: string) => value === "http/protobuf" || value === "http/json" ? Result.succeed(value) : Result.fail("must be http/protobuf or http/json"),
    default: "http/protobuf" as "http/protobuf" | "http/json",
    defaultText: "`http/protobuf`",
    meaning: "the OTLP encoding"
  }),
  serviceName: optionalSetting("OTEL_SERVICE_NAME", {
    ...text,
    defaultText: "`mfg-public-api` (`mfg-engine` for `npm run engine`)",
    meaning: "the `service.name` of the spans and metrics"
  }),
  headers: exportHeaders(
    "OTEL_EXPORTER_OTLP_HEADERS",
    "headers of every export request (`api-key=…,x-tenant=eu1`), for a backend that wants credentials; never logged"
  ),
  tracesHeaders: exportHeaders(
    "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
    "headers of the span exports, each over the same header of `OTEL_EXPORTER_OTLP_HEADERS`"
  ),
  metricsHeaders: exportHeaders(
    "OTEL_EXPORTER_OTLP_METRICS_HEADERS",
    "headers of the metric exports, each over the same header of `OTEL_EXPORTER_OTLP_HEADERS`"
  ),
  timeoutMs: setting("OTEL_EXPORTER_OTLP_TIMEOUT", {
    ...integer({ min: 1, unit: "ms" }),
    default: 10_000,
    defaultText: "10000",
    meaning: "the longest one export request may take; past it the export has failed"
  }),
  tracesTimeoutMs: exportTimeout("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "`OTEL_EXPORTER_OTLP_TIMEOUT` for the span exports"),
  metricsTimeoutMs: exportTimeout("OTEL_EXPORTER_OTLP_METRICS_TIMEOUT", "`OTEL_EXPORTER_OTLP_TIMEOUT` for the metric exports"),
  resourceAttributes: optionalSetting("OTEL_RESOURCE_ATTRIBUTES", {
    ...keyValueList({ decodeKeys: true }),
    meaning: "attributes of the resource (`deployment.environment.name=prod,service.namespace=shop`), over the service's own " +
      "(`service.namespace`, `service.version`, `service.instance.id`); `service.name` here gives way to `OTEL_SERVICE_NAME` " +
      "([Telemetry](#telemetry))"
  }),
  sampler: setting("OTEL_TRACES_SAMPLER", {
    ...oneOf(SAMPLERS),
    default: "parentbased_always_on" as SamplerName,
    defaultText: "`parentbased_always_on`",
    meaning: "which traces are kept: `always_on`, `always_off`, `traceidratio` (a share of the traces, by trace id), or " +
      "`parentbased_*` (the caller's decision when a `traceparent` came, else the named one)"
  }),
  samplerArg: optionalSetting("OTEL_TRACES_SAMPLER_ARG", {
    ...decimal({ min: 0, max: 1 }),
    defaultText: "1",
    meaning: "the share of traces `traceidratio` and `parentbased_traceidratio` keep (`0.1`: one in ten)"
  }),
  metricIntervalMs: setting("OTEL_METRIC_EXPORT_INTERVAL", {
    ...integer({ min: 100, unit: "ms" }),
    default: 10_000,
    defaultText: "10000",
    meaning: "time between two metric exports"
  })
}

/** Every variable, in the order of the guide's table. */
export const ALL_SETTINGS: ReadonlyArray<SettingDoc> = [
  ...Object.values(SERVER_SETTINGS),
  ...Object.values(MODEL_FETCH_SETTINGS),
  ...Object.values(MODEL_ANALYSIS_SETTINGS),
  ...Object.values(WEBHOOK_SETTINGS),
  ...Object.values(TELEMETRY_SETTINGS)
]

const cell = (value: string) => value.replaceAll("|", "\\|")

/** The guide's configuration table (Markdown), one row per variable. */
export const settingsTable = (settings: ReadonlyArray<SettingDoc> = ALL_SETTINGS): string =>
  [
    "| variable | type | default | accepted | meaning |",
    "|---|---|---|---|---|",
    ...settings.map((each) => `| \`${each.name}\` | ${cell(each.type)} | ${cell(each.defaultText)} | ${cell(each.range)} | ${cell(each.meaning)} |`)
  ].join("\n")
