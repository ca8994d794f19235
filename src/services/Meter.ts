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
import type { Mode } from "../domain/Grants.ts"
import type { RequestLogEntry, RequestLogQuery } from "../domain/RequestLog.ts"
import type { MeterEvent, UsageTotals } from "../domain/Usage.ts"
import type { AuthenticationFailed } from "./SecretStore.ts"

export interface UsageFilter {
  readonly appId?: string | undefined
  /** The calls of secrets of this mode; both when absent. */
  readonly mode?: Mode | undefined
  readonly from?: Date | undefined
  readonly to?: Date | undefined
}

/** Which calls a request log page lists: an app's, in one mode, filtered as the query says. */
export interface RequestLogFilter {
  readonly appId: string
  readonly mode: Mode
  readonly query: RequestLogQuery
  /** The call reading the log: metered like any, and never in the page it answers. */
  readonly reader: string
}

export class Meter extends Context.Service<Meter, {
  /**
   * Queues the call's event and answers its receipt: an Effect that succeeds
   * once the event is durable, and fails when the secret is no longer current
   * or storage is down. A caller may do read-only work between the two.
   */
  readonly submit: (event: MeterEvent) => Effect.Effect<Effect.Effect<void, AuthenticationFailed | ServiceUnavailable>>
  /**
   * Adds the outcome of a recorded call, named by its request id and time (written in the background, drained at
   * shutdown); `errorType` of an error answer.
   */
  readonly complete: (requestId: string, occurredAt: Date, status: number, durationMs: number, errorType?: string | undefined) => void
  readonly usage: (filter: UsageFilter) => Effect.Effect<UsageTotals, ServiceUnavailable>
  /** A page of an app's calls, oldest first, and how many match in all. */
  readonly requestLog: (
    filter: RequestLogFilter
  ) => Effect.Effect<{ readonly items: ReadonlyArray<RequestLogEntry>; readonly total: number }, ServiceUnavailable>
}>()("mfg/services/Meter") {}
