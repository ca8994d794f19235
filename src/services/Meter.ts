/**
 * Meter: every authenticated call is recorded durably before it is answered
 * (and before its handler runs, unless the call only reads).
 *
 * Concurrent calls share one INSERT (group commit). The same statement moves
 * the secrets' `usedAt` forward and confirms each secret is still current, so
 * a secret revoked or regenerated on any instance fails its very next call.
 */
import { Context, type Effect } from "effect"
import type { ServiceUnavailable } from "../domain/Errors.ts"
import type { MeterEvent, UsageTotals } from "../domain/Usage.ts"
import type { AuthenticationFailed } from "./SecretStore.ts"

export interface UsageFilter {
  readonly appId?: string | undefined
  readonly from?: Date | undefined
  readonly to?: Date | undefined
}

export class Meter extends Context.Service<Meter, {
  /**
   * Queues the call's event and answers its receipt: an Effect that succeeds
   * once the event is durable, and fails when the secret is no longer current
   * or storage is down. A caller may do read-only work between the two.
   */
  readonly submit: (event: MeterEvent) => Effect.Effect<Effect.Effect<void, AuthenticationFailed | ServiceUnavailable>>
  /** Adds the outcome of a recorded call, named by its request id and time (written in the background, drained at shutdown). */
  readonly complete: (requestId: string, occurredAt: Date, status: number, durationMs: number) => void
  readonly usage: (filter: UsageFilter) => Effect.Effect<UsageTotals, ServiceUnavailable>
}>()("mfg/services/Meter") {}
