/**
 * Migration 0017: meter rows that are settled when their outcome never came,
 * and kept for METER_RETENTION (docs/operations.md, "Meter retention").
 *
 * - `meter_event.outcome_unknown`: the row of a call whose status and
 *   duration were never written (its instance died first), settled by the
 *   sweep (MeterUpkeepSql.ts) once METER_OUTCOME_TIMEOUT has passed.
 * - On PostgreSQL `meter_event` becomes a table partitioned by UTC month,
 *   its rows copied over (retention then drops whole months); its primary key
 *   is (request_id, occurred_at), as a partitioned table's must hold its
 *   partition key. The embedded database keeps one plain table.
 * - `meter_daily`: the usage totals per UTC day, app and operation of the
 *   rows retention removed, so that usage answers the same totals after.
 * - `meter_upkeep`: one row, the sweep's horizon.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { createPartitionStatement, DEFAULT_PARTITION, monthPartition, monthStart } from "../MeterPartitions.ts"

const COLUMNS = "request_id, app_id, secret_id, operation, method, route, occurred_at, status, duration_ms"

const partitionByMonth = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE meter_event RENAME TO meter_event_unpartitioned`
  yield* sql`
    CREATE TABLE meter_event (
      request_id text NOT NULL,
      app_id text NOT NULL,
      secret_id text NOT NULL,
      operation text NOT NULL,
      method text NOT NULL,
      route text NOT NULL,
      occurred_at timestamptz NOT NULL,
      status integer,
      duration_ms double precision,
      outcome_unknown boolean NOT NULL DEFAULT false
    ) PARTITION BY RANGE (occurred_at)`
  yield* sql.unsafe(`CREATE TABLE ${DEFAULT_PARTITION} PARTITION OF meter_event DEFAULT WITH (fillfactor = 50)`)
  const [span] = yield* sql<{ oldest: Date | null; now: Date }>`
    SELECT min(occurred_at) AS oldest, now() AS now FROM meter_event_unpartitioned`
  const now = new Date(span!.now)
  const last = monthStart(now, 2)
  for (let month = monthStart(span!.oldest === null ? now : new Date(span!.oldest)); month <= last; month = monthStart(month, 1)) {
    yield* sql.unsafe(createPartitionStatement(monthPartition(month)))
  }
  yield* sql.unsafe(`INSERT INTO meter_event (${COLUMNS}) SELECT ${COLUMNS} FROM meter_event_unpartitioned`)
  yield* sql`DROP TABLE meter_event_unpartitioned`
  yield* sql`ALTER TABLE meter_event ADD PRIMARY KEY (request_id, occurred_at)`
  yield* sql`CREATE INDEX meter_event_app_time ON meter_event (app_id, occurred_at)`
  yield* sql`CREATE INDEX meter_event_time ON meter_event (occurred_at)`
  yield* sql`CREATE INDEX meter_event_secret_time ON meter_event (secret_id, occurred_at)`
})

export const meterRetention = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const [{ embedded } = { embedded: false }] = yield* sql<{ embedded: boolean }>`SELECT version() LIKE '%PGlite%' AS embedded`
  if (embedded) {
    yield* sql`ALTER TABLE meter_event ADD COLUMN outcome_unknown boolean NOT NULL DEFAULT false`
  } else {
    yield* partitionByMonth
  }
  yield* sql`
    CREATE TABLE meter_daily (
      day date NOT NULL,
      app_id text NOT NULL,
      operation text NOT NULL,
      calls bigint NOT NULL,
      failed bigint NOT NULL,
      outcome_unknown bigint NOT NULL,
      PRIMARY KEY (day, app_id, operation)
    )`
  yield* sql`CREATE INDEX meter_daily_app_day ON meter_daily (app_id, day)`
  yield* sql`
    CREATE TABLE meter_upkeep (
      id integer PRIMARY KEY CHECK (id = 1),
      swept_until timestamptz
    )`
  yield* sql`INSERT INTO meter_upkeep (id, swept_until) VALUES (1, NULL)`
})
