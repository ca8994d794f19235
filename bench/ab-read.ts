/**
 * A/B of one authenticated call: this tree's service against another
 * checkout's (the commit before a change), side by side, measured in
 * alternation (A B, then B A, ...) so that both meet the same machine load,
 * at 32 connections on PostgreSQL. The call (`--call`) is the read
 * `GET /v1/customer/{id}` (the default), the MCP `tools/call lookup_ticket`
 * (`mcp`) or its REST twin `GET /v1/ticket/lookup` (`rest`): bench:capacity's
 * MCP / REST ratio, one side at a time. On a shared,
 * noisy machine a single run of each (`npm run bench`, one after the other)
 * measures the load of the moment more than the change; pairs measured
 * seconds apart, and the median of their ratios, do not.
 *
 *   git worktree add /tmp/before <commit>   (or: git archive <commit> | tar -x -C /tmp/before)
 *   ln -s "$PWD/node_modules" /tmp/before/node_modules
 *   node bench/ab-read.ts --base /tmp/before [--pairs 16] [--duration 5] [--warmup 5] [--connections 32] [--storage pglite]
 *                         [--call read|mcp|rest]
 *
 * Each service is loaded for `--warmup` seconds first (not measured: the JIT,
 * and a tree whose sources changed since its last start compiles them), then
 * each measurement has a 1 s warm-up of its own. Prints each pair and the medians: requests per second and the service's
 * CPU per request (this tree divided by the base's). Each service has a
 * database of its own, named with a random suffix so that runs of several
 * people on one PostgreSQL never meet; with `--storage pglite`, an embedded
 * one each (its database process's CPU counts in the service's).
 */
import { randomBytes } from "node:crypto"
import * as Path from "node:path"
import { pathToFileURL } from "node:url"
import { runLoad } from "./load.ts"
import { parseFlags, positiveNumber, usageError } from "./options.ts"
import { createBenchDatabase } from "./postgres.ts"
import * as HereScenarios from "./scenarios.ts"
import type { Target } from "./scenarios.ts"
import { stopAll } from "./servers.ts"
import { fixed, median, thousands } from "./stats.ts"
import * as Here from "./targets.ts"

const USAGE =
  "usage: node bench/ab-read.ts --base <checkout> [--pairs N] [--duration S] [--warmup S] [--connections N] [--storage postgres|pglite] [--call read|mcp|rest]"
const flags = parseFlags({
  base: { type: "string", default: "" },
  pairs: { type: "string", default: "16" },
  duration: { type: "string", default: "5" },
  warmup: { type: "string", default: "5" },
  connections: { type: "string", default: "32" },
  storage: { type: "string", default: "postgres" },
  call: { type: "string", default: "read" }
}, USAGE)
if (flags.storage !== "postgres" && flags.storage !== "pglite") usageError(`--storage is postgres or pglite, not ${flags.storage}`, USAGE)
const storage = flags.storage === "pglite" ? "pglite" : "postgres"
const CALLS = ["read", "mcp", "rest"] as const
const call = CALLS.find((name) => name === flags.call) ?? usageError(`--call is read, mcp or rest, not ${flags.call}`, USAGE)
if (flags.base === "") usageError("--base is required: the checkout to compare with", USAGE)
const pairs = positiveNumber("pairs", flags.pairs, true, USAGE)
const duration = positiveNumber("duration", flags.duration, false, USAGE)
const warmup = positiveNumber("warmup", flags.warmup, false, USAGE)
const connections = positiveNumber("connections", flags.connections, true, USAGE)

type Targets = typeof Here
interface Side {
  readonly name: string
  readonly server: Awaited<ReturnType<Targets["startService"]>>
  /** The call measured, as that service's records make it. */
  readonly target: Pick<Target, "requests" | "verifyBody" | "label">
  /** Its database's name: the CPU of the PostgreSQL backends serving it is measured too. */
  readonly database: string
}

const main = async () => {
  // The base's own modules start the base's service (each targets.ts starts `src/main.ts` of its tree).
  const baseDir = Path.resolve(flags.base)
  const There = (await import(pathToFileURL(Path.join(baseDir, "bench", "targets.ts")).href)) as Targets
  const ThereServers = (await import(pathToFileURL(Path.join(baseDir, "bench", "servers.ts")).href)) as { readonly stopAll: () => Promise<void> }
  // Each tree's records are made with its own admin token.
  const ThereScenarios = (await import(pathToFileURL(Path.join(baseDir, "bench", "scenarios.ts")).href)) as typeof HereScenarios
  const suffix = randomBytes(4).toString("hex")
  const databases = [await createBenchDatabase(`mfg_bench_ab_base_${suffix}`), await createBenchDatabase(`mfg_bench_ab_head_${suffix}`)] as const
  const start = async (targets: Targets, scenarios: typeof HereScenarios, name: string, url: string, database: string): Promise<Side> => {
    const server = await targets.startService({ name, storage, databaseUrl: url })
    const prepared = await scenarios.prepareService(server)
    const { id } = prepared.customer
    const read: Side["target"] = {
      label: "GET /v1/customer/{id}",
      requests: [{ method: "GET", path: `/v1/customer/${id}`, headers: { authorization: `Bearer ${prepared.secret}` } }],
      verifyBody: (body: string) => body.includes(`"id":"${id}"`)
    }
    const [mcp] = scenarios.buildScenarios(["mcp"], { service: prepared })
    const target = call === "read" ? read : mcp!.targets.find((candidate) => candidate.key === call)!
    return { name, server, target, database }
  }
  try {
    const base = await start(There, ThereScenarios, `base (${Path.basename(baseDir)})`, databases[0].url, databases[0].name)
    const head = await start(Here, HereScenarios, "this tree", databases[1].url, databases[1].name)
    const measure = async (side: Side, seconds: number) => {
      const measurement = await runLoad({
        server: side.server,
        ...(storage === "postgres" ? { database: side.database } : {}),
        requests: side.target.requests,
        expectedStatus: 200,
        ...(side.target.verifyBody === undefined ? {} : { verifyBody: side.target.verifyBody }),
        connections,
        seconds
      })
      if (measurement.errors > 0) throw new Here.BenchmarkInvalid(`${side.name}: ${measurement.errorDetail}`)
      return measurement
    }
    console.log(`ab-read: ${head.target.label} on ${storage}, ${connections} connections, ${pairs} pairs of ${duration} s (1 s warm-up each)`)
    for (const side of [base, head]) await measure(side, warmup)
    const rows: Array<{ readonly rps: readonly [number, number]; readonly cpu: readonly [number, number]; readonly pg: readonly [number, number] }> = []
    for (let pair = 1; pair <= pairs; pair++) {
      const order = pair % 2 === 1 ? [base, head] : [head, base]
      const results = new Map<Side, { readonly rps: number; readonly cpu: number; readonly pg: number }>()
      for (const side of order) {
        await measure(side, 1)
        const measurement = await measure(side, duration)
        results.set(side, { rps: measurement.requestsPerSecond, cpu: measurement.cpuMicros, pg: measurement.postgresCpuMicros })
      }
      const [b, h] = [results.get(base)!, results.get(head)!]
      rows.push({ rps: [b.rps, h.rps], cpu: [b.cpu, h.cpu], pg: [b.pg, h.pg] })
      console.log(
        `pair ${String(pair).padStart(2)}  base ${thousands(b.rps).padStart(6)} req/s ${fixed(b.cpu, 0).padStart(4)} us CPU/req ${
          fixed(b.pg, 0).padStart(3)
        } us PG/req  ` +
          `this tree ${thousands(h.rps).padStart(6)} req/s ${fixed(h.cpu, 0).padStart(4)} us CPU/req ${fixed(h.pg, 0).padStart(3)} us PG/req  ratio ${
            fixed(h.rps / b.rps, 3)
          }`
      )
    }
    console.log(`\nmedian req/s: base ${thousands(median(rows.map((row) => row.rps[0])))}, this tree ${thousands(median(rows.map((row) => row.rps[1])))}`)
    console.log(
      `median of the pairs' ratios (this tree / base): req/s ${fixed(median(rows.map((row) => row.rps[1] / row.rps[0])), 3)}, ` +
        `CPU per request ${fixed(median(rows.map((row) => row.cpu[1] / row.cpu[0])), 3)}, ` +
        `PostgreSQL CPU per request ${fixed(median(rows.map((row) => row.pg[1] / row.pg[0])), 3)}`
    )
  } finally {
    await ThereServers.stopAll()
    await stopAll()
    Here.removeDataDirs()
    for (const database of databases) await database.drop()
  }
}

main().then(() => process.exit(0), (error: unknown) => {
  console.error(error)
  process.exit(1)
})
