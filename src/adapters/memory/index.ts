/**
 * The gateway's services without a database, for compositions that need no
 * storage (a test of a gateway over a custom engine, an example): in-memory
 * SecretStore, Meter, IdempotencyStore and AppRateLimits, a scripted
 * Downstream, and the no-op layers of what a gateway measures and limits.
 * docs/composing.md builds and tests a gateway with them.
 */
import { Layer } from "effect"
import { InstrumentsNoOp } from "../../platform/telemetry/Instruments.ts"
import { RateLimitingNoOp } from "../../services/RateLimiting.ts"
import { AppRateLimitsMemory } from "./AppRateLimitsMemory.ts"
import { IdempotencyMemory } from "./IdempotencyMemory.ts"
import { MeterMemory } from "./MeterMemory.ts"
import { ReadinessChecksMemory } from "./ReadinessChecksMemory.ts"
import { SecretStoreMemory } from "./SecretStoreMemory.ts"

export { AppRateLimitsMemory } from "./AppRateLimitsMemory.ts"
export { DownstreamScripted, type ScriptedEngine, type ScriptedHandler } from "./DownstreamScripted.ts"
export { IdempotencyMemory } from "./IdempotencyMemory.ts"
export { MeterMemory } from "./MeterMemory.ts"
export { ReadinessChecksMemory } from "./ReadinessChecksMemory.ts"
export { SecretStoreMemory } from "./SecretStoreMemory.ts"
export { InstrumentsNoOp, RateLimitingNoOp }

/**
 * Every service a gateway needs but its Downstream and AppConfig, in memory:
 * no rate limits, no metrics, `/ready` ready.
 */
export const GatewayServicesInMemory = Layer.mergeAll(
  SecretStoreMemory,
  MeterMemory,
  IdempotencyMemory,
  AppRateLimitsMemory,
  RateLimitingNoOp,
  InstrumentsNoOp,
  ReadinessChecksMemory
)
