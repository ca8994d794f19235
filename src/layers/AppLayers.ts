/**
 * The service layers over storage: what a server, a CLI command or a test
 * composes, given a SqlClient and AppConfig. Downstream is the remote engine
 * when DOWNSTREAM_URL is set, the embedded one otherwise.
 */
import { Layer } from "effect"
import { AppRateLimitsSql } from "./AppRateLimitsSql.ts"
import { DownstreamLive } from "./DownstreamHttp.ts"
import { RateLimitingLive } from "./http/RateLimiting.ts"
import { MeterSql } from "./MeterSql.ts"
import { MeterUpkeepLive } from "./MeterUpkeepSql.ts"
import { ReadinessChecksLive } from "./Readiness.ts"
import { SecretStoreSql } from "./SecretStoreSql.ts"

/** What a CLI command needs: the stored services, no connection to Redis. */
export const ToolServicesLive = Layer.mergeAll(SecretStoreSql, MeterSql, DownstreamLive, AppRateLimitsSql)

/**
 * What a server needs: the stored services, the meter's upkeep on schedule
 * (sweep, retention), the rate limits of the request path (memory, or Redis
 * with REDIS_URL), and the readiness checks that the remote engine's client
 * and Redis add themselves to (for `/ready`).
 */
export const ServicesLive = Layer.mergeAll(
  SecretStoreSql,
  MeterSql,
  MeterUpkeepLive,
  DownstreamLive,
  RateLimitingLive.pipe(Layer.provideMerge(AppRateLimitsSql))
).pipe(
  Layer.provideMerge(ReadinessChecksLive)
)
