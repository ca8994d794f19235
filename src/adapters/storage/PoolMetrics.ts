/**
 * What an SQL connection pool's metrics can honestly say. The pool of
 * `@effect/sql-pg` (effect/Pool inside PgPool) exposes no state: neither its
 * connections in use nor the checkouts waiting for one. What is seen from
 * outside it:
 *
 * - `db.client.connection.open`: the sockets the pool's connections hold
 *   open to the database (PostgreSQL, or the embedded database's bridge),
 *   counted as the pool's `stream` opens them and they close. A cancel
 *   request (a statement interrupted on PostgreSQL) opens one for a moment
 *   too. A pool without a `stream` (PostgreSQL over a Unix socket, or a
 *   `host` parameter in DATABASE_URL) connects on its own: not counted.
 * - `db.client.connection.max`: the most connections the pool opens.
 * - `db.client.connection.wait_time`: effect/sql measures, on each
 *   statement's span, the time from the statement's start to its connection
 *   (a free one, or one being opened); Telemetry.ts records it by the pool
 *   name this module puts on the pool's statements. Statements in a
 *   transaction run on the transaction's connection and wait for none.
 *
 * Without an exporter the options are left as they are: nothing is counted.
 */
import type { PgClient } from "@effect/sql-pg"
import { Effect } from "effect"
import { Instruments } from "../../platform/telemetry/Instruments.ts"

/** Which pool: the SqlClient's (`main`), or the meter's own on PostgreSQL (`meter`). */
export type PoolName = "main" | "meter" | "cluster"

/** PgPool's default maximum, when the options name none. */
const PG_POOL_DEFAULT_MAX = 10

/**
 * The pool `options` as `PgClient.make` takes them, observed as pool `pool`:
 * its sockets counted, its maximum noted, its name on its statements' spans.
 */
export const observedPool = Effect.fnUntraced(function*(pool: PoolName, options: PgClient.PgPoolConfig) {
  const instruments = yield* Instruments
  if (!instruments.enabled) return options
  instruments.poolMax(pool, options.maxConnections ?? PG_POOL_DEFAULT_MAX)
  const spanAttributes = { ...options.spanAttributes, "db.client.connection.pool.name": pool }
  const connect = options.stream
  if (connect === undefined) return { ...options, spanAttributes }
  let open = 0
  instruments.poolConnections(pool, open)
  const stream = () => {
    const socket = connect()
    instruments.poolConnections(pool, ++open)
    socket.once("close", () => instruments.poolConnections(pool, --open))
    return socket
  }
  return { ...options, spanAttributes, stream }
})
