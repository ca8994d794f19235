/**
 * The answers of keyed writes (`engine_idempotency`): one row per app and
 * key, with the request's fingerprint and the answer as JSON, kept 24 hours
 * (idempotency.ts decides when they are read and written).
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import type { IdempotentCall } from "../contract/EngineCall.ts"

/** How long an answer is kept: as long as the gateway's (IDEMPOTENCY_TTL_MS). */
const TTL_SECONDS = 24 * 60 * 60

/** Rows deleted per statement, and statements per purge. */
const PURGE_BATCH = 1_000
const PURGE_BATCHES = 10

export interface StoredAnswer {
  readonly fingerprint: string
  readonly answer: string
}

/** The live answer of the app's key, if there is one. */
export const storedAnswer = (sql: SqlClient.SqlClient, appId: string, key: string) =>
  Effect.map(
    sql<StoredAnswer>`
      SELECT fingerprint, answer::text AS answer FROM engine_idempotency
      WHERE app_id = ${appId} AND key = ${key} AND expires_at > now()`,
    (rows) => rows[0]
  )

/** Inserts the answer (or takes the place of an expired one); false when a live answer of the key is there already. */
export const insertAnswer = Effect.fnUntraced(function*(sql: SqlClient.SqlClient, appId: string, call: IdempotentCall, json: unknown) {
  const inserted = yield* sql<{ key: string }>`
    INSERT INTO engine_idempotency AS held (app_id, key, fingerprint, answer, created_at, expires_at)
    VALUES (${appId}, ${call.key}, ${call.fingerprint}, ${JSON.stringify({ answer: json })}::jsonb, now(),
            now() + make_interval(secs => ${TTL_SECONDS}))
    ON CONFLICT (app_id, key) DO UPDATE SET
      fingerprint = EXCLUDED.fingerprint, answer = EXCLUDED.answer,
      created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at
    WHERE held.expires_at <= now()
    RETURNING key`
  return inserted.length > 0
})

/** Deletes the answers whose 24 h are over, a bounded number at a time; answers how many. */
export const purgeExpiredAnswers = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  let purged = 0
  for (let batch = 0; batch < PURGE_BATCHES; batch++) {
    const rows = yield* sql<{ key: string }>`
      DELETE FROM engine_idempotency WHERE (app_id, key) IN (
        SELECT app_id, key FROM engine_idempotency WHERE expires_at <= now()
        ORDER BY expires_at LIMIT ${PURGE_BATCH} FOR UPDATE SKIP LOCKED
      )
      RETURNING key`
    purged += rows.length
    if (rows.length < PURGE_BATCH) break
  }
  return purged
})
