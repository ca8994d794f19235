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
import { cpus, loadavg } from "node:os"
import { type Measurement, runLoad } from "./load.ts"
import { parseFlags, positiveNumber, usageError } from "./options.ts"
import { type BenchDatabase, countRows, createBenchDatabase } from "./postgres.ts"
import { NODE, type Server } from "./servers.ts"
import { fixed, median, ratioText, renderTable, thousands } from "./stats.ts"
import {
  BenchmarkInvalid,
  checkAuthenticatedRead,
  cleanupOnExit,
  createRecord,
  createSecret,
  requestJson,
  startBaselines,
  startService,
  type Storage
} from "./targets.ts"

// ---------------------------------------------------------------- options

const USAGE = `usage: node bench/auth-read.ts [--storage postgres|pglite|both] [--connections N] [--duration S] [--rounds N] [--warmup S]`

const flags = parseFlags({
  storage: { type: "string", default: "postgres" },
  connections: { type: "string", default: "32" },
  duration: { type: "string", default: "8" },
  rounds: { type: "string", default: "3" },
  warmup: { type: "string", default: "2" }
}, USAGE)

const STORAGES: Record<string, ReadonlyArray<Storage>> = {
  postgres: ["postgres"],
  pglite: ["pglite"],
  both: ["postgres", "pglite"]
}
const storages = STORAGES[flags.storage] ?? usageError(`--storage must be postgres, pglite or both, not ${JSON.stringify(flags.storage)}`, USAGE)
const connections = positiveNumber("connections", flags.connections, true, USAGE)
const duration = positiveNumber("duration", flags.duration, false, USAGE)
const rounds = positiveNumber("rounds", flags.rounds, true, USAGE)
const warmup = positiveNumber("warmup", flags.warmup, false, USAGE)

const BENCH_DATABASE = "mfg_bench"

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

const recordPath = (target: Target) => `/v1/customer/${encodeURIComponent(target.recordId)}`

/** 2xx responses each target gave under load (warm-ups included), to check against its meter table. */
const answered = new Map<Target, number>()

/** One autocannon run; throws BenchmarkInvalid on any response that is not a 2xx with the record. */
const load = async (target: Target, seconds: number, phase: string): Promise<Measurement> => {
  const expected = `"id":"${target.recordId}"`
  const measurement = await runLoad({
    server: target.server,
    requests: [{ method: "GET", path: recordPath(target), headers: { authorization: `Bearer ${target.secret}` } }],
    expectedStatus: 200,
    verifyBody: (body) => body.includes(expected),
    connections,
    seconds
  })
  if (measurement.errors > 0) {
    throw new BenchmarkInvalid(
      `${target.name} (${phase}): ${measurement.errorDetail}\n--- last output of ${target.name} ---\n${target.server.output().slice(-4000)}`
    )
  }
  answered.set(target, (answered.get(target) ?? 0) + measurement.expected)
  return measurement
}

// ---------------------------------------------------------------- setup

let database: BenchDatabase | undefined

/**
 * Every call answered under load must have its meter row: the service's in
 * meter_event (PostgreSQL only: PGlite lives inside the service process),
 * the pg peer's in bench_meter. More rows than answers is expected (setup
 * calls, calls cut off when a run ends).
 */
const checkMetered = async (targets: ReadonlyArray<Target>): Promise<string> => {
  const lines: Array<string> = []
  for (const target of targets) {
    const table = target.kind === "pg-peer" ? "bench_meter" : target.storage === "postgres" ? "meter_event" : undefined
    if (table === undefined) continue
    const rows = await countRows(BENCH_DATABASE, table)
    const calls = answered.get(target) ?? 0
    if (rows < calls) throw new BenchmarkInvalid(`${target.name}: ${calls} calls answered under load but only ${rows} rows in ${table}`)
    lines.push(`${target.name} ${rows} rows in ${table} for ${calls} calls answered under load`)
  }
  return lines.join(", ")
}

const startServiceTarget = async (db: BenchDatabase, storage: Storage): Promise<Target> => {
  const server = await startService({ name: `service (${storage})`, storage, databaseUrl: db.url })
  const { value: secret } = await createSecret(server)
  const record = await createRecord(server, secret, "customer", { name: "Bench", email: "bench@example.com" })
  return { name: server.name, kind: "service", storage, server, secret, recordId: record.id }
}

// ---------------------------------------------------------------- report

interface Summary {
  readonly target: Target
  readonly requestsPerSecond: number
  readonly p50: number
  readonly p99: number
  readonly errors: number
  readonly cpuMicros: number
  readonly peakRssMiB: number | undefined
}

const printTable = (summaries: ReadonlyArray<Summary>) => {
  const ceiling = summaries.find((s) => s.target.kind === "ceiling")
  const peer = summaries.find((s) => s.target.kind === "pg-peer")
  const header = ["target", "req/s", "p50 ms", "p99 ms", "non-2xx", "CPU us/req", "peak RSS MiB", "service/ceiling", "service/pg peer"]
  const rows = summaries.map((s) => {
    const ratio = (base: Summary | undefined) =>
      s.target.kind === "service" && base !== undefined ? ratioText(s.requestsPerSecond / base.requestsPerSecond) : ""
    return [
      s.target.name,
      thousands(s.requestsPerSecond),
      fixed(s.p50, 2),
      fixed(s.p99, 2),
      String(s.errors),
      fixed(s.cpuMicros, 0),
      fixed(s.peakRssMiB, 0),
      ratio(ceiling),
      ratio(peer)
    ]
  })
  console.log(renderTable(header, rows))
}

// ---------------------------------------------------------------- run

const { cleanup, interrupted } = cleanupOnExit(BENCH_DATABASE, () => database)

const main = async () => {
  const db = (database = await createBenchDatabase(BENCH_DATABASE))
  const services: Array<Target> = []
  for (const storage of storages) services.push(await startServiceTarget(db, storage))
  const first = services[0]!
  // The record as a read answers it: the baselines serve this copy, so every target answers the same body.
  const record = (await requestJson(`${first.server.baseUrl}${recordPath(first)}`, { headers: { authorization: first.secret } })).body as
    & Readonly<Record<string, unknown>>
    & { readonly id: string }
  const baselines = await startBaselines(db, record)
  const targets: Array<Target> = [
    ...services,
    { name: baselines.ceiling.name, kind: "ceiling", server: baselines.ceiling, secret: baselines.secret, recordId: record.id },
    { name: baselines.peer.name, kind: "pg-peer", server: baselines.peer, secret: baselines.secret, recordId: record.id }
  ]
  for (const target of targets) {
    await checkAuthenticatedRead(target.name, `${target.server.baseUrl}${recordPath(target)}`, target.secret, target.recordId)
  }
  const settings = db.settings

  console.log(`auth-read: GET /v1/customer/{id}, ${connections} connections, ${warmup} s warm-up + ${duration} s per measurement, ${rounds} rounds`)
  console.log(`node ${process.versions.node} (${NODE}), ${cpus().length} CPUs, PostgreSQL ${settings}`)
  const [load1 = 0] = loadavg()
  console.log(
    `load average before the run: ${fixed(load1, 2)}${
      load1 > 0.5 * cpus().length ? "  (WARNING: other processes are using the CPUs; numbers will be noisy)" : ""
    }`
  )
  console.log(`targets: ${targets.map((t) => `${t.name} [pid ${t.server.pid}]`).join(", ")}\n`)

  const measured = new Map<Target, Array<Measurement>>(targets.map((target) => [target, []]))
  for (let round = 1; round <= rounds; round++) {
    for (const target of targets) {
      if (interrupted()) return
      await load(target, warmup, `warm-up, round ${round}`)
      const measurement = await load(target, duration, `round ${round}`)
      measured.get(target)!.push(measurement)
      console.log(
        `round ${round}/${rounds}  ${target.name.padEnd(18)} ${thousands(measurement.requestsPerSecond).padStart(7)} req/s` +
          `  p50 ${fixed(measurement.p50, 2).padStart(6)} ms  p99 ${fixed(measurement.p99, 2).padStart(7)} ms` +
          `  ${fixed(measurement.cpuMicros, 0).padStart(4)} us CPU/req  (${measurement.responses} responses)`
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
      errors: runs.reduce((sum, m) => sum + m.errors, 0),
      cpuMicros: median(runs.map((m) => m.cpuMicros)),
      // The largest of the measurements' peaks (each measurement restarts the process's VmHWM).
      peakRssMiB: Math.max(...runs.map((m) => m.peakRssMiB ?? Number.NaN))
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
  if (!interrupted()) await cleanup()
}
