/**
 * Versioned schema migrations, applied at start (under the migrator's table
 * lock, so several instances starting together apply each once). One SQL
 * dialect serves PostgreSQL and embedded PGlite.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { partShapes } from "./migrations/0005_part_shapes.ts"

export const migrations = {
  "0001_incoming_secrets_and_metering": Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`
      CREATE TABLE incoming_secret (
        id text PRIMARY KEY,
        app_id text NOT NULL,
        name text,
        secret_hash text NOT NULL,
        ip_ranges text[] NOT NULL,
        created_at timestamptz NOT NULL,
        issued_at timestamptz NOT NULL,
        used_at timestamptz
      )`
    yield* sql`CREATE INDEX incoming_secret_app ON incoming_secret (app_id)`
    yield* sql`
      CREATE TABLE meter_event (
        request_id text PRIMARY KEY,
        app_id text NOT NULL,
        secret_id text NOT NULL,
        operation text NOT NULL,
        method text NOT NULL,
        route text NOT NULL,
        occurred_at timestamptz NOT NULL,
        status integer,
        duration_ms double precision
      )`
    yield* sql`CREATE INDEX meter_event_app_time ON meter_event (app_id, occurred_at)`
    yield* sql`CREATE INDEX meter_event_time ON meter_event (occurred_at)`
  }),
  "0002_engine_records": Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    // One table serves every resource of the engine: the resource definitions
    // (src/domain) decide the fields, the generic repository the queries.
    yield* sql`
      CREATE TABLE engine_record (
        resource text NOT NULL,
        id text NOT NULL,
        app_id text NOT NULL,
        data jsonb NOT NULL,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL,
        PRIMARY KEY (resource, id)
      )`
    yield* sql`CREATE INDEX engine_record_app_created ON engine_record (app_id, resource, created_at, id)`
  }),
  "0003_meter_by_secret": Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    // usedAt is derived from the meter rows (the latest call of a secret), so
    // the hot path never updates the secret's row; this index answers it.
    yield* sql`CREATE INDEX meter_event_secret_time ON meter_event (secret_id, occurred_at)`
  }),
  "0004_engine_numbers_and_lookups": Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    // Human numbers (P-000042) for records found by any identifier.
    yield* sql`CREATE SEQUENCE engine_number`
    yield* sql`CREATE INDEX engine_record_number ON engine_record (resource, (data->>'number'))`
    yield* sql`CREATE INDEX engine_record_external ON engine_record (resource, (data->>'externalReference'))`
  }),
  "0005_part_shapes": partShapes,
  // The relations the workflows follow by list: a ticket's parts and items, a part's versions and strategies.
  "0006_relation_indexes": Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE INDEX engine_record_ticket ON engine_record (resource, (data->>'ticketId'))`
    yield* sql`CREATE INDEX engine_record_ticket_model ON engine_record (resource, (data->>'ticketModelId'))`
  }),
  // A call's outcome (status, duration) is written into its meter row shortly after the row. Room left on each
  // page lets that update stay on the page (a HOT update: no new entry in the table's four indexes), which
  // roughly halved PostgreSQL's work per call under load.
  "0007_meter_outcome_room": Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`ALTER TABLE meter_event SET (fillfactor = 70)`
  })
}
