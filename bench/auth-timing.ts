/**
 * Timing of the 401: does a failing call reveal why it failed? Compares the
 * latency of four refusals of the service (an unknown secret id, a wrong
 * random part for a known id, a correct secret issued before RELEASED_AT, a
 * correct secret from a blocked address) and reports each median with its
 * spread (interquartile range), the median differences, and whether the
 * largest is within the target: under 10 µs or under 2 %, whichever is
 * larger. A benchmark, not a test: the figures go in the issue note, not in
 * an assertion.
 *
 *   node bench/auth-timing.ts [--storage pglite|postgres] [--samples 3000]
 *
 * Calls are sequential on one keep-alive connection and interleaved
 * round-robin, so load and drift affect the three kinds alike.
 */
import * as Http from "node:http"
import { parseArgs } from "node:util"
import { type BenchDatabase, createBenchDatabase } from "./postgres.ts"
import { stopAll } from "./servers.ts"
import { median, percentile } from "./stats.ts"
import { createSecret, removeDataDirs, startService, wrongRandomPart } from "./targets.ts"

const { values: flags } = parseArgs({
  options: { storage: { type: "string", default: "pglite" }, samples: { type: "string", default: "3000" } },
  strict: true
})
const samples = Number(flags.samples)
if (!Number.isInteger(samples) || samples < 100) throw new Error("--samples must be an integer of at least 100")
if (flags.storage !== "pglite" && flags.storage !== "postgres") throw new Error("--storage is pglite or postgres")
const storage = flags.storage

const DATABASE = "mfg_bench_timing"
/** How far ahead RELEASED_AT is set: long enough for the service to start and issue one secret before it. */
const RELEASE_DELAY_MS = 20_000

const agent = new Http.Agent({ keepAlive: true, maxSockets: 1 })
const request = (port: number, path: string, headers: Record<string, string>) =>
  new Promise<{ status: number; body: string; nanos: bigint }>((resolve, reject) => {
    const started = process.hrtime.bigint()
    const req = Http.request({ host: "127.0.0.1", port, path, method: "GET", headers, agent }, (res) => {
      let text = ""
      res.on("data", (chunk) => (text += chunk))
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text, nanos: process.hrtime.bigint() - started }))
    })
    req.on("error", reject)
    req.end()
  })

const main = async () => {
  let database: BenchDatabase | undefined
  try {
    if (storage === "postgres") database = await createBenchDatabase(DATABASE)
    // A release a few seconds ahead: the first secret is issued before it, the others after.
    const releasedAt = Date.now() + RELEASE_DELAY_MS
    const server = await startService({
      name: "service",
      storage,
      ...(database === undefined ? {} : { databaseUrl: database.url }),
      env: { RELEASED_AT: new Date(releasedAt).toISOString() }
    })
    const port = Number(new URL(server.baseUrl).port)
    const early = await createSecret(server, ["0.0.0.0/0"])
    if (Date.now() >= releasedAt) throw new Error("the service took longer to start than the release delay")
    await new Promise((resolve) => setTimeout(resolve, releasedAt - Date.now() + 50))
    const known = await createSecret(server, ["0.0.0.0/0"])
    const blocked = await createSecret(server, ["203.0.113.0/24"])
    const random = known.value.split(".")[1]!
    const kinds = {
      "unknown id": `${"0".repeat(24)}.${random}`,
      "wrong random part": wrongRandomPart(known.value),
      "before release": early.value,
      "blocked address": blocked.value
    } as const
    const timings: Record<string, Array<number>> = Object.fromEntries(Object.keys(kinds).map((kind) => [kind, []]))
    // Warm-up, then the measured rounds, interleaved.
    for (let round = 0; round < samples + 200; round++) {
      for (const [kind, value] of Object.entries(kinds)) {
        const reply = await request(port, "/v1/customer", { authorization: value })
        if (reply.status !== 401) throw new Error(`${kind}: expected 401, got ${reply.status}`)
        if (round >= 200) timings[kind]!.push(Number(reply.nanos) / 1e3)
      }
    }
    const medians = Object.fromEntries(Object.entries(timings).map(([kind, values]) => [kind, median(values)]))
    console.log(`401 timing on ${flags.storage}, ${samples} samples each (µs: median, interquartile range)`)
    for (const [kind, values] of Object.entries(timings)) {
      const sorted = Float64Array.from(values).sort()
      console.log(
        `  ${kind.padEnd(18)} ${medians[kind]!.toFixed(1).padStart(7)}   p25–p75 ${percentile(sorted, 25).toFixed(1)}–${percentile(sorted, 75).toFixed(1)}`
      )
    }
    const base = medians["unknown id"]!
    for (const [kind, value] of Object.entries(medians)) {
      if (kind !== "unknown id") console.log(`  ${kind} − unknown id: ${(value - base).toFixed(1)} µs (${(((value - base) / base) * 100).toFixed(1)} %)`)
    }
    const values = Object.values(medians)
    const spread = Math.max(...values) - Math.min(...values)
    const allowed = Math.max(10, 0.02 * Math.min(...values))
    console.log(`  largest difference of medians: ${spread.toFixed(1)} µs; target under ${allowed.toFixed(1)} µs: ${spread < allowed ? "met" : "NOT met"}`)
  } finally {
    await stopAll()
    agent.destroy()
    removeDataDirs()
    await database?.drop()
  }
}

await main()
