/**
 * The meter's table, `meter_event`, by month on PostgreSQL: a partition per
 * UTC month (`meter_event_y2026m11`), and a default partition for a row no
 * month holds (an instance whose clock is far off). Retention then drops
 * whole months (MeterUpkeepSql.ts) instead of deleting rows one by one.
 * The embedded database (PGlite) keeps one plain table, trimmed by batched
 * deletes: which one a database has is read from the table itself.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/** A month's partition: its name and bounds, the first instants of its month and of the next. */
export interface MonthPartition {
  readonly name: string
  readonly from: Date
  readonly to: Date
}

export const DEFAULT_PARTITION = "meter_event_default"

const NAME = /^meter_event_y(\d{4})m(\d{2})$/

/** The first instant (UTC) of the month of `at`, `months` later. */
export const monthStart = (at: Date, months = 0) => new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + months, 1))

/** The partition of the month that starts at `from`. */
export const monthPartition = (from: Date): MonthPartition => ({
  name: `meter_event_y${from.getUTCFullYear()}m${String(from.getUTCMonth() + 1).padStart(2, "0")}`,
  from,
  to: monthStart(from, 1)
})

/** The partition a name stands for, or undefined for another table. */
export const partitionOfName = (name: string): MonthPartition | undefined => {
  const match = NAME.exec(name)
  return match === null ? undefined : monthPartition(new Date(Date.UTC(Number(match[1]), Number(match[2]) - 1, 1)))
}

/** Whether `meter_event` is partitioned by month (PostgreSQL), or one plain table (the embedded database). */
export const meterIsPartitioned = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const [row] = yield* sql<{ partitioned: boolean }>`
    SELECT c.relkind = 'p' AS partitioned FROM pg_class c WHERE c.oid = to_regclass('meter_event')`
  return row?.partitioned === true
})

/** The month partitions that exist, oldest first. */
export const monthPartitions = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<{ name: string }>`
    SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
    WHERE i.inhparent = to_regclass('meter_event')`
  return rows.flatMap((row) => partitionOfName(row.name) ?? []).sort((a, b) => a.from.getTime() - b.from.getTime())
})

const literal = (at: Date) => `'${at.toISOString()}'`

/** The statement that creates a month's partition of a table without rows of its month elsewhere (a new table). */
export const createPartitionStatement = (partition: MonthPartition) =>
  `CREATE TABLE ${partition.name} PARTITION OF meter_event FOR VALUES FROM (${literal(partition.from)}) TO (${literal(partition.to)}) ` +
  "WITH (fillfactor = 50)"

/**
 * The month's partition, made if it is missing, in one transaction under
 * `lock` (the caller's advisory lock; nothing is done when another instance
 * holds it): a table like the meter's, the month's rows the default
 * partition holds moved into it, then attached (which checks the default
 * holds none of them any more). Answers whether it made it.
 */
export const ensurePartition = (partition: MonthPartition, lock: bigint) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.withTransaction(Effect.gen(function*() {
      const [locked] = yield* sql<{ locked: boolean }>`SELECT pg_try_advisory_xact_lock(${lock}) AS locked`
      if (locked?.locked !== true) return false
      const [existing] = yield* sql<{ found: boolean }>`SELECT to_regclass(${partition.name}) IS NOT NULL AS found`
      if (existing?.found === true) return false
      yield* sql.unsafe(`CREATE TABLE ${partition.name} (LIKE meter_event INCLUDING DEFAULTS) WITH (fillfactor = 50)`)
      yield* sql.unsafe(
        `WITH moved AS (DELETE FROM ${DEFAULT_PARTITION} WHERE occurred_at >= $1 AND occurred_at < $2 RETURNING *)
         INSERT INTO ${partition.name} SELECT * FROM moved`,
        [partition.from.toISOString(), partition.to.toISOString()]
      )
      yield* sql.unsafe(
        `ALTER TABLE meter_event ATTACH PARTITION ${partition.name} FOR VALUES FROM (${literal(partition.from)}) TO (${literal(partition.to)})`
      )
      return true
    })))
