/**
 * MeterUpkeep over SQL (src/services/MeterUpkeep.ts), and its schedule on a
 * server: the sweep every half METER_OUTCOME_TIMEOUT (at most 30 s), the
 * retention run a minute after start and then every hour.
 *
 * Each step runs in a transaction that first takes a PostgreSQL advisory
 * lock without waiting (`pg_try_advisory_xact_lock`): one instance does it,
 * the others find it taken and skip it.
 *
 * **The sweep.** A call's row is committed before its answer; its outcome
 * (status, duration) follows within a second, written in the background. An
 * instance killed in between leaves rows with no status. The sweep marks
 * those older than the timeout `outcome_unknown`, so that nothing reads them
 * as failed or as succeeded; an outcome that comes after all (an instance
 * that was frozen, not dead) replaces the mark. It reads only the rows since
 * its last horizon (kept in `meter_upkeep`), less a minute for instances
 * whose clock is a little behind the database's, so each sweep costs the
 * calls of its interval, not the table.
 *
 * **Retention.** Rows older than the start of the UTC day METER_RETENTION
 * ago are rolled up into `meter_daily` (calls, failed, unknown outcomes per
 * day, app, mode and operation) and removed in the same transaction, so every call
 * is counted once, as a row or in a day's totals: usage answers the same
 * totals before and after. On PostgreSQL a month's partition goes whole once
 * its month is entirely past the cutoff (rows are kept up to a month longer
 * than the retention); rows in the default partition, and the embedded
 * database's single table, go in batches of RETENTION_BATCH. The run also
 * makes the partitions of this month and the next two.
 */
import { Duration, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { AppConfig } from "../../services/AppConfig.ts"
import { MeterUpkeep, type RetentionRun } from "../../services/MeterUpkeep.ts"
import { DEFAULT_PARTITION, ensurePartition, meterIsPartitioned, monthPartition, monthPartitions, monthStart } from "../storage/MeterPartitions.ts"
import { storageFailure } from "../storage/StorageErrors.ts"

/** The advisory locks' keys (any two constants no other code uses). */
const SWEEP_LOCK = 0x6d66_6701n
const RETENTION_LOCK = 0x6d66_6702n

/** How far before its last horizon a sweep looks again: rows of an instance whose clock is behind the database's. */
const SWEEP_LOOKBACK_SECONDS = 60
/** The longest between two sweeps. */
const MAX_SWEEP_INTERVAL = Duration.seconds(30)

/** Rows removed per statement outside whole partitions. */
export const RETENTION_BATCH = 5_000

const RETENTION_FIRST_RUN = "1 minute"
const RETENTION_INTERVAL = "1 hour"

/** The first instant (UTC) of the day of `at`. */
const dayStart = (at: Date) => new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate()))

/** Rolls the rows of `source` selected by `rows` (a statement naming them in `doomed`) into meter_daily. */
const ROLL_UP = `
  INSERT INTO meter_daily (day, app_id, mode, operation, calls, failed, outcome_unknown)
  SELECT (occurred_at AT TIME ZONE 'UTC')::date, app_id, mode, operation, count(*),
         count(*) FILTER (WHERE status >= 400), count(*) FILTER (WHERE outcome_unknown OR status IS NULL)
  FROM doomed GROUP BY 1, 2, 3, 4
  ON CONFLICT (day, app_id, mode, operation) DO UPDATE SET
    calls = meter_daily.calls + EXCLUDED.calls,
    failed = meter_daily.failed + EXCLUDED.failed,
    outcome_unknown = meter_daily.outcome_unknown + EXCLUDED.outcome_unknown`

/**
 * Keeps each secret's last use from the rows in `doomed`: a secret's `usedAt` is the later of its stored
 * `used_at` and its latest meter row (SecretStoreSql), so removing its rows must not move it back.
 */
const KEEP_LAST_USE = `
  UPDATE incoming_secret s SET used_at = GREATEST(COALESCE(s.used_at, u.last), u.last)
  FROM (SELECT secret_id, max(occurred_at) AS last FROM doomed GROUP BY secret_id ORDER BY secret_id) u
  WHERE s.id = u.secret_id`

export const makeMeterUpkeep = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const config = yield* AppConfig
  const timeoutSeconds = Duration.toSeconds(config.meterOutcomeTimeout)

  /** `step` in a transaction holding `lock`, or undefined without running it when another instance holds it. */
  const underLock = <A, E, R>(lock: bigint, step: Effect.Effect<A, E, R>) =>
    sql.withTransaction(Effect.gen(function*() {
      const [row] = yield* sql<{ locked: boolean }>`SELECT pg_try_advisory_xact_lock(${lock}) AS locked`
      return row?.locked === true ? yield* step : undefined
    }))

  const sweep = underLock(
    SWEEP_LOCK,
    Effect.gen(function*() {
      const [upkeep] = yield* sql<{ since: string | null; horizon: string }>`
        SELECT (swept_until - make_interval(secs => ${SWEEP_LOOKBACK_SECONDS}))::text AS since,
               (now() - make_interval(secs => ${timeoutSeconds}))::text AS horizon
        FROM meter_upkeep WHERE id = 1`
      const horizon = upkeep!.horizon
      const settled = yield* sql<{ request_id: string }>`
        UPDATE meter_event SET outcome_unknown = true
        WHERE status IS NULL AND NOT outcome_unknown AND occurred_at < ${horizon}::timestamptz
          ${upkeep!.since === null ? sql`` : sql`AND occurred_at >= ${upkeep!.since}::timestamptz`}
        RETURNING request_id`.unprepared
      yield* sql`UPDATE meter_upkeep SET swept_until = ${horizon}::timestamptz WHERE id = 1`
      return settled.length
    })
  ).pipe(
    Effect.map((settled) => settled ?? 0),
    Effect.tap((settled) => settled === 0 ? Effect.void : Effect.logWarning("meter outcomes settled as unknown").pipe(Effect.annotateLogs({ rows: settled }))),
    Effect.catchTag("SqlError", storageFailure),
    Effect.withSpan("MeterUpkeep.sweep")
  )

  /** One batch of `table`'s rows older than `cutoff`, rolled up and removed; answers how many, or undefined when locked out. */
  const removeBatch = (table: string, cutoff: Date) =>
    underLock(
      RETENTION_LOCK,
      Effect.map(
        sql.unsafe<{ n: number }>(
          `WITH doomed AS (
             DELETE FROM ${table} WHERE (request_id, occurred_at) IN (
               SELECT request_id, occurred_at FROM ${table} WHERE occurred_at < $1 ORDER BY occurred_at LIMIT $2
             )
             RETURNING app_id, secret_id, mode, operation, occurred_at, status, outcome_unknown
           ),
           rolled AS (${ROLL_UP} RETURNING 1),
           kept AS (${KEEP_LAST_USE} RETURNING 1)
           SELECT count(*)::int AS n FROM doomed`,
          [cutoff.toISOString(), RETENTION_BATCH]
        ),
        (rows) => rows[0]!.n
      )
    )

  /** A month's partition rolled up and dropped in one transaction; false when locked out. */
  const dropPartition = (name: string) =>
    underLock(
      RETENTION_LOCK,
      Effect.gen(function*() {
        const [counted] = yield* sql.unsafe<{ n: number }>(
          `WITH doomed AS (SELECT app_id, secret_id, mode, operation, occurred_at, status, outcome_unknown FROM ${name}),
                rolled AS (${ROLL_UP} RETURNING 1),
                kept AS (${KEEP_LAST_USE} RETURNING 1)
           SELECT count(*)::int AS n FROM doomed`
        )
        yield* sql.unsafe(`DROP TABLE ${name}`)
        return counted!.n
      })
    )

  const retain = (now: Date = new Date()) =>
    Effect.gen(function*() {
      const cutoff = dayStart(new Date(now.getTime() - Duration.toMillis(config.meterRetention)))
      const partitioned = yield* meterIsPartitioned
      const dropped: Array<string> = []
      let rowsRemoved = 0
      if (partitioned) {
        for (let month = 0; month <= 2; month++) yield* ensurePartition(monthPartition(monthStart(now, month)), RETENTION_LOCK)
        for (const partition of yield* monthPartitions) {
          if (partition.to > cutoff) break
          const removed = yield* dropPartition(partition.name)
          if (removed === undefined) return { cutoff, rowsRemoved, partitionsDropped: dropped, ran: false } satisfies RetentionRun
          rowsRemoved += removed
          dropped.push(partition.name)
        }
      }
      const table = partitioned ? DEFAULT_PARTITION : "meter_event"
      while (true) {
        const removed = yield* removeBatch(table, cutoff)
        if (removed === undefined) return { cutoff, rowsRemoved, partitionsDropped: dropped, ran: dropped.length > 0 } satisfies RetentionRun
        rowsRemoved += removed
        if (removed < RETENTION_BATCH) break
      }
      if (rowsRemoved > 0) {
        yield* Effect.logInfo("meter retention").pipe(
          Effect.annotateLogs({ cutoff: cutoff.toISOString(), rowsRemoved, partitionsDropped: dropped.join(",") })
        )
      }
      return { cutoff, rowsRemoved, partitionsDropped: dropped, ran: true } satisfies RetentionRun
    }).pipe(
      Effect.provideService(SqlClient.SqlClient, sql),
      Effect.catchTag("SqlError", storageFailure),
      Effect.withSpan("MeterUpkeep.retain")
    )

  return MeterUpkeep.of({ sweep, retain })
})

/** MeterUpkeep, without a schedule (the CLI, tests that run a step themselves). */
export const MeterUpkeepSql = Layer.effect(MeterUpkeep, makeMeterUpkeep)

/** MeterUpkeep, and its steps run on schedule for as long as the layer lives (a server). */
export const MeterUpkeepLive = Layer.effect(
  MeterUpkeep,
  Effect.gen(function*() {
    const upkeep = yield* makeMeterUpkeep
    const config = yield* AppConfig
    const sweepEvery = Duration.min(MAX_SWEEP_INTERVAL, Duration.divideUnsafe(config.meterOutcomeTimeout, 2))
    // A failed step (an outage) is tried again at the next turn; the warning says why.
    yield* Effect.forkScoped(
      upkeep.sweep.pipe(
        Effect.catchCause((cause) => Effect.logWarning("meter sweep failed", cause)),
        Effect.delay(sweepEvery),
        Effect.forever
      )
    )
    yield* Effect.forkScoped(
      upkeep.retain().pipe(
        Effect.catchCause((cause) => Effect.logWarning("meter retention failed", cause)),
        Effect.andThen(Effect.sleep(RETENTION_INTERVAL)),
        Effect.forever,
        Effect.delay(RETENTION_FIRST_RUN)
      )
    )
    return upkeep
  })
)
