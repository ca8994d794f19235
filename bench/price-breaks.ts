/**
 * Benchmark: `POST /ticket-model/{id}/price-breaks` for 4 quantities
 * (1, 10, 100, 1000) on a part already analysed. Target: p50 under 50 ms.
 *
 * Per storage (PostgreSQL, embedded PGlite):
 *
 * 1. The whole service (`node src/main.ts` as a child process, fresh
 *    storage); through its API, as an integrator would: an app with 6 FDM
 *    machines in 2 groups (one on a working calendar), `--jobs` open service
 *    jobs of `--parts-per-job` parts each (the queue the lead times are
 *    computed behind), and the measured part, all analysed from a 20 mm cube
 *    served by this process.
 * 2. `--calls` calls over HTTP, one at a time (authenticated and metered),
 *    after a few unmeasured ones.
 * 3. The service stopped, the engine operation in this process on the same
 *    storage (`Engine.run`): the engine's share of the call.
 *
 * Every answer is checked (4 breaks in order, prices, lead times, expedite);
 * a wrong answer or an HTTP p50 at or above the target exits non-zero.
 *
 *   node bench/price-breaks.ts [--storage postgres|pglite|both] [--calls 300] [--jobs 20] [--parts-per-job 5]
 */
import { Effect, Layer, ManagedRuntime, Option, Redacted } from "effect"
import { randomBytes, randomUUID } from "node:crypto"
import * as Fs from "node:fs"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { parseArgs } from "node:util"
import pg from "pg"
import { StorageLive } from "../src/adapters/storage/Storage.ts"
import { EngineOutboundLive } from "../src/app/AppLayers.ts"
import { PublicContract } from "../src/contract/PublicApi.ts"
import { Engine } from "../src/engine/Engine.ts"
import { binaryStl, box } from "../src/engine/geometry/writers.ts"
import { InstrumentsNoOp } from "../src/platform/telemetry/Instruments.ts"
import { AppConfig } from "../src/services/AppConfig.ts"
import { freePort, startServer, stopAll } from "./servers.ts"
import { percentile, renderTable } from "./stats.ts"

const { values: flags } = parseArgs({
  options: {
    storage: { type: "string", default: "both" },
    calls: { type: "string", default: "300" },
    jobs: { type: "string", default: "20" },
    "parts-per-job": { type: "string", default: "5" }
  }
})
type Storage = "postgres" | "pglite"
const STORAGE_CHOICES: Readonly<Record<string, ReadonlyArray<Storage>>> = { postgres: ["postgres"], pglite: ["pglite"], both: ["postgres", "pglite"] }
const STORAGES = STORAGE_CHOICES[flags.storage] ?? []
if (STORAGES.length === 0) {
  console.error("usage: node bench/price-breaks.ts [--storage postgres|pglite|both] [--calls N] [--jobs N] [--parts-per-job N]")
  process.exit(2)
}
const CALLS = Number(flags.calls)
const JOBS = Number(flags.jobs)
const PARTS_PER_JOB = Number(flags["parts-per-job"])
const QUANTITIES = [1, 10, 100, 1000]
const WARM_UP = 10
const TARGET_MS = 50
const APP = "bench-price-breaks"
const POSTGRES = process.env["BENCH_POSTGRES_URL"] ?? "postgres://postgres@127.0.0.1:5432"
const ADMIN_TOKEN = randomBytes(24).toString("hex")

// ---------------------------------------------------------------- the model file

/** Serves the 20 mm cube the parts are made of, on 127.0.0.1 (the service may fetch from there: MODEL_FETCH_ALLOW_PRIVATE). */
const serveModel = async () => {
  const model = Buffer.from(binaryStl(box(20, 20, 20)))
  const server = createServer((_request, response) => {
    response.writeHead(200, { "content-type": "application/octet-stream", "content-length": model.length })
    response.end(model)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/cube.stl`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

// ---------------------------------------------------------------- checking

interface Answer {
  readonly breaks: ReadonlyArray<{ quantity: number; unitPrice: number; leadTimeDays: number | null; expedite?: { leadTimeDays: number } }>
  readonly leadTimeBasis: { machineCount: number; backlogHours: number } | null
}

const check = (answer: unknown, what: string): void => {
  const { breaks, leadTimeBasis } = answer as Answer
  const ordered = breaks?.length === QUANTITIES.length && breaks.every((b, i) => b.quantity === QUANTITIES[i])
  const priced = ordered && breaks.every((b, i) => b.unitPrice > 0 && (i === 0 || b.unitPrice <= breaks[i - 1]!.unitPrice))
  const scheduled = leadTimeBasis?.machineCount === 6 && leadTimeBasis.backlogHours > 0 &&
    breaks.every((b) => b.leadTimeDays !== null && b.expedite !== undefined && b.expedite.leadTimeDays < b.leadTimeDays)
  if (!priced || !scheduled) throw new Error(`${what}: unexpected answer ${JSON.stringify(answer).slice(0, 800)}`)
}

const timed = async <A>(run: () => Promise<A>): Promise<[number, A]> => {
  const start = performance.now()
  const result = await run()
  return [performance.now() - start, result]
}

/** The call `--calls` times after a warm-up, one at a time, each answer checked: its durations, sorted. */
const measureCalls = async (call: () => Promise<unknown>, what: string) => {
  for (let i = 0; i < WARM_UP; i++) check(await call(), `${what}, warm-up`)
  const times = new Float64Array(CALLS)
  for (let i = 0; i < CALLS; i++) {
    const [ms, answer] = await timed(call)
    check(answer, what)
    times[i] = ms
  }
  return times.sort()
}

// ---------------------------------------------------------------- storage

const adminQuery = async (text: string) => {
  const client = new pg.Client({ connectionString: `${POSTGRES}/test` })
  await client.connect()
  try {
    await client.query(text)
  } finally {
    await client.end()
  }
}

const prepareStorage = async (storage: Storage) => {
  if (storage === "postgres") {
    const name = "mfg_bench_price_breaks"
    await adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    await adminQuery(`CREATE DATABASE ${name}`)
    return {
      env: { DATABASE_URL: `${POSTGRES}/${name}` } as Record<string, string>,
      config: { databaseUrl: Option.some(Redacted.make(`${POSTGRES}/${name}`)) },
      cleanup: () => adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    }
  }
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "mfg-bench-price-breaks-"))
  return {
    env: { DATA_DIR: dir } as Record<string, string>,
    config: { databaseUrl: Option.none(), dataDir: dir },
    cleanup: async () => Fs.rmSync(dir, { recursive: true, force: true })
  }
}

// ---------------------------------------------------------------- the app's records

type Api = (method: string, path: string, body?: unknown) => Promise<any>

const apiOf = (baseUrl: string, secret: string): Api => async (method, path, body) => {
  const response = await fetch(`${baseUrl}/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${secret}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  const text = await response.text()
  if (response.status !== 200) throw new Error(`${method} ${path}: HTTP ${response.status} ${text.slice(0, 500)}`)
  return JSON.parse(text)
}

/** The app: machines, a queue of open service jobs, and the measured part (its id). */
const populate = async (api: Api, modelUrl: string): Promise<string> => {
  const customer = await api("POST", "/customer", { name: "Bench", email: "bench@example.com" })
  const project = await api("POST", "/project", { customerId: customer.id, name: "Bench" })
  const ticket = await api("POST", "/ticket", { projectId: project.id, name: "Bench" })
  const material = await api("POST", "/material", { name: "PLA", technologyId: "fdm" })
  const location = { latitude: 48.14, longitude: 11.58 }
  const dayShift = await api("POST", "/machine-group", {
    name: "Day shift",
    technologyId: "fdm",
    workingHours: { days: [1, 2, 3, 4, 5], from: "06:00", to: "22:00" }
  })
  const allHours = await api("POST", "/machine-group", { name: "Around the clock", technologyId: "fdm" })
  for (let i = 0; i < 6; i++) {
    await api("POST", "/machine", { name: `Printer ${i}`, technologyId: "fdm", machineGroupId: i < 4 ? dayShift.id : allHours.id, location })
  }
  const part = async (quantity: number) =>
    (await api("POST", "/ticket-model", {
      ticketId: ticket.id,
      name: `Cube × ${quantity}`,
      modelEndpoint: { url: modelUrl },
      technologyId: "fdm",
      materialId: material.id,
      quantity
    })).id as string
  for (let job = 0; job < JOBS; job++) {
    const parts: Array<string> = []
    for (let i = 0; i < PARTS_PER_JOB; i++) parts.push(await part(10 + ((job * PARTS_PER_JOB + i) * 37) % 490))
    await api("POST", "/service-job", { name: `Job ${job}`, technologyId: "fdm", ticketModelIds: parts })
  }
  const measured = await part(1)
  const analysed = await api("GET", `/ticket-model/${measured}`)
  if (analysed.geometry === null || analysed.unitPrice === null) throw new Error(`the part is not analysed: ${JSON.stringify(analysed)}`)
  return measured
}

// ---------------------------------------------------------------- measuring

interface Row {
  readonly storage: Storage
  readonly path: string
  readonly times: Float64Array
}

const measure = async (storage: Storage, modelUrl: string): Promise<ReadonlyArray<Row>> => {
  const prepared = await prepareStorage(storage)
  const rows: Array<Row> = []
  try {
    const port = await freePort()
    const server = await startServer({
      name: `service (${storage})`,
      args: ["src/main.ts"],
      port,
      env: { ...prepared.env, PORT: String(port), HOST: "127.0.0.1", ADMIN_TOKEN, MODEL_FETCH_ALLOW_PRIVATE: "true" },
      unset: storage === "pglite" ? ["DATABASE_URL", "DOWNSTREAM_URL"] : ["DOWNSTREAM_URL"],
      readyPath: "/ready"
    })
    let partId: string
    try {
      const secret = await fetch(`${server.baseUrl}/api/v1/secret`, {
        method: "POST",
        headers: { "x-admin-token": ADMIN_TOKEN, "content-type": "application/json" },
        body: JSON.stringify({ appId: APP, ipAddresses: ["127.0.0.1/32"] })
      }).then((response) => response.json() as Promise<{ value: string }>)
      const api = apiOf(server.baseUrl, secret.value)
      const [setupMs, id] = await timed(() => populate(api, modelUrl))
      partId = id
      console.log(`${storage}: ${JOBS} open jobs of ${PARTS_PER_JOB} parts, 6 machines, the measured part: set up in ${(setupMs / 1000).toFixed(1)} s`)
      const call = () => api("POST", `/ticket-model/${partId}/price-breaks`, { quantities: QUANTITIES })
      console.log(`${storage}: ${JSON.stringify((await call()).breaks.map((b: any) => [b.quantity, b.unitPrice, b.leadTimeDays, b.expedite?.leadTimeDays]))}`)
      rows.push({ storage, path: `HTTP (RSS ${server.rssMiB()?.toFixed(0) ?? "?"} MiB)`, times: await measureCalls(call, `${storage} HTTP`) })
    } finally {
      await server.stop()
    }

    // The engine operation alone, in this process, on the same storage.
    const runtime = ManagedRuntime.make(
      Engine.layer.pipe(
        Layer.provide(EngineOutboundLive),
        Layer.provideMerge(StorageLive("tool")),
        Layer.provide(InstrumentsNoOp),
        Layer.provide(AppConfig.layerWith(prepared.config))
      )
    )
    try {
      const invoke = () =>
        runtime.runPromise(Effect.gen(function*() {
          const engine = yield* Engine
          return yield* engine.run(PublicContract.groups.ticketModel.endpoints.priceBreaks, { appId: APP, requestId: randomUUID() }, {
            params: { id: partId },
            payload: { quantities: QUANTITIES }
          })
        }))
      rows.push({ storage, path: "engine operation", times: await measureCalls(invoke, `${storage} engine`) })
    } finally {
      await runtime.dispose()
    }
  } finally {
    await prepared.cleanup()
  }
  return rows
}

// ---------------------------------------------------------------- run

const model = await serveModel()
const rows: Array<Row> = []
try {
  for (const storage of STORAGES) rows.push(...(await measure(storage, model.url)))
} catch (error) {
  await stopAll()
  await model.close()
  console.error(error)
  process.exit(1)
}
await model.close()

const ms = (value: number) => value.toFixed(1)
console.log()
console.log(renderTable(
  ["storage", "path", "p50 ms", "p99 ms", "max ms"],
  rows.map((row) => [row.storage, row.path, ms(percentile(row.times, 50)), ms(percentile(row.times, 99)), ms(row.times[row.times.length - 1]!)]),
  2
))
console.log(
  `\n${CALLS} calls per row, one at a time, ${QUANTITIES.length} quantities each (${QUANTITIES.join(", ")}); ` +
    `load average ${Os.loadavg().map((load) => load.toFixed(1)).join(" ")}; target: HTTP p50 < ${TARGET_MS} ms`
)
const missed = rows.filter((row) => row.path.startsWith("HTTP") && percentile(row.times, 50) >= TARGET_MS)
if (missed.length > 0) {
  console.error(`missed the target: ${missed.map((row) => `${row.storage} ${row.path}`).join(", ")}`)
  process.exit(1)
}
