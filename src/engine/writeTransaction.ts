/**
 * One transaction for every write of a call, begun at its first write and
 * committed when the call ends: what a keyed call (Idempotency-Key) runs in,
 * so that its answer is committed with its writes (idempotency.ts).
 *
 * The operations are written without it: each opens its own transactions
 * (crud.ts's `transactional`, `inTransaction`) or writes in one
 * statement, and may read, download and analyse a model file before it
 * writes. Wrapping the whole call in a plain transaction would hold it open
 * through that slow part, which the embedded database cannot afford (PGlite
 * runs one transaction at a time, every other call would wait). So the
 * call's transaction is lazy:
 *
 *   - it is a transaction level of its own (SqlClient.makeWithTransaction
 *     over the client's transaction service), so every statement of the call,
 *     the repository's included, goes to its connection; the call is given a
 *     client whose `withTransaction` is that level's, so each transaction the
 *     operation opens inside it is a savepoint of it;
 *   - until the first statement that may write (anything but a plain SELECT,
 *     a savepoint included), nothing is begun and each read runs on a pooled
 *     connection of its own, as it would without it;
 *   - then one connection is reserved and BEGIN sent, and every later
 *     statement runs on it; COMMIT is sent when the call's effect ends (after
 *     the caller's last statement, the stored answer), ROLLBACK when it fails.
 *
 * A COMMIT whose connection is lost before PostgreSQL answers leaves the
 * outcome unknown: `outcomeUnknown` says so after the failure (a lost
 * connection before COMMIT rolled the transaction back, which is known).
 */
import { Effect, Scope, Semaphore, Stream } from "effect"
import { SqlClient } from "effect/sql"
import type { Connection } from "effect/sql/SqlConnection"
import { SqlError, UnknownError } from "effect/sql/SqlError"
import { isConnectionLost, unlessConnectionLost } from "../domain/StorageOutage.ts"

/** A statement that only reads: a SELECT that locks no row. Anything else begins the transaction. */
const PLAIN_READ = /^\s*select\b/i
const LOCKING = /\bfor\s+(update|share|no\s+key\s+update|key\s+share)\b/i
export const isPlainRead = (statement: string) => PLAIN_READ.test(statement) && !LOCKING.test(statement)

export interface WriteTransaction {
  /** Runs `effect` in the lazy transaction: committed when it succeeds (if it wrote), rolled back when it fails. */
  readonly run: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E | SqlError, R>
  /** The client the call uses inside `run`: its transactions are savepoints of the lazy one. */
  readonly client: SqlClient.SqlClient
  /** Whether a COMMIT was sent and its answer lost with the connection: the writes may or may not be kept. */
  readonly outcomeUnknown: () => boolean
  /** Whether a transaction was begun (the call wrote, or locked a row). */
  readonly begun: () => boolean
}

/** A lazy write transaction on `sql` for one call (make one per call). */
export const makeWriteTransaction = (sql: SqlClient.SqlClient): WriteTransaction => {
  let scope: Scope.Scope | undefined
  let connection: Connection | undefined
  let commitSent = false
  let commitAnswered = false
  // Statements of one call run one after another, but a step that forks could ask twice: one BEGIN.
  const beginning = Semaphore.makeUnsafe(1)

  const begin = beginning.withPermit(
    Effect.suspend((): Effect.Effect<Connection, SqlError> =>
      connection !== undefined ? Effect.succeed(connection) : Effect.gen(function*() {
        const reserved = yield* Scope.provide(sql.reserve, scope!)
        yield* reserved.executeUnprepared("BEGIN", [], undefined)
        connection = reserved
        return reserved
      })
    )
  )

  /** A statement: on the transaction's connection once begun (or when it writes), else on a pooled one of its own. */
  const route = <A>(statement: string, run: (connection: Connection) => Effect.Effect<A, SqlError>) =>
    connection !== undefined
      ? run(connection)
      : isPlainRead(statement)
      ? Effect.scoped(Effect.flatMap(sql.reserve, run))
      : Effect.flatMap(begin, run)

  const lazy: Connection = {
    execute: (statement, params, transformRows) => route(statement, (c) => c.execute(statement, params, transformRows)),
    executeRaw: (statement, params) => route(statement, (c) => c.executeRaw(statement, params)),
    executeValues: (statement, params) => route(statement, (c) => c.executeValues(statement, params)),
    executeValuesUnprepared: (statement, params) => route(statement, (c) => c.executeValuesUnprepared(statement, params)),
    executeUnprepared: (statement, params, transformRows) => route(statement, (c) => c.executeUnprepared(statement, params, transformRows)),
    executeStream: (statement, params, transformRows) =>
      connection !== undefined
        ? connection.executeStream(statement, params, transformRows)
        : isPlainRead(statement)
        ? Stream.scoped(Stream.unwrap(Effect.map(sql.reserve, (c) => c.executeStream(statement, params, transformRows))))
        : Stream.unwrap(Effect.map(begin, (c) => c.executeStream(statement, params, transformRows)))
  }

  const whenBegun = (run: (connection: Connection) => Effect.Effect<unknown, SqlError>) =>
    Effect.suspend(() => connection === undefined ? Effect.void : Effect.asVoid(run(connection)))

  const withTransaction = SqlClient.makeWithTransaction({
    transactionService: sql.transactionService,
    spanAttributes: [],
    // The call's level: the lazy connection; the reserved one, once begun, is released with this scope.
    acquireConnection: () =>
      Effect.map(Effect.scope, (transactionScope) => {
        scope = transactionScope
        return lazy
      }),
    begin: () => Effect.void,
    savepoint: (c, id) => c.executeUnprepared(`SAVEPOINT effect_sql_${id}`, [], undefined),
    releaseSavepoint: (c, id) => unlessConnectionLost(c.executeUnprepared(`RELEASE SAVEPOINT effect_sql_${id}`, [], undefined)),
    rollbackSavepoint: (c, id) => unlessConnectionLost(c.executeUnprepared(`ROLLBACK TO SAVEPOINT effect_sql_${id}`, [], undefined)),
    commit: () =>
      whenBegun((c) =>
        Effect.suspend(() => {
          commitSent = true
          return c.executeRaw("COMMIT", [])
        }).pipe(
          Effect.tapError((error) => Effect.sync(() => (commitAnswered = !isConnectionLost(error)))),
          Effect.tap(() => Effect.sync(() => (commitAnswered = true))),
          // PostgreSQL answers ROLLBACK to the COMMIT of a transaction that failed: nothing was kept.
          Effect.flatMap((result) =>
            (result as { readonly command?: string }).command === "ROLLBACK"
              ? Effect.fail(
                new SqlError({
                  reason: new UnknownError({
                    cause: new Error("COMMIT rolled back an aborted transaction"),
                    message: "COMMIT rolled back an aborted transaction",
                    operation: "commit"
                  })
                })
              )
              : Effect.void
          )
        )
      ),
    rollback: () => whenBegun((c) => unlessConnectionLost(c.executeUnprepared("ROLLBACK", [], undefined)))
  })

  // The same client (its statements find the transaction's connection in the context), but for its transactions:
  // the bound function keeps the client's type, and its own properties are the client's with this withTransaction.
  const client: SqlClient.SqlClient = Object.assign(sql.bind(sql), { ...sql, withTransaction })

  return {
    run: withTransaction,
    client,
    outcomeUnknown: () => commitSent && !commitAnswered,
    begun: () => connection !== undefined
  }
}
