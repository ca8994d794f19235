/**
 * The SqlClient: PostgreSQL when DATABASE_URL is set, otherwise embedded
 * PGlite in DATA_DIR, both through the same `@effect/sql-pg` client. The
 * migrations are applied before the layer is ready.
 *
 * On PostgreSQL, statements from concurrent calls share connections
 * (`multiplex`: pipelined, several in one write), which saves a write and a
 * read per statement under load. The meter has a small pool of its own
 * (MeterSqlClient): its INSERT is a commit, the slowest statement of a read,
 * and on a shared pipelined connection a read's SELECT would wait behind it
 * instead of running beside it. Over TCP, a connection's writes made in one
 * turn of the event loop (the statements of the requests read in that turn)
 * leave in one system call (CoalescedSocket).
 */
import { PgClient } from "@effect/sql-pg"
import { Context, Duration, Effect, Layer, Option, Redacted, References } from "effect"
import { Reactivity } from "effect/reactivity"
import { Migrator, SqlClient } from "effect/sql"
import type { SqlError } from "effect/sql/SqlError"
import * as Net from "node:net"
import type { InvalidConfig } from "../../domain/Errors.ts"
import type { StorageUnreachable } from "../../platform/StartFailure.ts"
import type { Instruments } from "../../platform/telemetry/Instruments.ts"
import { AppConfig } from "../../services/AppConfig.ts"
import { startWatching } from "./AnswerWatchdog.ts"
import { coalescedConnection, coalesceWrites } from "./CoalescedSocket.ts"
import { runEmbeddedDatabase } from "./EmbeddedChild.ts"
import { isShared, openEmbedded, socketPath } from "./EmbeddedDatabase.ts"
import { migrations } from "./migrations.ts"
import { withLostConnectionRollback } from "./PgTransactions.ts"
import { observedPool } from "./PoolMetrics.ts"
import { connectAtStart } from "./PostgresStart.ts"
import type { DataDirNotPrivate } from "./PrivateDataDir.ts"
import { TableStatisticsLive } from "./TableStatistics.ts"

/**
 * `serve`: this process runs the embedded database (in a process of its own,
 * which shares it) for as long as it serves.
 * `tool`: a short-lived command; it uses a running server's database if there
 * is one, or opens the data directory itself.
 */
export type StorageRole = "serve" | "tool"

/** A pool's client: its transactions fail, never die, when their connection is lost (PgTransactions.ts). */
const makeClient = (options: PgClient.PgPoolConfig) => Effect.map(PgClient.make(options), withLostConnectionRollback)

/**
 * Statements are prepared under a name, as on PostgreSQL: PGlite then skips
 * parsing and planning them again, most of its work for a read. Connections
 * share PGlite's one session, so names must not collide: @effect/sql-pg puts
 * a random namespace per connection in them, and the bridge closes a
 * connection's statements when it goes away (PgliteBridge.ts).
 */
const EMBEDDED = { username: "postgres", database: "postgres" } as const

const embeddedClient = (dataDir: string, role: StorageRole) =>
  PgClient.layerFrom(Effect.gen(function*() {
    if (role === "tool") {
      for (let attempt = 0; attempt < 50; attempt++) {
        if (yield* isShared(dataDir)) {
          return yield* makeClient({ ...EMBEDDED, path: socketPath(dataDir), maxConnections: 1 })
        }
        // Held by another process: it may be a server about to share it. Any other failure (DATA_DIR not private) is final.
        const opened = yield* openEmbedded(dataDir, { share: false, waitForLock: false }).pipe(
          Effect.map(Option.some),
          Effect.catchTag("DataDirInUse", () => Effect.succeedNone)
        )
        if (Option.isSome(opened)) {
          const bridge = opened.value
          return yield* makeClient({ ...EMBEDDED, stream: () => bridge.connect(), maxConnections: 1 })
        }
        yield* Effect.sleep("200 millis")
      }
      return yield* Effect.die(new Error(`${dataDir} is held by a process that does not share it`))
    }
    // PGlite runs in a process of its own (EmbeddedChild.ts), closed after this pool: the meter's last rows are in.
    yield* runEmbeddedDatabase(dataDir).pipe(Effect.orDie)
    const connect = () => coalesceWrites(Net.connect({ path: socketPath(dataDir) }))
    // Pipelined: the statements of concurrent calls reach PGlite as one batch, one socket write and one reply.
    return yield* makeClient(yield* observedPool("main", { ...EMBEDDED, stream: connect, maxConnections: 4, multiplex: true }))
  }))

/** The meter's connections: SqlClient's own on embedded PGlite (one session), a pool of their own on PostgreSQL. */
export class MeterSqlClient extends Context.Service<MeterSqlClient, SqlClient.SqlClient>()("mfg/storage/MeterSqlClient") {}

const POSTGRES = { connectTimeout: "5 seconds", applicationName: "mfg-public-api" } as const

/** One connection per meter flush in flight (MeterSql runs at most FLUSH_WORKERS, 2). */
const METER_CONNECTIONS = 2

/**
 * The TCP host and port of a postgres:// URL that names them in its authority
 * (as @effect/sql-pg reads it); undefined otherwise (a `host` or `port`
 * parameter, a Unix socket, no host), and the driver connects as it would.
 */
const tcpAddress = (url: Redacted.Redacted) => {
  try {
    const parsed = new URL(Redacted.value(url))
    if (parsed.searchParams.has("host") || parsed.searchParams.has("port") || parsed.hostname === "") return undefined
    const bracketed = parsed.hostname.startsWith("[") && parsed.hostname.endsWith("]")
    const host = bracketed ? parsed.hostname.slice(1, -1) : decodeURIComponent(parsed.hostname)
    return host.startsWith("/") ? undefined : { host, port: parsed.port === "" ? 5432 : Number(parsed.port) }
  } catch {
    return undefined
  }
}

/** How messages name the server of DATABASE_URL: host and port, never the URL (it may carry a password). */
const serverName = (url: Redacted.Redacted) => {
  const address = tcpAddress(url)
  return address === undefined ? "the server of DATABASE_URL" : `${address.host}:${address.port}`
}

const postgresClient = (url: Redacted.Redacted, connectTimeout: Duration.Duration, queryTimeout: Duration.Duration) => {
  const address = tcpAddress(url)
  // Over TCP, the writes of one turn of the event loop leave together (CoalescedSocket), and a connection
  // that stops answering is closed (AnswerWatchdog).
  const transport = address === undefined ? {} : { stream: coalescedConnection(address.host, address.port, Duration.toMillis(queryTimeout)) }
  // A new connection (its TCP connection, startup and authentication) takes at most DATABASE_QUERY_TIMEOUT too.
  const pools = { ...POSTGRES, connectTimeout: queryTimeout }
  // Pools open connections on demand: a connection of its own, closed after one statement, tells when PostgreSQL answers.
  const reachable = Effect.scoped(
    Effect.flatMap(PgClient.make({ ...POSTGRES, ...transport, url, maxConnections: 1 }), (client) => client`SELECT 1`)
  ).pipe(
    Effect.provide(Reactivity.layer),
    // Not a statement of the service: no span, so no connection-wait measurement outside the pools.
    Effect.provideService(References.TracerEnabled, false)
  )
  return Layer.merge(
    PgClient.layerFrom(Effect.flatMap(observedPool("main", { ...pools, ...transport, url, maxConnections: 20, multiplex: true }), makeClient)),
    Layer.effect(
      MeterSqlClient,
      Effect.flatMap(observedPool("meter", { ...pools, ...transport, url, maxConnections: METER_CONNECTIONS }), makeClient)
    ).pipe(Layer.provide(Reactivity.layer))
  ).pipe(Layer.provide(Layer.effectDiscard(connectAtStart(reachable, serverName(url), connectTimeout))))
}

/**
 * The webhook delivery cluster's own connections on PostgreSQL: its advisory
 * locks hold a reserved session, and on the request path's pipelined pool a
 * reserved session takes a whole shared connection out of circulation. Apart,
 * and one statement per connection, whatever the cluster's storage does
 * after a database restart (reserving, rebuilding its lock session, timing
 * out) never waits on or holds the connections that answer the calls.
 */
export const clusterPool = Layer.unwrap(Effect.gen(function*() {
  const config = yield* AppConfig
  const url = Option.getOrThrowWith(config.databaseUrl, () => new Error("the cluster's pool is for PostgreSQL (DATABASE_URL)"))
  const address = tcpAddress(url)
  const queryTimeout = config.databaseQueryTimeout
  const transport = address === undefined ? {} : { stream: coalescedConnection(address.host, address.port, Duration.toMillis(queryTimeout)) }
  return PgClient.layerFrom(
    Effect.flatMap(
      observedPool("cluster", { ...POSTGRES, connectTimeout: queryTimeout, ...transport, url, maxConnections: CLUSTER_CONNECTIONS }),
      makeClient
    )
  ).pipe(Layer.provide(Reactivity.layer))
}))

/** The cluster's statements: its message storage's reads and writes, its lock refreshes, and the lock session. */
const CLUSTER_CONNECTIONS = 4

const sharedWithMeter = Layer.effect(MeterSqlClient, Effect.service(SqlClient.SqlClient))

const runMigrations = Layer.effectDiscard(
  Migrator.make({})({ loader: Migrator.fromRecord(migrations), table: "schema_migrations" })
)

/** The SqlClient (and PgClient, and the meter's) for the configured storage, migrated. */
export const StorageLive = (role: StorageRole) =>
  Layer.unwrap(Effect.gen(function*() {
    const config = yield* AppConfig
    const client: Layer.Layer<
      PgClient.PgClient | SqlClient.SqlClient | MeterSqlClient,
      SqlError | DataDirNotPrivate | InvalidConfig | StorageUnreachable,
      Instruments
    > = Option.match(config.databaseUrl, {
      onSome: (url) => postgresClient(url, config.databaseConnectTimeout, config.databaseQueryTimeout),
      onNone: () => Layer.provideMerge(sharedWithMeter, embeddedClient(config.dataDir, role))
    })
    // Where no autovacuum runs (the embedded database, or PostgreSQL with it off), a server analyzes what changed itself.
    const upkeep = role === "serve" ? Layer.merge(runMigrations, TableStatisticsLive(Option.isNone(config.databaseUrl))) : runMigrations
    // Started and migrated: from now on a connection that stops answering is closed (AnswerWatchdog).
    return upkeep.pipe(Layer.tap(() => Effect.sync(startWatching)), Layer.provideMerge(client))
  }))
