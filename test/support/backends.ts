/**
 * The storage backends every storage-touching suite runs on: embedded PGlite
 * always, PostgreSQL when TEST_DATABASE_URL is set (CI sets it).
 */
import { Effect, Layer, Option, Redacted } from "effect"
import { randomBytes } from "node:crypto"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import pg from "pg"
import { AppConfig, type AppConfigShape } from "../../src/services/AppConfig.ts"

export type Backend = "pglite" | "postgres"

const POSTGRES_URL = process.env.TEST_DATABASE_URL

export const backends: ReadonlyArray<Backend> = POSTGRES_URL === undefined ? ["pglite"] : ["pglite", "postgres"]

const withDatabase = (url: string, database: string) => {
  const parsed = new URL(url)
  parsed.pathname = `/${database}`
  return parsed.toString()
}

/** A statement on the PostgreSQL server of TEST_DATABASE_URL (create and drop test databases). */
export const adminQuery = (text: string) =>
  Effect.promise(async () => {
    const client = new pg.Client({ connectionString: POSTGRES_URL })
    await client.connect()
    try {
      await client.query(text)
    } finally {
      await client.end()
    }
  })

/** A fresh PostgreSQL database for one suite, dropped when the suite ends. */
const freshPostgres = Effect.acquireRelease(
  Effect.gen(function*() {
    const name = `mfg_test_${randomBytes(6).toString("hex")}`
    yield* adminQuery(`CREATE DATABASE ${name}`)
    return { name, url: withDatabase(POSTGRES_URL!, name) }
  }),
  ({ name }) => adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).pipe(Effect.ignore)
)

/** A fresh PGlite data directory for one suite, removed when the suite ends. */
const freshDataDir = Effect.acquireRelease(
  Effect.sync(() => Fs.mkdtempSync(Path.join(Os.tmpdir(), "mfg-test-"))),
  (dir) => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true }))
)

/** AppConfig for a suite on `backend`: fresh storage, test values for the rest. */
export const testConfig = (backend: Backend, overrides: Partial<AppConfigShape> = {}) =>
  Layer.unwrap(Effect.gen(function*() {
    const storage: Partial<AppConfigShape> = backend === "postgres"
      ? { databaseUrl: Option.some(Redacted.make((yield* freshPostgres).url)) }
      : { databaseUrl: Option.none(), dataDir: yield* freshDataDir }
    return AppConfig.layerWith({
      port: 0,
      host: "127.0.0.1",
      adminToken: Option.some(Redacted.make(ADMIN_TOKEN)),
      trustedProxies: [],
      // The embedded engine unless a suite says otherwise, whatever DOWNSTREAM_URL the shell has.
      downstreamUrl: Option.none(),
      ...storage,
      ...overrides
    })
  }))

export const ADMIN_TOKEN = "test-admin-token-0123456789"
