/**
 * The service layers over storage: what a server, a CLI command or a test
 * composes, given a SqlClient and AppConfig. Downstream is the remote engine
 * when DOWNSTREAM_URL is set, the embedded one otherwise.
 */
import { Layer } from "effect"
import { DownstreamLive } from "../adapters/downstream/DownstreamHttp.ts"
import { AppRateLimitsSql } from "../adapters/sql/AppRateLimitsSql.ts"
import { MeterSql } from "../adapters/sql/MeterSql.ts"
import { MeterUpkeepLive } from "../adapters/sql/MeterUpkeepSql.ts"
import { SecretStoreSql } from "../adapters/sql/SecretStoreSql.ts"
import { RateLimitingLive } from "../gateway/request/index.ts"
import { ReadinessChecksLive } from "../platform/Readiness.ts"

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
