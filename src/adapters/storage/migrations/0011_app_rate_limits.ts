/**
 * Migration 0011: `app_rate_limit`, the apps whose budget is not RATE_LIMIT's
 * (set through the admin API or the CLI). An app without a row has the
 * default; gateways read a row at most every few seconds per app
 * (src/gateway/request/RateLimiting.ts), never per call.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export const appRateLimits = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE app_rate_limit (
      app_id text PRIMARY KEY,
      request_limit integer NOT NULL CHECK (request_limit > 0),
      window_seconds integer NOT NULL CHECK (window_seconds > 0),
      updated_at timestamptz NOT NULL
    )`
})
