/**
 * The capacity envelope of one instance, in one run, against the same run's
 * baselines (`npm run bench:capacity`; docs/operations.md, "Capacity"):
 *
 *   reads      authenticated GET /v1/customer/{id} at 32 connections: the
 *              service on PostgreSQL against the node:http + pg peer (req/s,
 *              goal ≥ 2x; p99, goal ≤ the peer's)
 *   memory     the service's peak RSS during a long run of those reads
 *              (goal ≤ 300 MiB)
 *   pglite     the same reads on the embedded database against PostgreSQL (goal ≥ 0.8x)
 *   mcp        MCP tools/call lookup_ticket against its REST twin (goal ≥ 0.9x)
 *   meter      the meter rows a second one PostgreSQL primary commits before the
 *              meter's flushes fall behind (bench/meter-ceiling.ts): when to
 *              shard by app
 *
 *   node bench/capacity.ts [--seconds 5] [--rounds 4] [--rss-seconds 60] [--meter-seconds 5]
 *
 * Each read target is measured once a round, every other round in reverse
 * order, and the two sides of every ratio one right after the other (pg
 * peer, service, PGlite, MCP, REST). A ratio is the median of its rounds'
 * ratios, and its rounds are printed beside it: on a machine shared with
 * other work, the load of the moment moves whole rounds by a third, and a
 * ratio of two medians taken minutes apart measures that more than the
 * service. The load average before and after says how much else ran on the
 * machine. Results: bench/results/capacity-latest.json.
 */
import { spawn } from "node:child_process"
import { mkdirSync, writeFileSync } from "node:fs"
import { cpus, loadavg } from "node:os"
import * as Path from "node:path"
import { type Measurement, runLoad, settle } from "./load.ts"
import type { MeterStep } from "./meter-ceiling.ts"
import { parseFlags, positiveNumber } from "./options.ts"
import { type BenchDatabase, countRows, createBenchDatabase } from "./postgres.ts"
import { buildScenarios, checkScenario, prepareService, type Target } from "./scenarios.ts"
import { NODE, stopAll } from "./servers.ts"
import { fixed, median, renderTable, thousands } from "./stats.ts"
import { BenchmarkInvalid, cleanupOnExit, startBaselines, startService } from "./targets.ts"

const USAGE = "usage: node bench/capacity.ts [--seconds S] [--rounds N] [--rss-seconds S] [--meter-seconds S]"
const flags = parseFlags({
  seconds: { type: "string", default: "5" },
  rounds: { type: "string", default: "4" },
  "rss-seconds": { type: "string", default: "60" },
  "meter-seconds": { type: "string", default: "5" }
}, USAGE)
const seconds = positiveNumber("seconds", flags.seconds, false, USAGE)
const rounds = positiveNumber("rounds", flags.rounds, true, USAGE)
const rssSeconds = positiveNumber("rss-seconds", flags["rss-seconds"], false, USAGE)
const meterSeconds = positiveNumber("meter-seconds", flags["meter-seconds"], false, USAGE)

const CONNECTIONS = 32
const WARMUP = { seconds: 3, connections: CONNECTIONS } as const
const BENCH_DATABASE = "mfg_bench_capacity"
const METER_DATABASE = "mfg_bench_capacity_meter"
const RESULTS_FILE = Path.join(import.meta.dirname, "results", "capacity-latest.json")

let database: BenchDatabase | undefined
let meterDatabase: BenchDatabase | undefined
const { cleanup, interrupted } = cleanupOnExit(BENCH_DATABASE, () => database)

/** The meter's ceiling, measured by bench/meter-ceiling.ts in a process of its own on a database of its own. */
const meterCeiling = (url: string) =>
  new Promise<{ readonly steps: ReadonlyArray<MeterStep>; readonly ceiling: number; readonly firstBehind: number | null }>((resolve, reject) => {
    const child = spawn(NODE, ["bench/meter-ceiling.ts", "--seconds", String(meterSeconds)], {
      cwd: Path.join(import.meta.dirname, ".."),
      env: { ...process.env, DATABASE_URL: url, DATA_DIR: "", REDIS_URL: "", OTEL_EXPORTER_OTLP_ENDPOINT: "" },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let output = ""
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()))
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()))
    child.once("exit", (code) => {
      const line = output.split("\n").find((candidate) => candidate.startsWith("{\"seconds\""))
      if (code !== 0 || line === undefined) reject(new BenchmarkInvalid(`meter-ceiling failed (${code}):\n${output.slice(-2000)}`))
      else resolve(JSON.parse(line))
    })
  })

interface Row {
  readonly label: string
  readonly measured: string
  readonly goal: string
  readonly verdict: "met" | "missed" | ""
}

const verdict = (met: boolean): "met" | "missed" => (met ? "met" : "missed")

const main = async () => {
  const started = Date.now()
  const [loadBefore = 0] = loadavg()
  database = await createBenchDatabase(BENCH_DATABASE)
  meterDatabase = await createBenchDatabase(METER_DATABASE)

  const onPostgres = await prepareService(await startService({ name: "service (postgres)", storage: "postgres", databaseUrl: database.url }))
  const embedded = await prepareService(await startService({ name: "service (pglite)", storage: "pglite" }))
  const baselines = await startBaselines(database, onPostgres.customer)
  const [read, mcp] = buildScenarios(["read", "mcp"], { service: onPostgres, baselines })
  const pick = (targets: ReadonlyArray<Target>, key: string) => targets.find((target) => target.key === key)!
  // The same read of the embedded service's own customer.
  const embeddedRead: Target = {
    ...pick(read!.targets, "service"),
    key: "service",
    label: "service (PGlite)",
    server: embedded.server,
    requests: [{ method: "GET", path: `/v1/customer/${encodeURIComponent(embedded.customer.id)}`, headers: { authorization: `Bearer ${embedded.secret}` } }],
    verifyBody: (body) => body.includes(`"id":"${embedded.customer.id}"`)
  }
  const readEmbedded = { ...read!, targets: [embeddedRead], ratios: [] }
  for (const scenario of [read!, mcp!, readEmbedded]) await checkScenario(scenario)
  const targets: ReadonlyArray<{ readonly key: string; readonly target: Target }> = [
    { key: "peer", target: pick(read!.targets, "peer") },
    { key: "service", target: pick(read!.targets, "service") },
    { key: "pglite", target: embeddedRead },
    { key: "mcp", target: pick(mcp!.targets, "mcp") },
    { key: "rest", target: pick(mcp!.targets, "rest") }
  ]
  console.log(
    `capacity: ${targets.length} targets at ${CONNECTIONS} connections, ${rounds} rounds of ${seconds} s, a ${rssSeconds} s memory run, ` +
      `the meter's ceiling in steps of ${meterSeconds} s`
  )
  console.log(`node ${process.versions.node}, ${cpus().length} CPUs, PostgreSQL ${database.settings}`)
  console.log(
    `load average before the run: ${fixed(loadBefore, 2)}` +
      (loadBefore > 0.5 * cpus().length ? "  (WARNING: other processes are using the CPUs; figures will be noisy)" : "")
  )

  const measured = new Map<string, Array<Measurement>>(targets.map(({ key }) => [key, []]))
  const load = (target: Target, forSeconds: number, mustComplete = true) =>
    runLoad({ ...target, connections: CONNECTIONS, seconds: forSeconds, database: BENCH_DATABASE, mustComplete })
  for (const { target } of targets) {
    if (interrupted()) return
    await load(target, WARMUP.seconds, false)
    await settle(target.server)
  }
  for (let round = 1; round <= rounds; round++) {
    for (const { key, target } of round % 2 === 1 ? targets : [...targets].reverse()) {
      if (interrupted()) return
      await load(target, 1, false)
      const measurement = await load(target, seconds)
      measured.get(key)!.push(measurement)
      await settle(target.server)
      console.log(
        `round ${round}  ${target.label.padEnd(30)} ${thousands(measurement.requestsPerSecond).padStart(7)} req/s  ` +
          `p99 ${fixed(measurement.p99, 2).padStart(7)} ms` + (measurement.errors > 0 ? `  ERRORS: ${measurement.errorDetail}` : "")
      )
    }
  }

  // The service under the same reads for long: its memory's high-water mark.
  const serviceTarget = targets.find(({ key }) => key === "service")!.target
  const long = await load(serviceTarget, rssSeconds)
  await settle(serviceTarget.server)
  console.log(`memory run  ${rssSeconds} s  ${thousands(long.requestsPerSecond)} req/s, peak RSS ${fixed(long.peakRssMiB, 0)} MiB`)

  // Every 2xx the PostgreSQL service answered is metered (the load's own check of the figures).
  const answered = [...measured.get("service")!, ...measured.get("mcp")!, ...measured.get("rest")!, long].reduce((sum, m) => sum + m.expected, 0)
  const rows = await countRows(database.name, "meter_event")
  if (rows < answered) throw new BenchmarkInvalid(`${answered} calls answered in the measurements but only ${rows} meter rows`)

  // The services stopped (idle, they would still share the machine with it): the meter's ceiling.
  await stopAll()
  const meter = await meterCeiling(meterDatabase.url)
  for (const step of meter.steps) {
    console.log(
      `meter  ${thousands(step.offered).padStart(7)}/s offered  ${thousands(step.committedPerSecond).padStart(7)}/s committed  ` +
        `wait p50 ${fixed(step.waitP50Ms, 1)} ms p99 ${fixed(step.waitP99Ms, 1)} ms  ${step.sustained ? "kept up" : "fell behind"}`
    )
  }

  const of = (key: string, field: "requestsPerSecond" | "p99") => median(measured.get(key)!.map((m) => m[field]))
  /** The ratio of two targets in each round, and their median. */
  const ratioOf = (numerator: string, denominator: string, field: "requestsPerSecond" | "p99" = "requestsPerSecond") => {
    const byRound = measured.get(numerator)!.map((m, index) => m[field] / measured.get(denominator)![index]![field])
    return { median: median(byRound), byRound }
  }
  /** `a / b req/s = 1.23x (rounds 1.10–1.40)`: the medians of each side, the median ratio, and the rounds' range. */
  const described = (numerator: string, denominator: string, ratio: ReturnType<typeof ratioOf>, unit: string, field: "requestsPerSecond" | "p99") => {
    const value = (key: string) => field === "p99" ? fixed(of(key, field), 1) : thousands(of(key, field))
    return `${value(numerator)} / ${value(denominator)} ${unit} = ${fixed(ratio.median, 2)}x (rounds ${fixed(Math.min(...ratio.byRound), 2)}–${
      fixed(Math.max(...ratio.byRound), 2)
    })`
  }
  const readRatio = ratioOf("service", "peer")
  const p99Ratio = ratioOf("service", "peer", "p99")
  const pgliteRatio = ratioOf("pglite", "service")
  const mcpRatio = ratioOf("mcp", "rest")
  const peakRss = long.peakRssMiB ?? Number.NaN
  const table: ReadonlyArray<Row> = [
    {
      label: "reads at 32 connections, service / pg peer",
      measured: described("service", "peer", readRatio, "req/s", "requestsPerSecond"),
      goal: "≥ 2x",
      verdict: verdict(readRatio.median >= 2)
    },
    {
      label: "p99, service / pg peer",
      measured: described("service", "peer", p99Ratio, "ms", "p99"),
      goal: "≤ 1x",
      verdict: verdict(p99Ratio.median <= 1)
    },
    {
      label: `peak RSS, ${rssSeconds} s of those reads`,
      measured: `${fixed(peakRss, 0)} MiB (${thousands(long.requestsPerSecond)} req/s)`,
      goal: "≤ 300 MiB",
      verdict: verdict(peakRss <= 300)
    },
    {
      label: "reads, PGlite / PostgreSQL",
      measured: described("pglite", "service", pgliteRatio, "req/s", "requestsPerSecond"),
      goal: "≥ 0.8x",
      verdict: verdict(pgliteRatio.median >= 0.8)
    },
    {
      label: "MCP tools/call / REST",
      measured: described("mcp", "rest", mcpRatio, "req/s", "requestsPerSecond"),
      goal: "≥ 0.9x",
      verdict: verdict(mcpRatio.median >= 0.9)
    },
    {
      label: "meter rows/s one PostgreSQL primary keeps up with",
      measured: `${thousands(meter.ceiling)}/s (behind at ${meter.firstBehind === null ? "none of the rates tried" : `${thousands(meter.firstBehind)}/s`})`,
      goal: "",
      verdict: ""
    }
  ]
  const [loadAfter = 0] = loadavg()
  console.log(`\neach side the median of ${rounds} rounds; each ratio the median of the rounds' ratios\n`)
  console.log(renderTable(["figure", "measured", "goal", ""], table.map((row) => [row.label, row.measured, row.goal, row.verdict]), 1, [1]))
  console.log(`\nload average after the run: ${fixed(loadAfter, 2)} (includes the run's own load)`)
  mkdirSync(Path.dirname(RESULTS_FILE), { recursive: true })
  writeFileSync(
    RESULTS_FILE,
    `${
      JSON.stringify(
        {
          startedAt: new Date(started).toISOString(),
          elapsedSeconds: (Date.now() - started) / 1000,
          options: { seconds, rounds, rssSeconds, meterSeconds, connections: CONNECTIONS },
          machine: { node: process.versions.node, cpus: cpus().length, postgres: database.settings, loadBefore, loadAfter },
          measurements: Object.fromEntries(measured),
          memoryRun: long,
          meter,
          table
        },
        null,
        2
      )
    }\n`
  )
  console.log(`results: ${RESULTS_FILE}`)
  const elapsed = (Date.now() - started) / 1000
  console.log(`total time: ${Math.floor(elapsed / 60)} min ${Math.round(elapsed % 60)} s`)
  if ([...measured.values()].flat().some((m) => m.errors > 0)) process.exitCode = 1
}

try {
  await main()
} catch (error) {
  console.error(`\nBENCHMARK FAILED: ${error instanceof Error ? error.message : String(error)}`)
  if (!(error instanceof BenchmarkInvalid) && error instanceof Error && error.stack !== undefined) console.error(error.stack)
  process.exitCode = 1
} finally {
  if (!interrupted()) {
    await cleanup()
    await meterDatabase?.drop()
  }
}
