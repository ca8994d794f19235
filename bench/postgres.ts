/**
 * The benchmarks' PostgreSQL: a database of their own, created fresh (with
 * the pg peer's tables) and dropped at the end.
 *
 * BENCH_POSTGRES_URL names the server (trust authentication, no database in
 * the URL; default postgres://postgres@127.0.0.1:5432). Its `test` database
 * is where the benchmark connects to create and drop its own.
 */
import pg from "pg"

export const POSTGRES = process.env["BENCH_POSTGRES_URL"] ?? "postgres://postgres@127.0.0.1:5432"

export const databaseUrl = (database: string) => `${POSTGRES}/${database}`

export const withClient = async <A>(database: string, f: (client: pg.Client) => Promise<A>): Promise<A> => {
  const client = new pg.Client({ connectionString: databaseUrl(database) })
  await client.connect()
  try {
    return await f(client)
  } finally {
    await client.end()
  }
}

/** The pg peer's tables (bench/baselines.ts), shaped like the service's incoming_secret, meter_event and engine_record. */
const PEER_TABLES = `
  CREATE TABLE bench_secret (
    id text PRIMARY KEY,
    app_id text NOT NULL,
    secret_hash text NOT NULL,
    ip_ranges text[] NOT NULL
  );
  CREATE TABLE bench_meter (
    request_id text PRIMARY KEY,
    app_id text NOT NULL,
    secret_id text NOT NULL,
    operation text NOT NULL,
    method text NOT NULL,
    route text NOT NULL,
    occurred_at timestamptz NOT NULL,
    status integer,
    duration_ms double precision
  );
  CREATE INDEX bench_meter_app_time ON bench_meter (app_id, occurred_at);
  CREATE INDEX bench_meter_time ON bench_meter (occurred_at);
  CREATE TABLE bench_record (
    resource text NOT NULL,
    id text NOT NULL,
    app_id text NOT NULL,
    data jsonb NOT NULL,
    PRIMARY KEY (resource, id)
  );`

export interface BenchDatabase {
  readonly name: string
  readonly url: string
  /** `fsync=… server_version=… synchronous_commit=…`, for the report. */
  readonly settings: string
  /** Drops the database (connections included); safe to call twice. */
  readonly drop: () => Promise<void>
}

/** Drops and creates `name` with the pg peer's tables. */
export const createBenchDatabase = async (name: string): Promise<BenchDatabase> => {
  const settings = await withClient("test", async (client) => {
    await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    await client.query(`CREATE DATABASE ${name}`)
    const rows = await client.query<{ name: string; setting: string }>(
      `SELECT name, setting FROM pg_settings WHERE name IN ('server_version', 'fsync', 'synchronous_commit') ORDER BY name`
    )
    return rows.rows.map((row) => `${row.name}=${row.setting}`).join(" ")
  })
  let dropped = false
  const drop = async () => {
    if (dropped) return
    dropped = true
    await withClient("test", (client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`))
  }
  try {
    await withClient(name, (client) => client.query(PEER_TABLES))
  } catch (error) {
    await drop()
    throw error
  }
  return { name, url: databaseUrl(name), settings, drop }
}

/** Rows in a table of the benchmark's database. */
export const countRows = (database: string, table: string): Promise<number> =>
  withClient(database, async (client) => Number((await client.query<{ n: string }>(`SELECT count(*) AS n FROM ${table}`)).rows[0]!.n))
