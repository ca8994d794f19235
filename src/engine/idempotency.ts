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
import type { SqlClient } from "effect/sql"
import { answerCodec } from "../contract/EngineAnswer.ts"
import type { IdempotentCall } from "../contract/EngineCall.ts"
import type { OperationEndpoint } from "../contract/Operations.ts"
import { EngineError } from "./EngineError.ts"
import { insertAnswer, type StoredAnswer, storedAnswer } from "./IdempotencyRepository.ts"
import type { Step } from "./Operation.ts"
import { makeWriteTransaction } from "./writeTransaction.ts"

/** Operations that call out between their writes: their answer is stored after them, not with them. */
const SENDS_BETWEEN_WRITES: ReadonlySet<string> = new Set(["webhookEndpoint.test"])

/** The call that committed the key first, found when this one tried to store its answer. */
class KeyTaken extends Data.TaggedError("KeyTaken") {}

const decodeJson = Schema.decodeUnknownEffect(Schema.fromJsonString(Schema.Unknown))

/** The stored answer, decoded as the endpoint's answer; or the 422 when the key was another request's. */
const replay = Effect.fnUntraced(function*(endpoint: OperationEndpoint, call: IdempotentCall, row: StoredAnswer) {
  if (row.fingerprint !== call.fingerprint) return yield* EngineError.idempotencyKeyReused(call.key)
  // Stored by this engine from the same endpoint's schema: one that does not decode is a defect.
  const json = yield* Effect.orDie(decodeJson(row.answer))
  const answer = yield* Effect.orDie(answerCodec(endpoint).decode((json as { readonly answer: unknown }).answer))
  call.onReplay?.()
  return answer
})

/** Inserts the answer; fails KeyTaken when a live answer of the key is there already (committed by another call). */
const storeAnswer = (sql: SqlClient.SqlClient, appId: string, call: IdempotentCall, json: unknown) =>
  Effect.flatMap(insertAnswer(sql, appId, call, json), (inserted) => inserted ? Effect.void : Effect.fail(new KeyTaken()))

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
