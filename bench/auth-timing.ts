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
import { mkdtempSync, rmSync } from "node:fs"
import * as Http from "node:http"
import { tmpdir } from "node:os"
import * as Path from "node:path"
import { parseArgs } from "node:util"
import pg from "pg"
import { freePort, startServer, stopAll } from "./servers.ts"

const { values: flags } = parseArgs({
  options: { storage: { type: "string", default: "pglite" }, samples: { type: "string", default: "3000" } },
  strict: true
})
const samples = Number(flags.samples)
if (!Number.isInteger(samples) || samples < 100) throw new Error("--samples must be an integer of at least 100")
if (flags.storage !== "pglite" && flags.storage !== "postgres") throw new Error("--storage is pglite or postgres")

const ADMIN_TOKEN = "timing-admin-token-0123456789"
const DATABASE = "mfg_bench_timing"
const POSTGRES = process.env.BENCH_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test"

const agent = new Http.Agent({ keepAlive: true, maxSockets: 1 })
const request = (port: number, path: string, headers: Record<string, string>, body?: string) =>
  new Promise<{ status: number; body: string; nanos: bigint }>((resolve, reject) => {
    const started = process.hrtime.bigint()
    const req = Http.request({ host: "127.0.0.1", port, path, method: body === undefined ? "GET" : "POST", headers, agent }, (res) => {
      let text = ""
      res.on("data", (chunk) => (text += chunk))
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text, nanos: process.hrtime.bigint() - started }))
    })
    req.on("error", reject)
    req.end(body)
  })

const median = (values: Array<number>) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]!
}

const main = async () => {
  const port = await freePort()
  const dataDir = mkdtempSync(Path.join(tmpdir(), "mfg-timing-"))
  let env: Record<string, string> = { PORT: String(port), ADMIN_TOKEN, DATA_DIR: dataDir }
  if (flags.storage === "postgres") {
    const admin = new pg.Client({ connectionString: POSTGRES })
    await admin.connect()
    await admin.query(`DROP DATABASE IF EXISTS ${DATABASE} WITH (FORCE)`)
    await admin.query(`CREATE DATABASE ${DATABASE}`)
    await admin.end()
    const url = new URL(POSTGRES)
    url.pathname = `/${DATABASE}`
    env = { ...env, DATABASE_URL: url.toString() }
  }
  await startServer({ name: "service", args: ["src/main.ts"], port, env, readyPath: "/ready" })
  try {
    const create = async (ipAddresses: Array<string>) => {
      const reply = await request(port, "/api/v1/secret", { "x-admin-token": ADMIN_TOKEN, "content-type": "application/json" },
        JSON.stringify({ appId: "timing", ipAddresses }))
      return JSON.parse(reply.body) as { id: string; value: string }
    }
    const known = await create(["0.0.0.0/0"])
    const blocked = await create(["203.0.113.0/24"])
    const random = known.value.split(".")[1]!
    const kinds = {
      "unknown id": `${"0".repeat(24)}.${random}`,
      "wrong random part": `${known.id}.${random[0] === "A" ? "B" : "A"}${random.slice(1)}`,
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
    rmSync(dataDir, { recursive: true, force: true })
  }
}

await main()
