/**
 * A transaction around an engine step. It opens on the SqlClient in the
 * step's context, not one a repository captured: inside a keyed call that is
 * the call's client (writeTransaction.ts), whose transactions are savepoints
 * of the call's own.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/** `effect` in one transaction: every write it makes is kept, or none. */
export const inTransaction = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.flatMap(SqlClient.SqlClient, (sql) => sql.withTransaction(effect))
