/**
 * The meter's upkeep, on every instance, each step under a database lock so
 * that one instance at a time does it (src/adapters/sql/MeterUpkeepSql.ts):
 *
 * - the sweep settles the rows of calls whose outcome never came (their
 *   instance died between the call and its outcome write) as unknown, once
 *   METER_OUTCOME_TIMEOUT has passed;
 * - retention keeps METER_RETENTION of rows: older ones are removed (whole
 *   monthly partitions on PostgreSQL, batched deletes on the embedded
 *   database) once their usage totals are kept per day (`meter_daily`).
 */
import { Context, type Effect } from "effect"
import type { ServiceUnavailable } from "../domain/Errors.ts"

/** What a retention run did. */
export interface RetentionRun {
  /** Rows older than this (the start of a UTC day) were due. */
  readonly cutoff: Date
  /** Meter rows removed, their totals kept per day. */
  readonly rowsRemoved: number
  /** Monthly partitions dropped whole (PostgreSQL). */
  readonly partitionsDropped: ReadonlyArray<string>
  /** False when another instance was running it (nothing done). */
  readonly ran: boolean
}

export class MeterUpkeep extends Context.Service<MeterUpkeep, {
  /** Settles the rows left without an outcome past the timeout as unknown; answers how many (0 when another instance sweeps). */
  readonly sweep: Effect.Effect<number, ServiceUnavailable>
  /** Applies METER_RETENTION as of `now` (default: the current time). */
  readonly retain: (now?: Date) => Effect.Effect<RetentionRun, ServiceUnavailable>
}>()("mfg/services/MeterUpkeep") {}
