/**
 * A PgClient whose transactions survive the loss of their connection as a
 * failure, never a defect.
 *
 * @effect/sql-pg's own `withTransaction` runs the ROLLBACK of a failed
 * transaction as a defect when it fails, and a failing rollback makes the
 * transaction's own failure a defect too: a connection lost during a
 * transaction (its statement fails, then its ROLLBACK on the same dead
 * connection) would be a defect, answered 500, where it is an outage, a 503.
 * These transactions are the same statements through the library's
 * `makeWithTransaction`, but that a ROLLBACK, a ROLLBACK TO SAVEPOINT or a
 * RELEASE SAVEPOINT on a connection that is gone is done (PostgreSQL rolled
 * the transaction back itself), so the statement's SqlError is what fails.
 */
import type { PgClient } from "@effect/sql-pg"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import type { Connection } from "effect/sql/SqlConnection"
import { SqlError, UnknownError } from "effect/sql/SqlError"
import { unlessConnectionLost } from "../../domain/StorageOutage.ts"

/** A transaction control statement, prepared like any other (as @effect/sql-pg prepares them). */
const control = (connection: Connection, statement: string) => Effect.asVoid(connection.execute(statement, [], undefined))

/** PostgreSQL answers ROLLBACK to the COMMIT of a transaction that failed: nothing was kept. */
const commit = (connection: Connection) =>
  Effect.flatMap(connection.executeRaw("COMMIT", []), (result) =>
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
      : Effect.void)

/** `client`, with transactions whose lost connection fails them with its SqlError. */
export const withLostConnectionRollback = (client: PgClient.PgClient): PgClient.PgClient => {
  const config = client.config
  const withTransaction = SqlClient.makeWithTransaction({
    transactionService: client.transactionService,
    // The transaction span's attributes, as @effect/sql-pg names them.
    spanAttributes: [
      ...Object.entries(config.spanAttributes ?? {}),
      ["db.system.name", "postgresql"],
      ["db.namespace", config.database ?? config.username ?? "postgres"],
      ["server.address", config.host ?? "localhost"],
      ["server.port", config.port ?? 5432]
    ],
    acquireConnection: (restore) => restore(client.reserve),
    begin: (connection, statement) =>
      statement === undefined ? control(connection, "BEGIN") : Effect.asVoid(connection.executeUnprepared(statement, [], undefined)),
    savepoint: (connection, id) => control(connection, `SAVEPOINT effect_sql_${id}`),
    releaseSavepoint: (connection, id) => unlessConnectionLost(control(connection, `RELEASE SAVEPOINT effect_sql_${id}`)),
    commit,
    rollback: (connection) => unlessConnectionLost(control(connection, "ROLLBACK")),
    rollbackSavepoint: (connection, id) => unlessConnectionLost(control(connection, `ROLLBACK TO SAVEPOINT effect_sql_${id}`))
  })
  // The same client (its statements find the transaction's connection in the context), but for its transactions.
  const wrapped: PgClient.PgClient = Object.assign(client.bind(client), { ...client, withTransaction })
  ;(wrapped as { safe: unknown }).safe = wrapped
  return wrapped
}
