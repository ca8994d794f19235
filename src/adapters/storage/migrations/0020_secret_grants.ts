/**
 * Migration 0020: what a secret allows, and what the request log shows.
 *
 * - `incoming_secret` takes the secret's grants: `scopes` (every scope for
 *   the secrets that exist, so they keep working), `mode` (`live` or `test`),
 *   `max_accept_total` (EUR, none when null) and `grants_version`, which
 *   every change of them increments: the meter's flush writes a call's row
 *   only while the version the call was decided with is current, as it does
 *   for the secret's hash (src/adapters/sql/MeterSql.ts).
 * - `meter_event` takes the call's `mode` (the request log and usage of a
 *   test secret are the test space's), its `client_address` and, with its
 *   outcome, the `error_type` of a refusal (GET /v1/request-log); the daily
 *   totals retention keeps (`meter_daily`) are per mode as well, so usage by
 *   mode answers the same before and after a retention run.
 *
 * Columns with a constant default are added without rewriting the tables.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export const secretGrants = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    ALTER TABLE incoming_secret
      ADD COLUMN scopes text[] NOT NULL DEFAULT ARRAY['read', 'write', 'quote', 'order', 'webhooks']::text[],
      ADD COLUMN mode text NOT NULL DEFAULT 'live' CHECK (mode IN ('live', 'test')),
      ADD COLUMN max_accept_total numeric(15, 2) CHECK (max_accept_total >= 0),
      ADD COLUMN grants_version integer NOT NULL DEFAULT 0`
  yield* sql`
    ALTER TABLE meter_event
      ADD COLUMN mode text NOT NULL DEFAULT 'live',
      ADD COLUMN client_address text,
      ADD COLUMN error_type text`
  yield* sql`ALTER TABLE meter_daily ADD COLUMN mode text NOT NULL DEFAULT 'live'`
  yield* sql`ALTER TABLE meter_daily DROP CONSTRAINT meter_daily_pkey`
  yield* sql`ALTER TABLE meter_daily ADD PRIMARY KEY (day, app_id, mode, operation)`
})
