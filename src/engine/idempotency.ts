/**
 * A keyed write (`Idempotency-Key`) in the engine: its answer is committed
 * in the same transaction as its writes, in `engine_idempotency` (per app and
 * key, 24 h), so that whatever crashes after the commit (the gateway, the
 * engine, the connection), a retry with the key finds the answer and answers
 * it again instead of writing twice. The gateway keeps its own record of the
 * key (src/adapters/sql/IdempotencySql.ts: one call at a time, the HTTP answer
 * replayed); this is what makes the write itself happen once, for the
 * embedded engine and a remote one alike.
 *
 *   answer stored for the key ┬ same request ── the stored answer, nothing run (`onReplay`)
 *                             └ other request ─ 422 IdempotencyKeyReused
 *   none ── the operation, in one lazy transaction (writeTransaction.ts),
 *           its answer inserted last, then COMMIT
 *             └ the key taken meanwhile by a call that committed first:
 *               everything rolled back, and that call's answer answered
 *
 * Only answers are stored: a refusal rolls its writes back, so its retry
 * runs again harmlessly (the gateway replays refusals itself).
 *
 * An operation that calls out between its writes (SENDS_BETWEEN_WRITES: a
 * webhook endpoint's test delivers its request) is not held in one
 * transaction, which would stay open for as long as the receiver takes: its
 * writes commit as they always do and its answer is stored right after. A
 * retry after a crash in between runs it again (one more test request).
 */
import { Data, Effect, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { answerCodec } from "../contract/EngineAnswer.ts"
import type { IdempotentCall } from "../contract/EngineCall.ts"
import type { OperationEndpoint } from "../contract/Operations.ts"
import { EngineError } from "./EngineError.ts"
import type { Step } from "./Operation.ts"
import { makeWriteTransaction } from "./writeTransaction.ts"

/** Operations that call out between their writes: their answer is stored after them, not with them. */
const SENDS_BETWEEN_WRITES: ReadonlySet<string> = new Set(["webhookEndpoint.test"])

/** How long an answer is kept: as long as the gateway's (IDEMPOTENCY_TTL_MS). */
const TTL_SECONDS = 24 * 60 * 60

/** Rows deleted per statement, and statements per purge. */
const PURGE_BATCH = 1_000
const PURGE_BATCHES = 10

interface StoredRow {
  readonly fingerprint: string
  readonly answer: string
}

/** The call that committed the key first, found when this one tried to store its answer. */
class KeyTaken extends Data.TaggedError("KeyTaken") {}

const decodeJson = Schema.decodeUnknownEffect(Schema.fromJsonString(Schema.Unknown))

const storedAnswer = (sql: SqlClient.SqlClient, appId: string, key: string) =>
  Effect.map(
    sql<StoredRow>`
      SELECT fingerprint, answer::text AS answer FROM engine_idempotency
      WHERE app_id = ${appId} AND key = ${key} AND expires_at > now()`,
    (rows) => rows[0]
  )

/** The stored answer, decoded as the endpoint's answer; or the 422 when the key was another request's. */
const replay = Effect.fnUntraced(function*(endpoint: OperationEndpoint, call: IdempotentCall, row: StoredRow) {
  if (row.fingerprint !== call.fingerprint) return yield* EngineError.idempotencyKeyReused(call.key)
  // Stored by this engine from the same endpoint's schema: one that does not decode is a defect.
  const json = yield* Effect.orDie(decodeJson(row.answer))
  const answer = yield* Effect.orDie(answerCodec(endpoint).decode((json as { readonly answer: unknown }).answer))
  call.onReplay?.()
  return answer
})

/** Inserts the answer; fails KeyTaken when a live answer of the key is there already (committed by another call). */
const storeAnswer = Effect.fnUntraced(function*(sql: SqlClient.SqlClient, appId: string, call: IdempotentCall, json: unknown) {
  const inserted = yield* sql<{ key: string }>`
    INSERT INTO engine_idempotency AS held (app_id, key, fingerprint, answer, created_at, expires_at)
    VALUES (${appId}, ${call.key}, ${call.fingerprint}, ${JSON.stringify({ answer: json })}::jsonb, now(),
            now() + make_interval(secs => ${TTL_SECONDS}))
    ON CONFLICT (app_id, key) DO UPDATE SET
      fingerprint = EXCLUDED.fingerprint, answer = EXCLUDED.answer,
      created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at
    WHERE held.expires_at <= now()
    RETURNING key`
  if (inserted.length === 0) return yield* new KeyTaken()
})

/**
 * Runs `step`, the operation `endpoint` is, as a keyed write: the stored
 * answer if there is one, else the operation with its answer committed with
 * its writes. The call must run with `client` as its SqlClient. A storage
 * failure is mapped by the caller; when the COMMIT's answer was lost with the
 * connection, `outcomeUnknown` says so.
 */
export const runKeyed = <A>(
  sql: SqlClient.SqlClient,
  endpoint: OperationEndpoint,
  operation: string,
  appId: string,
  call: IdempotentCall,
  step: Step<A>
) => {
  const transaction = makeWriteTransaction(sql)
  const codec = answerCodec(endpoint)
  const stored = storedAnswer(sql, appId, call.key)
  const atomic = !SENDS_BETWEEN_WRITES.has(operation)
  const run: Step<A> = Effect.flatMap(stored, (row) =>
    row !== undefined
      ? replay(endpoint, call, row) as Step<A>
      : (atomic ? transaction.run : <X, E, R>(effect: Effect.Effect<X, E, R>) => effect)(Effect.tap(step, (answer) =>
        // The engine's answer must fit its schema: one that does not is a defect, and nothing is kept.
        Effect.flatMap(Effect.orDie(codec.encode(answer)), (json) => storeAnswer(sql, appId, call, json)))).pipe(
          Effect.catchTag("KeyTaken", () =>
            Effect.flatMap(stored, (row) =>
              row === undefined
                // Taken and expired between the two statements: as good as in use.
                ? Effect.die(new Error(`Idempotency-Key ${call.key}: answer taken and gone`))
                : replay(endpoint, call, row) as Step<A>))
        ))
  return atomic
    ? { run, client: transaction.client, outcomeUnknown: transaction.outcomeUnknown }
    : { run, client: sql, outcomeUnknown: undefined }
}

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
