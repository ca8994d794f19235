/**
 * Versioned schema migrations, applied at start (under the migrator's table
 * lock, so several instances starting together apply each once). One SQL
 * dialect serves PostgreSQL and embedded PGlite.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { partShapes } from "./migrations/0005_part_shapes.ts"
import { appRateLimits } from "./migrations/0011_app_rate_limits.ts"
import { modelFiles } from "./migrations/0012_model_files.ts"
import { events } from "./migrations/0013_events.ts"
import { webhookDeliveryLeases } from "./migrations/0014_webhook_delivery_leases.ts"
import { meterRetention } from "./migrations/0017_meter_retention.ts"
import { recordsPerApp } from "./migrations/0018_records_per_app.ts"
import { modelFileUnits } from "./migrations/0019_model_file_units.ts"
import { secretGrants } from "./migrations/0020_secret_grants.ts"

/**
 * Migration 0008: record numbers counted per app and prefix, and an
 * `externalReference` held by one record per app and resource.
 *
 * - `engine_counter` holds each app's last number per prefix (`T`, `P`, `Q`);
 *   RecordRepository.insert takes the next one in the statement that stores
 *   the record. Records keep the numbers the shared sequence gave them, and
 *   each app's counter starts after its highest, so no number is given twice.
 *   The `engine_number` sequence stays: reel group ids came from it until
 *   migration 0018 counted them per app too.
 * - Numbers, and external references, are unique per app and resource by
 *   partial unique indexes, which hold under concurrent writes whatever code
 *   path writes. Of records that already share an external reference, the
 *   oldest keeps it (the one a lookup answered); the others keep the value
 *   under `duplicateExternalReference`, which reads do not show.
 */
const numbersPerApp = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE engine_counter (
      app_id text NOT NULL,
      prefix text NOT NULL,
      value bigint NOT NULL,
      PRIMARY KEY (app_id, prefix)
    )`
  yield* sql`
    INSERT INTO engine_counter (app_id, prefix, value)
    SELECT app_id, substring(data->>'number' from '^(.+)-[0-9]+$'), max(substring(data->>'number' from '-([0-9]+)$')::bigint)
    FROM engine_record
    WHERE data->>'number' ~ '^.+-[0-9]+$'
    GROUP BY 1, 2`
  yield* sql`
    CREATE UNIQUE INDEX engine_record_number_unique ON engine_record (app_id, resource, (data->>'number'))
    WHERE data->>'number' IS NOT NULL`
  yield* sql`
    UPDATE engine_record AS record
    SET data = (record.data - 'externalReference') || jsonb_build_object('duplicateExternalReference', record.data->'externalReference')
    FROM (
      SELECT resource, id, row_number() OVER (PARTITION BY app_id, resource, data->>'externalReference' ORDER BY created_at, id) AS position
      FROM engine_record
      WHERE data->>'externalReference' IS NOT NULL
    ) AS ranked
    WHERE record.resource = ranked.resource AND record.id = ranked.id AND ranked.position > 1`
  yield* sql`
    CREATE UNIQUE INDEX engine_record_external_reference_unique ON engine_record (app_id, resource, (data->>'externalReference'))
    WHERE data->>'externalReference' IS NOT NULL`
})

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
  }),
  "0008_numbers_per_app_and_unique_external_references": numbersPerApp,
  // An app's own exchange rate of a currency, replacing the engine's reference rate for that app
  // (PUT /currency/{id}/exchange-rate, src/engine/pricing/exchangeRates.ts).
  "0009_app_exchange_rates": Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`
      CREATE TABLE engine_exchange_rate (
        app_id text NOT NULL,
        currency_id text NOT NULL,
        exchange_rate double precision NOT NULL CHECK (exchange_rate > 0),
        updated_at timestamptz NOT NULL,
        PRIMARY KEY (app_id, currency_id)
      )`
  }),
  // The answers of calls made with an Idempotency-Key, per app and key, for 24 h (src/adapters/sql/IdempotencySql.ts).
  "0010_idempotency_keys": Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`
      CREATE TABLE idempotency_key (
        app_id text NOT NULL,
        key text NOT NULL,
        fingerprint text NOT NULL,
        owner text NOT NULL,
        state text NOT NULL CHECK (state IN ('running', 'done')),
        status integer,
        headers jsonb,
        body text,
        created_at timestamptz NOT NULL,
        expires_at timestamptz NOT NULL,
        lease_until timestamptz,
        PRIMARY KEY (app_id, key)
      )`
    yield* sql`CREATE INDEX idempotency_key_expires ON idempotency_key (expires_at)`
  }),
  "0011_app_rate_limits": appRateLimits,
  "0012_model_files": modelFiles,
  "0013_events": events,
  "0014_webhook_delivery_leases": webhookDeliveryLeases,
  // Room for every outcome update, not some of them: a meter row is about 180 bytes, so at 70 % a page takes
  // 31 rows and has room for 12 updated ones, and the outcomes of one batch (one transaction) update them all
  // before any old version can be pruned: 45 % of the updates stayed on their page. At 50 %, 95 % do
  // (bench/README.md, "The meter row's second write"). New pages only; existing ones keep their rows.
  "0015_meter_outcome_room_for_all": Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`ALTER TABLE meter_event SET (fillfactor = 50)`
  }),
  // The engine's answers of keyed writes, committed with the writes they answer (src/engine/idempotency.ts).
  "0016_engine_idempotency": Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`
      CREATE TABLE engine_idempotency (
        app_id text NOT NULL,
        key text NOT NULL,
        fingerprint text NOT NULL,
        answer jsonb NOT NULL,
        created_at timestamptz NOT NULL,
        expires_at timestamptz NOT NULL,
        PRIMARY KEY (app_id, key)
      )`
    yield* sql`CREATE INDEX engine_idempotency_expires ON engine_idempotency (expires_at)`
  }),
  "0017_meter_retention": meterRetention,
  "0018_records_per_app": recordsPerApp,
  "0019_model_file_units": modelFileUnits,
  "0020_secret_grants": secretGrants
}
