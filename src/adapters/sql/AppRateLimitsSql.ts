/** AppRateLimits over SQL: one row per app with an override (table `app_rate_limit`, migration 0011). */
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { AppRateLimits, type RateLimitOverride } from "../../services/AppRateLimits.ts"
import { storageFailure } from "../storage/StorageErrors.ts"

interface OverrideRow {
  readonly request_limit: number
  readonly window_seconds: number
  readonly updated_at: Date
}

const overrideOf = (row: OverrideRow): RateLimitOverride => ({
  limit: Number(row.request_limit),
  windowSeconds: Number(row.window_seconds),
  updatedAt: new Date(row.updated_at)
})

export const AppRateLimitsSql = Layer.effect(
  AppRateLimits,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return AppRateLimits.of({
      get: (appId) =>
        sql<OverrideRow>`SELECT request_limit, window_seconds, updated_at FROM app_rate_limit WHERE app_id = ${appId}`.pipe(
          Effect.map((rows) => rows[0] === undefined ? undefined : overrideOf(rows[0])),
          Effect.catchTag("SqlError", storageFailure)
        ),
      set: (appId, policy) =>
        sql<OverrideRow>`
          INSERT INTO app_rate_limit (app_id, request_limit, window_seconds, updated_at)
          VALUES (${appId}, ${policy.limit}, ${policy.windowSeconds}, now())
          ON CONFLICT (app_id) DO UPDATE
          SET request_limit = EXCLUDED.request_limit, window_seconds = EXCLUDED.window_seconds, updated_at = EXCLUDED.updated_at
          RETURNING request_limit, window_seconds, updated_at`.pipe(
          Effect.map((rows) => overrideOf(rows[0]!)),
          Effect.catchTag("SqlError", storageFailure)
        ),
      clear: (appId) =>
        sql`DELETE FROM app_rate_limit WHERE app_id = ${appId}`.pipe(
          Effect.asVoid,
          Effect.catchTag("SqlError", storageFailure)
        )
    })
  })
)
