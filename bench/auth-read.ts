/**
 * Benchmark: an authenticated `GET /v1/customer/{id}` through the whole
 * service, against two baselines measured in the same run:
 *
 *   ceiling   bare node:http, authentication in memory (bench/baselines.ts)
 *   pg peer   bare node:http + pg, the service's database work per call
 *
 * The targets are measured round-robin (service, ceiling, pg peer, repeated
 * for --rounds rounds), each measurement after a short warm-up; the table
 * shows the median of the rounds per target. Every server is its own child
 * process; autocannon runs in this one.
 *
 *   node bench/auth-read.ts [--storage postgres|pglite|both] [--connections 32]
 *                           [--duration 8] [--rounds 3] [--warmup 2]
 *
 * Any non-2xx response, socket error, timeout or wrong body, from any target,
 * aborts the run with a non-zero exit: a broken benchmark reports no number.
 * See bench/README.md.
 */
import autocannon, { type AutocannonResult } from "autocannon"
import { randomBytes } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import { cpus, loadavg, tmpdir } from "node:os"
import * as Path from "node:path"
import { parseArgs } from "node:util"
import pg from "pg"
import { issueSecret } from "./auth.ts"
import { freePort, NODE, type Server, startServer, stopAll } from "./servers.ts"

// ---------------------------------------------------------------- options

const USAGE = `usage: node bench/auth-read.ts [--storage postgres|pglite|both] [--connections N] [--duration S] [--rounds N] [--warmup S]`

const { values: flags } = parseArgs({
  options: {
    storage: { type: "string", default: "postgres" },
    connections: { type: "string", default: "32" },
    duration: { type: "string", default: "8" },
    rounds: { type: "string", default: "3" },
    warmup: { type: "string", default: "2" },
    help: { type: "boolean", short: "h", default: false }
  },
  strict: true,
  allowPositionals: false
})

if (flags.help) {
  console.log(USAGE)
  process.exit(0)
}

const positiveNumber = (name: string, text: string, integer: boolean): number => {
  const value = Number(text)
  if (!Number.isFinite(value) || value <= 0 || (integer && !Number.isInteger(value))) {
    console.error(`--${name} must be a positive ${integer ? "integer" : "number"}, not ${JSON.stringify(text)}\n${USAGE}`)
    process.exit(2)
  }
  return value
}

type Storage = "postgres" | "pglite"
const STORAGES: Record<string, ReadonlyArray<Storage>> = {
  postgres: ["postgres"],
  pglite: ["pglite"],
  both: ["postgres", "pglite"]
}
const storages = STORAGES[flags.storage]
if (storages === undefined) {
  console.error(`--storage must be postgres, pglite or both, not ${JSON.stringify(flags.storage)}\n${USAGE}`)
  process.exit(2)
}
const connections = positiveNumber("connections", flags.connections, true)
const duration = positiveNumber("duration", flags.duration, false)
const rounds = positiveNumber("rounds", flags.rounds, true)
const warmup = positiveNumber("warmup", flags.warmup, false)

/** The PostgreSQL server (trust auth); the benchmark makes its own database there. */
const POSTGRES = process.env["BENCH_POSTGRES_URL"] ?? "postgres://postgres@127.0.0.1:5432"
const BENCH_DATABASE = "mfg_bench"
const APP_ID = "bench"
const IP_RANGES = ["0.0.0.0/0"]

// ---------------------------------------------------------------- helpers

class BenchmarkInvalid extends Error {}

const databaseUrl = (database: string) => `${POSTGRES}/${database}`

const withClient = async <A>(database: string, f: (client: pg.Client) => Promise<A>): Promise<A> => {
  const client = new pg.Client({ connectionString: databaseUrl(database) })
  await client.connect()
  try {
    return await f(client)
  } finally {
    await client.end()
  }
}

const median = (values: ReadonlyArray<number>): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}

/** The p-th percentile (0–100) of sorted values, nearest rank. */
const percentile = (sorted: Float64Array, p: number): number =>
  sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!

const requestJson = async (url: string, init: RequestInit): Promise<{ status: number; body: unknown; text: string }> => {
  const response = await fetch(url, init)
  const text = await response.text()
  let body: unknown = undefined
  try {
    body = text.length > 0 ? JSON.parse(text) : undefined
  } catch {
    // Left undefined: the caller checks the shape.
  }
  return { status: response.status, body, text }
}

const fixed = (value: number, digits: number) => (Number.isFinite(value) ? value.toFixed(digits) : "-")
const thousands = (value: number) => Math.round(value).toLocaleString("en-US")

// ---------------------------------------------------------------- targets

interface Target {
  readonly name: string
  readonly kind: "service" | "ceiling" | "pg-peer"
  /** The service's storage (baselines: undefined). */
  readonly storage?: Storage
  readonly server: Server
  readonly secret: string
  readonly recordId: string
}

const recordUrl = (target: Target) => `${target.server.baseUrl}/v1/customer/${encodeURIComponent(target.recordId)}`

/**
 * Before any load: the record reads back with either Authorization form, and
 * a wrong secret is refused, so every target really authenticates.
 */
const sanityCheck = async (target: Target) => {
  for (const authorization of [target.secret, `Bearer ${target.secret}`]) {
    const read = await requestJson(recordUrl(target), { headers: { authorization } })
    const id = (read.body as { readonly id?: unknown } | undefined)?.id
    if (read.status !== 200 || id !== target.recordId) {
      throw new BenchmarkInvalid(`${target.name}: GET ${recordUrl(target)} answered ${read.status} ${read.text.slice(0, 300)}`)
    }
  }
  const wrong = `${target.secret.slice(0, 25)}${"A".repeat(43)}`
  const refused = await requestJson(recordUrl(target), { headers: { authorization: `Bearer ${wrong}` } })
  if (refused.status !== 401) {
    throw new BenchmarkInvalid(`${target.name}: a wrong secret answered ${refused.status}, not 401`)
  }
}

interface Measurement {
  readonly requestsPerSecond: number
  readonly p50: number
  readonly p99: number
  readonly requests: number
  readonly non2xx: number
  /** The server process's CPU time per completed request, in microseconds. */
  readonly cpuMicros: number
}

/** 2xx responses each target gave under load (warm-ups included), to check against its meter table. */
const answered = new Map<Target, number>()

/** One autocannon run; throws BenchmarkInvalid on any response that is not a 2xx with the record. */
const load = async (target: Target, seconds: number, phase: string): Promise<Measurement> => {
  const latencies: Array<number> = []
  const expected = `"id":"${target.recordId}"`
  const cpuBefore = target.server.cpuSeconds()
  const result: AutocannonResult = await autocannon({
    url: recordUrl(target),
    connections,
    duration: seconds,
    timeout: 10,
    headers: { authorization: `Bearer ${target.secret}` },
    verifyBody: (body) => body.includes(expected),
    setupClient: (client) => {
      client.on("response", (_status, _bytes, durationMs) => {
        latencies.push(durationMs)
      })
    }
  })
  const problems = [
    result.non2xx > 0 ? `${result.non2xx} non-2xx responses (${JSON.stringify(result.statusCodeStats)})` : "",
    result.errors > 0 ? `${result.errors} socket errors` : "",
    result.timeouts > 0 ? `${result.timeouts} timeouts` : "",
    result.mismatches > 0 ? `${result.mismatches} responses without the record` : "",
    result.requests.total === 0 ? "no completed request" : ""
  ].filter((problem) => problem.length > 0)
  if (problems.length > 0) {
    throw new BenchmarkInvalid(
      `${target.name} (${phase}): ${problems.join(", ")}\n--- last output of ${target.name} ---\n${target.server.output().slice(-4000)}`
    )
  }
  const cpuAfter = target.server.cpuSeconds()
  answered.set(target, (answered.get(target) ?? 0) + result["2xx"])
  const sorted = Float64Array.from(latencies).sort()
  return {
    requestsPerSecond: result.requests.total / result.duration,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    requests: result.requests.total,
    non2xx: result.non2xx,
    cpuMicros: cpuBefore === undefined || cpuAfter === undefined
      ? Number.NaN
      : ((cpuAfter - cpuBefore) / result.requests.total) * 1e6
  }
}

// ---------------------------------------------------------------- setup

const dataDirs: Array<string> = []
let databaseCreated = false

const createDatabase = async () => {
  const settings = await withClient("test", async (client) => {
    await client.query(`DROP DATABASE IF EXISTS ${BENCH_DATABASE} WITH (FORCE)`)
    await client.query(`CREATE DATABASE ${BENCH_DATABASE}`)
    const rows = await client.query<{ name: string; setting: string }>(
      `SELECT name, setting FROM pg_settings WHERE name IN ('server_version', 'fsync', 'synchronous_commit') ORDER BY name`
    )
    return rows.rows.map((row) => `${row.name}=${row.setting}`).join(" ")
  })
  databaseCreated = true
  await withClient(BENCH_DATABASE, async (client) => {
    // The pg peer's tables, shaped like the service's incoming_secret, meter_event and engine_record.
    await client.query(`
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
      );`)
  })
  return settings
}

const dropDatabase = async () => {
  if (!databaseCreated) return
  await withClient("test", (client) => client.query(`DROP DATABASE IF EXISTS ${BENCH_DATABASE} WITH (FORCE)`))
}

/**
 * Every call answered under load must have its meter row: the service's in
 * meter_event (PostgreSQL only: PGlite lives inside the service process),
 * the pg peer's in bench_meter. More rows than answers is expected (setup
 * calls, calls cut off when a run ends).
 */
const checkMetered = async (targets: ReadonlyArray<Target>): Promise<string> => {
  const lines: Array<string> = []
  await withClient(BENCH_DATABASE, async (client) => {
    for (const target of targets) {
      const table = target.kind === "pg-peer" ? "bench_meter" : target.storage === "postgres" ? "meter_event" : undefined
      if (table === undefined) continue
      const rows = Number((await client.query<{ n: string }>(`SELECT count(*) AS n FROM ${table}`)).rows[0]!.n)
      const calls = answered.get(target) ?? 0
      if (rows < calls) throw new BenchmarkInvalid(`${target.name}: ${calls} calls answered under load but only ${rows} rows in ${table}`)
      lines.push(`${target.name} ${rows} rows in ${table} for ${calls} calls answered under load`)
    }
  })
  return lines.join(", ")
}

const ADMIN_TOKEN = randomBytes(24).toString("hex")

const startService = async (storage: Storage): Promise<Target> => {
  const port = await freePort()
  const storageEnv: Record<string, string> = storage === "postgres"
    ? { DATABASE_URL: databaseUrl(BENCH_DATABASE) }
    : { DATA_DIR: (() => {
      const dir = mkdtempSync(Path.join(tmpdir(), "mfg-bench-pglite-"))
      dataDirs.push(dir)
      return dir
    })() }
  const server = await startServer({
    name: `service (${storage})`,
    args: ["src/main.ts"],
    port,
    env: { PORT: String(port), HOST: "127.0.0.1", ADMIN_TOKEN, ...storageEnv },
    unset: storage === "postgres" ? ["DATA_DIR"] : ["DATABASE_URL"],
    readyPath: "/ready",
    startTimeoutMs: 90_000
  })
  const created = await requestJson(`${server.baseUrl}/api/v1/secret`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-admin-token": ADMIN_TOKEN },
    body: JSON.stringify({ appId: APP_ID, ipAddresses: IP_RANGES })
  })
  const secret = (created.body as { readonly value?: unknown } | undefined)?.value
  if (created.status !== 201 || typeof secret !== "string") {
    throw new BenchmarkInvalid(`${server.name}: creating a secret answered ${created.status} ${created.text.slice(0, 300)}`)
  }
  const record = await requestJson(`${server.baseUrl}/v1/customer`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: secret },
    body: JSON.stringify({ name: "Bench", email: "bench@example.com" })
  })
  const recordId = (record.body as { readonly id?: unknown } | undefined)?.id
  if (record.status < 200 || record.status > 299 || typeof recordId !== "string") {
    throw new BenchmarkInvalid(`${server.name}: creating a customer answered ${record.status} ${record.text.slice(0, 300)}`)
  }
  return { name: server.name, kind: "service", storage, server, secret, recordId }
}

/** Starts both baselines on one fresh secret, serving a copy of the service's record. */
const startBaselines = async (record: Readonly<Record<string, unknown>> & { readonly id: string }): Promise<Array<Target>> => {
  const secret = issueSecret()
  await withClient(BENCH_DATABASE, async (client) => {
    await client.query(`INSERT INTO bench_secret (id, app_id, secret_hash, ip_ranges) VALUES ($1, $2, $3, $4)`, [
      secret.id,
      APP_ID,
      secret.hashHex,
      IP_RANGES
    ])
    await client.query(`INSERT INTO bench_record (resource, id, app_id, data) VALUES ('customer', $1, $2, $3)`, [
      record.id,
      APP_ID,
      JSON.stringify(record)
    ])
  })
  const [ceilingPort, peerPort] = [await freePort(), await freePort()]
  const [ceiling, peer] = await Promise.all([
    startServer({
      name: "ceiling",
      args: ["bench/baselines.ts", "ceiling"],
      port: ceilingPort,
      env: {
        PORT: String(ceilingPort),
        HOST: "127.0.0.1",
        BENCH_SECRET_ID: secret.id,
        BENCH_SECRET_HASH: secret.hashHex,
        BENCH_APP_ID: APP_ID,
        BENCH_IP_RANGES: IP_RANGES.join(","),
        BENCH_RECORD: JSON.stringify(record)
      }
    }),
    startServer({
      name: "pg peer",
      args: ["bench/baselines.ts", "pg-peer"],
      port: peerPort,
      env: { PORT: String(peerPort), HOST: "127.0.0.1", DATABASE_URL: databaseUrl(BENCH_DATABASE) }
    })
  ])
  return [
    { name: ceiling.name, kind: "ceiling", server: ceiling, secret: secret.value, recordId: record.id },
    { name: peer.name, kind: "pg-peer", server: peer, secret: secret.value, recordId: record.id }
  ]
}

// ---------------------------------------------------------------- report

interface Summary {
  readonly target: Target
  readonly requestsPerSecond: number
  readonly p50: number
  readonly p99: number
  readonly non2xx: number
  readonly cpuMicros: number
  readonly peakRssMiB: number | undefined
}

const printTable = (summaries: ReadonlyArray<Summary>) => {
  const ceiling = summaries.find((s) => s.target.kind === "ceiling")
  const peer = summaries.find((s) => s.target.kind === "pg-peer")
  const header = ["target", "req/s", "p50 ms", "p99 ms", "non-2xx", "CPU us/req", "peak RSS MiB", "service/ceiling", "service/pg peer"]
  const rows = summaries.map((s) => {
    const ratio = (base: Summary | undefined) =>
      s.target.kind === "service" && base !== undefined ? `${fixed(s.requestsPerSecond / base.requestsPerSecond, 2)}x` : ""
    return [
      s.target.name,
      thousands(s.requestsPerSecond),
      fixed(s.p50, 2),
      fixed(s.p99, 2),
      String(s.non2xx),
      fixed(s.cpuMicros, 0),
      s.peakRssMiB === undefined ? "-" : fixed(s.peakRssMiB, 0),
      ratio(ceiling),
      ratio(peer)
    ]
  })
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column]!.length)))
  const line = (cells: ReadonlyArray<string>) =>
    cells.map((cell, column) => (column === 0 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!))).join("  ")
  console.log(line(header))
  console.log(widths.map((width) => "-".repeat(width)).join("  "))
  for (const row of rows) console.log(line(row))
}

// ---------------------------------------------------------------- run

const cleanup = async () => {
  await stopAll()
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true })
  dataDirs.length = 0
  try {
    await dropDatabase()
  } catch (error) {
    console.error(`could not drop ${BENCH_DATABASE}: ${error instanceof Error ? error.message : String(error)}`)
  }
  databaseCreated = false
}

let interrupted = false
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    interrupted = true
    console.error(`\n${signal}: stopping the servers`)
    cleanup().finally(() => process.exit(130))
  })
}

const main = async () => {
  const settings = await createDatabase()
  const services: Array<Target> = []
  for (const storage of storages) services.push(await startService(storage))
  const first = services[0]!
  const record = (await requestJson(recordUrl(first), { headers: { authorization: first.secret } })).body as
    & Readonly<Record<string, unknown>>
    & { readonly id: string }
  const targets = [...services, ...(await startBaselines(record))]
  for (const target of targets) await sanityCheck(target)

  console.log(`auth-read: GET /v1/customer/{id}, ${connections} connections, ${warmup} s warm-up + ${duration} s per measurement, ${rounds} rounds`)
  console.log(`node ${process.versions.node} (${NODE}), ${cpus().length} CPUs, PostgreSQL ${settings}`)
  const [load1 = 0] = loadavg()
  console.log(`load average before the run: ${fixed(load1, 2)}${load1 > 0.5 * cpus().length ? "  (WARNING: other processes are using the CPUs; numbers will be noisy)" : ""}`)
  console.log(`targets: ${targets.map((t) => `${t.name} [pid ${t.server.pid}]`).join(", ")}\n`)

  const measured = new Map<Target, Array<Measurement>>(targets.map((target) => [target, []]))
  for (let round = 1; round <= rounds; round++) {
    for (const target of targets) {
      if (interrupted) return
      await load(target, warmup, `warm-up, round ${round}`)
      const measurement = await load(target, duration, `round ${round}`)
      measured.get(target)!.push(measurement)
      console.log(
        `round ${round}/${rounds}  ${target.name.padEnd(18)} ${thousands(measurement.requestsPerSecond).padStart(7)} req/s` +
          `  p50 ${fixed(measurement.p50, 2).padStart(6)} ms  p99 ${fixed(measurement.p99, 2).padStart(7)} ms` +
          `  ${fixed(measurement.cpuMicros, 0).padStart(4)} us CPU/req  (${measurement.requests} requests)`
      )
    }
  }

  const summaries: Array<Summary> = targets.map((target) => {
    const runs = measured.get(target)!
    return {
      target,
      requestsPerSecond: median(runs.map((m) => m.requestsPerSecond)),
      p50: median(runs.map((m) => m.p50)),
      p99: median(runs.map((m) => m.p99)),
      non2xx: runs.reduce((sum, m) => sum + m.non2xx, 0),
      cpuMicros: median(runs.map((m) => m.cpuMicros)),
      peakRssMiB: target.server.peakRssMiB()
    }
  })
  console.log(`\nload average after the run: ${fixed(loadavg()[0] ?? 0, 2)} (includes the benchmark's own load)`)
  console.log(`metered: ${await checkMetered(targets)}`)
  console.log(`median of ${rounds} round${rounds === 1 ? "" : "s"} (ratios: service req/s divided by the baseline's)`)
  printTable(summaries)
}

try {
  await main()
} catch (error) {
  console.error(`\nBENCHMARK FAILED: ${error instanceof Error ? error.message : String(error)}`)
  if (!(error instanceof BenchmarkInvalid) && error instanceof Error && error.stack !== undefined) console.error(error.stack)
  process.exitCode = 1
} finally {
  if (!interrupted) await cleanup()
}
