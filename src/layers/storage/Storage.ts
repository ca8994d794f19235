/**
 * The SqlClient: PostgreSQL when DATABASE_URL is set, otherwise embedded
 * PGlite in DATA_DIR, both through the same `@effect/sql-pg` client. The
 * migrations are applied before the layer is ready.
 */
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Option, Redacted } from "effect"
import { Migrator } from "effect/sql"
import { AppConfig } from "../../services/AppConfig.ts"
import { isShared, openEmbedded, socketPath } from "./EmbeddedDatabase.ts"
import { migrations } from "./migrations.ts"

/**
 * `serve`: this process owns the embedded database and shares it.
 * `tool`: a short-lived command; it uses a running server's database if there
 * is one, or opens the data directory itself.
 */
export type StorageRole = "serve" | "tool"

/** PGlite behind the bridge needs unnamed statements: named ones would collide across connections of its one session. */
const EMBEDDED = { prepare: false, username: "postgres", database: "postgres" } as const

const embeddedClient = (dataDir: string, role: StorageRole) =>
  PgClient.layerFrom(Effect.gen(function*() {
    if (role === "tool") {
      for (let attempt = 0; attempt < 50; attempt++) {
        if (yield* isShared(dataDir)) {
          return yield* PgClient.make({ ...EMBEDDED, path: socketPath(dataDir), maxConnections: 1 })
        }
        const opened = yield* openEmbedded(dataDir, { share: false, waitForLock: false }).pipe(Effect.option)
        if (Option.isSome(opened)) {
          const bridge = opened.value
          return yield* PgClient.make({ ...EMBEDDED, stream: () => bridge.connect(), maxConnections: 1 })
        }
        yield* Effect.sleep("200 millis")
      }
      return yield* Effect.die(new Error(`${dataDir} is held by a process that does not share it`))
    }
    const bridge = yield* openEmbedded(dataDir, { share: true, waitForLock: true }).pipe(Effect.orDie)
    return yield* PgClient.make({ ...EMBEDDED, stream: () => bridge.connect(), maxConnections: 4 })
  }))

const postgresClient = (url: Redacted.Redacted) =>
  PgClient.layer({
    url,
    maxConnections: 20,
    connectTimeout: "5 seconds",
    applicationName: "mfg-public-api"
  })

const runMigrations = Layer.effectDiscard(
  Migrator.make({})({ loader: Migrator.fromRecord(migrations), table: "schema_migrations" })
)

/** The SqlClient (and PgClient) for the configured storage, migrated. */
export const StorageLive = (role: StorageRole) =>
  Layer.unwrap(Effect.gen(function*() {
    const config = yield* AppConfig
    const client = Option.match(config.databaseUrl, {
      onSome: postgresClient,
      onNone: () => embeddedClient(config.dataDir, role)
    })
    return runMigrations.pipe(Layer.provideMerge(client))
  }))

/** A SqlClient on an explicit PostgreSQL url (tests and tools), migrated. */
export const StorageOnUrl = (url: string) =>
  runMigrations.pipe(Layer.provideMerge(postgresClient(Redacted.make(url))))
