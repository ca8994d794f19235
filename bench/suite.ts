/**
 * The benchmark suite: every scenario of bench/scenarios.ts at 1, 32 and 256
 * connections, against the baselines, in one run and one table.
 *
 *   node bench/suite.ts [--duration 4] [--warmup 1] [--rounds 2] [--connections 1,32,256]
 *                       [--scenarios read,401,mcp,part,tracing,ratelimit] [--storage postgres|pglite] [--profile]
 *
 * Starts each process once (the service, the two baselines, the fixture host,
 * for `tracing` a second service exporting spans and, for `ratelimit`, two
 * services with a rate limit, in memory and in Redis), loads each target
 * for a few seconds (not measured), then measures round after round: per scenario and number of connections, each target in turn
 * (a warm-up, then the measurement). The table shows the median of the
 * rounds, the ratios and their goals; bench/results/latest.json has it all.
 * Responses with another status or body than expected are counted in the
 * table's `errors`; a wrong setup (a check before the load fails) aborts.
 * See bench/README.md.
 */
import { cpus, loadavg } from "node:os"
import * as Path from "node:path"
import { runLoad, settle } from "./load.ts"
import { listOf, parseFlags, positiveNumber, usageError } from "./options.ts"
import { type BenchDatabase, countRows, createBenchDatabase } from "./postgres.ts"
import {
  buildScenarios,
  checkScenario,
  MCP_RATIO,
  prepareService,
  RATE_LIMIT_ON,
  READ_RATIO,
  type Scenario,
  SCENARIO_IDS,
  type SuiteTargets
} from "./scenarios.ts"
import { freePort, memoryByProcess, NODE, type Server, startServer } from "./servers.ts"
import { fixed, thousands } from "./stats.ts"
import { checkGoals, renderGoals } from "./suite-goals.ts"
import { type Cell, renderResult, renderSummary, summarize, writeResult } from "./suite-report.ts"
import { BenchmarkInvalid, cleanupOnExit, startBaselines, startService, type Storage } from "./targets.ts"

// ---------------------------------------------------------------- options

const USAGE = "usage: node bench/suite.ts [--duration S] [--warmup S] [--rounds N] [--connections 1,32,256] " +
  `[--scenarios ${SCENARIO_IDS.join(",")}] [--storage postgres|pglite] [--profile]`

const flags = parseFlags({
  duration: { type: "string", default: "4" },
  warmup: { type: "string", default: "1" },
  rounds: { type: "string", default: "2" },
  connections: { type: "string", default: "1,32,256" },
  scenarios: { type: "string", default: SCENARIO_IDS.join(",") },
  storage: { type: "string", default: "postgres" },
  profile: { type: "boolean", default: false }
}, USAGE)
const duration = positiveNumber("duration", flags.duration, false, USAGE)
const warmup = positiveNumber("warmup", flags.warmup, false, USAGE)
const rounds = positiveNumber("rounds", flags.rounds, true, USAGE)
const connections = flags.connections.split(",").map((text) => positiveNumber("connections", text.trim(), true, USAGE))
const scenarioIds = listOf("scenarios", flags.scenarios, SCENARIO_IDS, USAGE)
if (flags.storage !== "postgres" && flags.storage !== "pglite") usageError(`--storage must be postgres or pglite`, USAGE)
const storage = flags.storage as Storage
/** With --profile, each service writes a V8 CPU profile there when it stops (read it with bench/profile-summary.ts). */
const PROFILE_DIR = Path.join(import.meta.dirname, "results", "profiles")
const nodeOptions = flags.profile ? ["--cpu-prof", `--cpu-prof-dir=${PROFILE_DIR}`] : []

const BENCH_DATABASE = "mfg_bench_suite"
/** The Redis of the `ratelimit` scenario's Redis-backed service. */
const BENCH_REDIS_URL = process.env["BENCH_REDIS_URL"] ?? "redis://127.0.0.1:6379"

// ---------------------------------------------------------------- setup

let database: BenchDatabase | undefined
/** The service's processes (server, then its database process on PGlite) right after /ready, and before the first load. */
let startupMemory: ReturnType<typeof memoryByProcess> = []
let beforeLoadMemory: ReturnType<typeof memoryByProcess> = []

const describeMemory = (processes: ReturnType<typeof memoryByProcess>, field: "rssMiB" | "peakMiB") =>
  processes.length === 0
    ? "-"
    : `${thousands(processes.reduce((sum, one) => sum + one[field], 0))} MiB` +
      (processes.length > 1 ? ` (${processes.map((one) => thousands(one[field])).join(" + ")}: server + database process)` : "")

const { cleanup, interrupted } = cleanupOnExit(BENCH_DATABASE, () => database)

const startFixtureHost = async (): Promise<Server> => {
  const port = await freePort()
  return startServer({ name: "fixture host", args: ["bench/fixture-host.ts"], port, env: { PORT: String(port) } })
}

const fixtureStats = async (host: Server) => (await fetch(`${host.baseUrl}/stats`)).json() as Promise<Record<string, number>>

/** Starts what the chosen scenarios need. */
const startTargets = async (db: BenchDatabase): Promise<SuiteTargets> => {
  const needs = (id: (typeof SCENARIO_IDS)[number]) => scenarioIds.includes(id)
  const fixtureHost = needs("part") || needs("tracing") ? await startFixtureHost() : undefined
  const started = await startService({
    name: `service (${storage})`,
    storage,
    databaseUrl: db.url,
    nodeOptions,
    // The part scenario's model is on 127.0.0.1: allowed for this process only.
    env: { MODEL_FETCH_ALLOW_PRIVATE: "true" }
  })
  // Read before any call: the peak of the start itself (on PGlite, a fresh DATA_DIR's initdb included).
  startupMemory = memoryByProcess(started)
  const service = await prepareService(started)
  const baselines = needs("read") ? await startBaselines(db, service.customer) : undefined
  const onPostgres = needs("read") && storage === "pglite"
    ? await prepareService(await startService({ name: "service (postgres)", storage: "postgres", databaseUrl: db.url, nodeOptions }))
    : undefined
  const traced = needs("tracing") && fixtureHost !== undefined
    ? await prepareService(
      await startService({
        name: `service (${storage}, tracing on)`,
        storage,
        databaseUrl: db.url,
        nodeOptions,
        env: { OTEL_EXPORTER_OTLP_ENDPOINT: fixtureHost.baseUrl, OTEL_SERVICE_NAME: "mfg-bench" }
      })
    )
    : undefined
  const limitedService = (where: string, env: Record<string, string>) =>
    startService({ name: `service (${storage}, rate limit in ${where})`, storage, databaseUrl: db.url, nodeOptions, env })
      .then(prepareService)
  const limited = needs("ratelimit")
    ? {
      memory: await limitedService("memory", { RATE_LIMIT: RATE_LIMIT_ON }),
      redis: await limitedService("Redis", { RATE_LIMIT: RATE_LIMIT_ON, REDIS_URL: BENCH_REDIS_URL })
    }
    : undefined
  // Without Redis the service would count in memory (its outage fallback) and the row would measure that.
  if (limited !== undefined && !limited.redis.server.output().includes("rate limits: counting in Redis")) {
    throw new BenchmarkInvalid(`the service did not connect to Redis at ${BENCH_REDIS_URL} (BENCH_REDIS_URL)`)
  }
  return {
    service,
    ...(baselines === undefined ? {} : { baselines }),
    ...(onPostgres === undefined ? {} : { onPostgres }),
    ...(fixtureHost === undefined ? {} : { fixtureHost }),
    ...(traced === undefined ? {} : { traced }),
    ...(limited === undefined ? {} : { limited })
  }
}

// ---------------------------------------------------------------- measuring

/** The first load a target sees, before any round: the service's code paths get compiled (JIT) and its pools filled. */
const FIRST_WARMUP = { seconds: 3, connections: 32 } as const

/** Loads every target once with FIRST_WARMUP; its errors go to the target's first cell. */
const warmUpOnce = async (cells: ReadonlyArray<Cell>) => {
  for (const scenario of new Set(cells.map((cell) => cell.scenario))) {
    for (const target of scenario.targets) {
      if (interrupted()) return
      const first = cells.find((cell) => cell.scenario === scenario && cell.target === target.key)
      const warmed = await runLoad({ ...target, ...FIRST_WARMUP, database: BENCH_DATABASE, mustComplete: false })
      first?.warmups.push(warmed)
      await settle(target.server)
      console.log(
        `warm-up  ${scenario.id.padEnd(7)} ${target.label.padEnd(30)} ${thousands(warmed.requestsPerSecond).padStart(7)} req/s` +
          (warmed.errors > 0 ? `  ERRORS: ${warmed.errorDetail}` : "")
      )
    }
  }
}

/** Every round: each scenario, each number of connections, each target in turn (every other round in reverse order). */
const measure = async (scenarios: ReadonlyArray<Scenario>): Promise<Array<Cell>> => {
  const cells: Array<Cell> = scenarios.flatMap((scenario) =>
    (scenario.connections ?? connections).flatMap((count) =>
      scenario.targets.map((target) => ({ scenario, target: target.key, label: target.label, connections: count, rounds: [], warmups: [] }))
    )
  )
  await warmUpOnce(cells)
  const total = rounds * cells.length
  let done = 0
  for (let round = 1; round <= rounds; round++) {
    // Every other round in reverse: no target is always measured first (right after another's load, or before it).
    for (const cell of round % 2 === 1 ? cells : [...cells].reverse()) {
      if (interrupted()) return cells
      const target = cell.scenario.targets.find((candidate) => candidate.key === cell.target)!
      const spec = { ...target, connections: cell.connections, database: BENCH_DATABASE }
      cell.warmups.push(await runLoad({ ...spec, seconds: warmup, mustComplete: false }))
      const measurement = await runLoad({ ...spec, seconds: duration })
      cell.rounds.push(measurement)
      // The next load, often of another target, starts once this one's work is done (its background writes included).
      const waited = await settle(target.server)
      done += 1
      console.log(
        `[${String(done).padStart(3)}/${total}] round ${round}  ${cell.scenario.id.padEnd(7)} ${target.label.padEnd(30)} ` +
          `${String(cell.connections).padStart(3)} conns ${thousands(measurement.requestsPerSecond).padStart(7)} req/s ` +
          `p50 ${fixed(measurement.p50, 2).padStart(7)} ms  p99 ${fixed(measurement.p99, 2).padStart(8)} ms` +
          (waited >= 1000 ? `  (quiet ${fixed(waited / 1000, 1)} s after the load)` : "") +
          (measurement.errors > 0 ? `  ERRORS: ${measurement.errorDetail}` : "")
      )
    }
  }
  return cells
}

/**
 * Every call a service answered with a 2xx under load has its meter row (the
 * services share the database on PostgreSQL), and so has every call of the
 * pg peer.
 */
const checkMetered = async (db: BenchDatabase, cells: ReadonlyArray<Cell>, targets: SuiteTargets): Promise<string> => {
  const answered = (servers: ReadonlyArray<Server | undefined>) =>
    cells.reduce((sum, cell) => {
      const target = cell.scenario.targets.find((candidate) => candidate.key === cell.target)!
      if (!servers.includes(target.server) || target.expectedStatus >= 300) return sum
      return sum + [...cell.rounds, ...cell.warmups].reduce((calls, m) => calls + m.expected, 0)
    }, 0)
  const checks: Array<[string, number]> = []
  if (storage === "postgres") {
    checks.push(["meter_event", answered([targets.service.server, targets.traced?.server, targets.limited?.memory.server, targets.limited?.redis.server])])
  } else if (targets.onPostgres !== undefined) {
    checks.push(["meter_event", answered([targets.onPostgres.server])])
  }
  if (targets.baselines !== undefined) checks.push(["bench_meter", answered([targets.baselines.peer])])
  const lines: Array<string> = []
  for (const [table, calls] of checks) {
    const rows = await countRows(db.name, table)
    if (rows < calls) throw new BenchmarkInvalid(`${calls} calls answered under load but only ${rows} rows in ${table}`)
    lines.push(`${rows} rows in ${table} for ${calls} calls answered under load`)
  }
  return lines.length === 0 ? "not checked (PGlite is inside the service process)" : lines.join(", ")
}

// ---------------------------------------------------------------- run

const main = async () => {
  const started = Date.now()
  const [loadBefore = 0] = loadavg()
  database = await createBenchDatabase(BENCH_DATABASE)
  const targets = await startTargets(database)
  const scenarios = buildScenarios(scenarioIds, targets)
  for (const scenario of scenarios) await checkScenario(scenario)
  beforeLoadMemory = memoryByProcess(targets.service.server)

  const processes = [
    targets.service.server,
    targets.onPostgres?.server,
    targets.baselines?.peer,
    targets.baselines?.ceiling,
    targets.traced?.server,
    targets.limited?.memory.server,
    targets.limited?.redis.server,
    targets.fixtureHost
  ]
    .flatMap((server) => (server === undefined ? [] : [`${server.name} [pid ${server.pid}]`]))
  const targetCount = scenarios.reduce((sum, s) => sum + s.targets.length, 0)
  const cellCount = scenarios.reduce((sum, s) => sum + s.targets.length * (s.connections ?? connections).length, 0)
  console.log(
    `bench suite: ${scenarioIds.join(", ")} at ${connections.join(", ")} connections (tracing: 32), ` +
      `${rounds} round${rounds === 1 ? "" : "s"} of ${warmup} s warm-up + ${duration} s per measurement, ` +
      `${cellCount * rounds} measurements after a first ${FIRST_WARMUP.seconds} s warm-up of each target ` +
      `(about ${Math.ceil((targetCount * FIRST_WARMUP.seconds + cellCount * rounds * (warmup + duration)) / 60)} min)`
  )
  console.log(`node ${process.versions.node} (${NODE}), ${cpus().length} CPUs, PostgreSQL ${database.settings}, service storage ${storage}`)
  console.log(
    `load average before the run: ${fixed(loadBefore, 2)}` +
      (loadBefore > 0.5 * cpus().length ? "  (WARNING: other processes are using the CPUs; figures will be noisy)" : "")
  )
  console.log(`processes: ${processes.join(", ")}\n`)
  for (const scenario of scenarios) console.log(`  ${scenario.id.padEnd(8)} ${scenario.title}`)
  console.log("")

  const cells = await measure(scenarios)
  if (interrupted()) return
  const result = summarize(cells, scenarios)
  const loadAfter = loadavg()[0] ?? 0
  const metered = await checkMetered(database, cells, targets)
  const exported = targets.fixtureHost === undefined ? undefined : await fixtureStats(targets.fixtureHost)
  const elapsed = (Date.now() - started) / 1000

  console.log(`\nmedian of ${rounds} round${rounds === 1 ? "" : "s"}; errors: unexpected status or body, socket errors and timeouts, warm-ups included\n`)
  console.log(renderResult(result, scenarios.flatMap((scenario) => scenario.ratios)))
  console.log(
    `\nservice memory: start-up high-water mark ${describeMemory(startupMemory, "peakMiB")} when ready ` +
      `(${thousands(targets.service.server.startupPeakRssMiB() ?? Number.NaN)} MiB at most while starting, processes gone since included); ` +
      `resident after setup, before the load ${describeMemory(beforeLoadMemory, "rssMiB")}`
  )
  const serviceRows = result.rows.filter((row) =>
    cells.some((cell) =>
      cell.scenario.id === row.scenario && cell.target === row.target &&
      cell.scenario.targets.find((target) => target.key === cell.target)?.server === targets.service.server
    )
  )
  const startupPeak = targets.service.server.startupPeakRssMiB()
  console.log(`\ngoals (issue 19):\n${renderGoals(checkGoals(result.rows, serviceRows, storage, startupPeak))}\n`)
  console.log(`metered: ${metered}`)
  if (exported !== undefined) {
    console.log(
      `fixture host: ${exported["modelDownloads"]} model downloads, ${exported["traceExports"]} OTLP trace exports ` +
        `(${fixed((exported["traceBytes"] ?? 0) / 1024 / 1024, 1)} MiB)`
    )
  }
  console.log(`load average after the run: ${fixed(loadAfter, 2)} (includes the suite's own load)`)
  const file = writeResult({
    startedAt: new Date(started).toISOString(),
    elapsedSeconds: elapsed,
    options: { duration, warmup, rounds, connections, scenarios: scenarioIds, storage },
    machine: { node: process.versions.node, cpus: cpus().length, postgres: database.settings, loadBefore, loadAfter },
    metered,
    serviceMemory: { startup: startupMemory, beforeLoad: beforeLoadMemory },
    fixtureHost: exported ?? null
  }, result)
  console.log(`results: ${file}`)
  if (flags.profile) console.log(`CPU profiles of the services (written as they stop): ${PROFILE_DIR}`)
  console.log(`total time: ${Math.floor(elapsed / 60)} min ${Math.round(elapsed % 60)} s`)
  console.log(
    `\nsummary: the read and MCP ratios against the same run's peer (req/s, median of ${rounds} round${rounds === 1 ? "" : "s"})\n` +
      renderSummary(result, [{ label: READ_RATIO, scenario: "read" }, { label: MCP_RATIO, scenario: "mcp" }])
  )
  if (result.rows.some((row) => row.errors > 0)) process.exitCode = 1
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
