/**
 * The service layers over storage: what a server, a CLI command or a test
 * composes, given a SqlClient, AppConfig, the Instruments and the engine's
 * outbound services (EngineOutboundLive). Downstream is the remote engine
 * when DOWNSTREAM_URL is set, the embedded one otherwise.
 */
import { Layer } from "effect"
import { DownstreamLive } from "../adapters/downstream/DownstreamHttp.ts"
import { AppRateLimitsSql } from "../adapters/sql/AppRateLimitsSql.ts"
import { IdempotencySql } from "../adapters/sql/IdempotencySql.ts"
import { MeterSql } from "../adapters/sql/MeterSql.ts"
import { MeterUpkeepLive } from "../adapters/sql/MeterUpkeepSql.ts"
import { SecretStoreSql } from "../adapters/sql/SecretStoreSql.ts"
import { CommittedEvents } from "../engine/events/CommittedEvents.ts"
import { RateLimitingLive } from "../gateway/request/index.ts"
import { ReadinessChecksLive } from "../platform/Readiness.ts"
import { ReadinessChecksNoOp } from "../services/Readiness.ts"
import { ModelServicesLive } from "./ModelServices.ts"
import { WebhookSenderLive } from "./Webhooks.ts"

/**
 * What the embedded engine (and the engine service) hands its operations, as
 * AppConfig read it at start: model downloads and analysis, webhook sends;
 * and the hub of its calls' committed events, which the dispatcher beside it
 * subscribes to.
 */
export const EngineOutboundLive = Layer.mergeAll(ModelServicesLive, WebhookSenderLive, CommittedEvents.layer)

/**
 * What a CLI command needs: the stored services, no connection to Redis, and
 * no readiness checks (a command serves no `/ready`).
 */
export const ToolServicesLive = Layer.mergeAll(SecretStoreSql, MeterSql, DownstreamLive, AppRateLimitsSql, IdempotencySql).pipe(
  Layer.provide(ReadinessChecksNoOp)
)

/**
 * What a server needs: the stored services (idempotency keys' answers among
 * them), the meter's upkeep on schedule (sweep, retention), the rate limits
 * of the request path (memory, or Redis with REDIS_URL), and the readiness
 * checks, storage's and those the remote engine's client and Redis add
 * themselves to (for `/ready`).
 */
export const ServicesLive = Layer.mergeAll(
  SecretStoreSql,
  MeterSql,
  IdempotencySql,
  MeterUpkeepLive,
  DownstreamLive,
  RateLimitingLive.pipe(Layer.provideMerge(AppRateLimitsSql))
).pipe(
  Layer.provideMerge(ReadinessChecksLive)
)
