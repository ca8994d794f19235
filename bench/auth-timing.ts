/**
 * Timing of the 401: does a failing call reveal why it failed? Compares the
 * latency of three refusals of the service (an unknown secret id, a wrong
 * random part for a known id, a correct secret from a blocked address) and
 * reports each median and the median differences. A benchmark, not a test:
 * the figures go in the issue note, not in an assertion.
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
import { median } from "./stats.ts"
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
    const server = await startService({
      name: "service",
      storage,
      ...(database === undefined ? {} : { databaseUrl: database.url })
    })
    const port = Number(new URL(server.baseUrl).port)
    const known = await createSecret(server, ["0.0.0.0/0"])
    const blocked = await createSecret(server, ["203.0.113.0/24"])
    const random = known.value.split(".")[1]!
    const kinds = {
      "unknown id": `${"0".repeat(24)}.${random}`,
      "wrong random part": wrongRandomPart(known.value),
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
    console.log(`401 timing on ${flags.storage}, ${samples} samples each (µs, median)`)
    for (const [kind, value] of Object.entries(medians)) console.log(`  ${kind.padEnd(18)} ${value.toFixed(1)}`)
    const base = medians["unknown id"]!
    for (const [kind, value] of Object.entries(medians)) {
      if (kind !== "unknown id") console.log(`  ${kind} − unknown id: ${(value - base).toFixed(1)} µs (${(((value - base) / base) * 100).toFixed(1)} %)`)
    }
  } finally {
    await stopAll()
    agent.destroy()
    removeDataDirs()
    await database?.drop()
  }
}

await main()
