/**
 * The PostgreSQL client's transactions (PgTransactions.ts): a connection
 * lost in one (here the server ends the session, as a restart does) fails it
 * with an outage's SqlError, at the top level and in a nested one (a
 * savepoint), where @effect/sql-pg's own would die of its ROLLBACK; a wrong
 * statement still fails it with its own error, rolled back.
 */
import { PgClient } from "@effect/sql-pg"
import { Cause, Effect, Exit, Redacted } from "effect"
import { Reactivity } from "effect/reactivity"
import type { SqlError } from "effect/sql/SqlError"
import pg from "pg"
import { assert, describe, it } from "vitest"
import { withLostConnectionRollback } from "../../src/adapters/storage/PgTransactions.ts"
import { isConnectionLost, isOutage } from "../../src/domain/StorageOutage.ts"

const POSTGRES_URL = process.env.TEST_DATABASE_URL

/** `body` run with a client of one connection, and a plain one beside it (pg) to end that connection's session. */
const withClient = <A>(body: (sql: PgClient.PgClient, admin: pg.Client) => Effect.Effect<A, SqlError>) =>
  Effect.runPromise(
    Effect.gen(function*() {
      const sql = withLostConnectionRollback(yield* PgClient.make({ url: Redacted.make(POSTGRES_URL!), maxConnections: 1 }))
      const admin = new pg.Client({ connectionString: POSTGRES_URL })
      yield* Effect.promise(() => admin.connect())
      return yield* Effect.ensuring(body(sql, admin), Effect.promise(() => admin.end()))
    }).pipe(Effect.scoped, Effect.provide(Reactivity.layer))
  )

/** The one failure of `exit`: a failure, never a defect. */
const failure = (exit: Exit.Exit<unknown, SqlError>) => {
  assert.isTrue(Exit.isFailure(exit))
  const cause = (exit as Exit.Failure<unknown, SqlError>).cause
  assert.isFalse(Cause.hasDies(cause), Cause.pretty(cause))
  return Cause.squash(cause) as SqlError
}

describe.skipIf(POSTGRES_URL === undefined)("PostgreSQL transactions", () => {
  for (const nested of [false, true]) {
    it(`a session ended in a ${nested ? "nested " : ""}transaction fails it with an outage, not a defect`, async () => {
      const error = await withClient((sql, admin) =>
        Effect.gen(function*() {
          const lost = Effect.gen(function*() {
            const [row] = yield* sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`
            yield* Effect.promise(() => admin.query("SELECT pg_terminate_backend($1)", [row!.pid]))
            // The server's FATAL reaches the connection while it waits for the transaction's next statement.
            yield* Effect.sleep("200 millis")
            yield* sql`SELECT 1`
          })
          return failure(yield* Effect.exit(sql.withTransaction(nested ? sql.withTransaction(lost) : lost)))
        })
      )
      assert.isTrue(isConnectionLost(error), String(error.reason._tag))
      assert.isTrue(isOutage(error))
    }, 20_000)
  }

  it("a wrong statement fails its transaction with its own error, rolled back; the connection serves on", async () => {
    const { error, table } = await withClient((sql) =>
      Effect.gen(function*() {
        const exit = yield* Effect.exit(sql.withTransaction(Effect.gen(function*() {
          yield* sql`CREATE TEMP TABLE rolled_back (x int)`
          yield* sql`SELEC 1`
        })))
        const [row] = yield* sql<{ table: string | null }>`SELECT to_regclass('pg_temp.rolled_back')::text AS table`
        return { error: failure(exit), table: row!.table }
      })
    )
    assert.strictEqual(error.reason._tag, "SqlSyntaxError")
    assert.isFalse(isOutage(error))
    assert.isNull(table)
  }, 20_000)
})
