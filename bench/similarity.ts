/**
 * Benchmark: `POST /ticket-model/{id}/similarity` over 100,000 parts of one
 * app. Target: a warm call under 100 ms (p50).
 *
 * Per storage (PostgreSQL, embedded PGlite):
 *
 * 1. Fresh storage, migrated; 100,000 parts with geometry inserted by SQL
 *    straight into `engine_record` (the triggers fill `part_shape` as for any
 *    write). The shapes are 200 analysed meshes (boxes of every proportion,
 *    ellipsoids, cubes with holes of every size), each part one of them at a
 *    random size between 0.5× and 50×; 1,000 parts of another app besides.
 * 2. The engine operation in this process (`Engine.invoke`): the first call
 *    (cold: the index is built from the database), then `--calls` calls
 *    (warm), then `--writes` calls each after a new part was inserted (the
 *    incremental refresh reads one change).
 * 3. The same through the whole service over HTTP (`node src/main.ts` as a
 *    child process, authenticated and metered calls): cold, then warm.
 *
 * Every answer is checked (10 parts, scores descending, the best at least
 * 0.8: same base shape); a wrong answer or a warm p50 at or above the target
 * exits non-zero.
 *
 *   node bench/similarity.ts [--storage postgres|pglite|both] [--parts 100000] [--calls 200] [--writes 20]
 */
import { Effect, Layer, ManagedRuntime, Option, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { randomBytes, randomUUID } from "node:crypto"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { parseArgs } from "node:util"
import pg from "pg"
import { StorageLive } from "../src/adapters/storage/Storage.ts"
import { EngineOutboundLive } from "../src/app/AppLayers.ts"
import { PublicContract } from "../src/contract/PublicApi.ts"
import { Engine } from "../src/engine/Engine.ts"
import { analyse, type AnalysedGeometry, type Mesh } from "../src/engine/geometry/mesh.ts"
import { box, cubeWithHole, sphere } from "../src/engine/geometry/writers.ts"
import { InstrumentsNoOp } from "../src/platform/telemetry/Instruments.ts"
import { AppConfig } from "../src/services/AppConfig.ts"
import { freePort, startServer, stopAll } from "./servers.ts"
import { START_ENV, START_NODE_OPTIONS } from "./targets.ts"

const { values: flags } = parseArgs({
  options: {
    storage: { type: "string", default: "both" },
    parts: { type: "string", default: "100000" },
    calls: { type: "string", default: "200" },
    writes: { type: "string", default: "20" }
  }
})
type Storage = "postgres" | "pglite"
const STORAGE_CHOICES: Readonly<Record<string, ReadonlyArray<Storage>>> = { postgres: ["postgres"], pglite: ["pglite"], both: ["postgres", "pglite"] }
const STORAGES = STORAGE_CHOICES[flags.storage] ?? []
if (STORAGES.length === 0) {
  console.error("usage: node bench/similarity.ts [--storage postgres|pglite|both] [--parts N] [--calls N] [--writes N]")
  process.exit(2)
}
const PARTS = Number(flags.parts)
const CALLS = Number(flags.calls)
const WRITES = Number(flags.writes)
const TARGET_MS = 100
const APP = "bench-similarity"
const OTHER_APP = "bench-other"
const POSTGRES = process.env["BENCH_POSTGRES_URL"] ?? "postgres://postgres@127.0.0.1:5432"
const ADMIN_TOKEN = randomBytes(24).toString("hex")

// ---------------------------------------------------------------- parts

/** A reproducible generator for the data set. */
const random = (() => {
  let state = 12345
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = Math.imul(state ^ (state >>> 15), state | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
})()
const between = (low: number, high: number) => low + random() * (high - low)

const stretched = (mesh: Mesh, x: number, y: number, z: number): Mesh => {
  const positions = Float64Array.from(mesh.positions)
  for (let i = 0; i < positions.length; i += 3) {
    positions[i]! *= x
    positions[i + 1]! *= y
    positions[i + 2]! *= z
  }
  return { positions, triangles: mesh.triangles }
}

const BASE_SHAPES: ReadonlyArray<AnalysedGeometry> = [
  ...Array.from({ length: 120 }, () => analyse(box(between(1, 10), between(1, 10), between(1, 10)))),
  ...Array.from({ length: 40 }, () => analyse(stretched(sphere(1, 32, 16), between(1, 10), between(1, 10), between(1, 10)))),
  ...Array.from({ length: 40 }, () => analyse(cubeWithHole(10, between(1, 9))))
]

/** A base shape at a random size (log-uniform, 0.5× to 50×): the measures scale, the D2 distribution does not. */
const randomGeometry = (): AnalysedGeometry => {
  const base = BASE_SHAPES[Math.floor(random() * BASE_SHAPES.length)]!
  const s = Math.exp(between(Math.log(0.5), Math.log(50)))
  return {
    ...base,
    volume: base.volume * s ** 3,
    surfaceArea: base.surfaceArea * s ** 2,
    boundingBox: { x: base.boundingBox.x * s, y: base.boundingBox.y * s, z: base.boundingBox.z * s }
  }
}

const partRecord = (index: number) => {
  const now = new Date().toISOString()
  return {
    id: randomUUID(),
    ticketId: "bench-ticket",
    name: `part ${index}`,
    modelEndpoint: { url: `https://files.example/part-${index}.stl` },
    fileName: `part-${index}.stl`,
    technologyId: "fdm",
    materialId: "bench-material",
    quantity: 1,
    geometry: randomGeometry(),
    productionTimes: null,
    unitPrice: null,
    totalPrice: null,
    createdAt: now,
    updatedAt: now
  }
}

const insertParts = (appId: string, count: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const ids: Array<string> = []
    for (let done = 0; done < count; done += 5000) {
      const batch = Array.from({ length: Math.min(5000, count - done) }, (_, i) => partRecord(done + i))
      ids.push(...batch.map((part) => part.id))
      yield* sql`
        INSERT INTO engine_record (resource, id, app_id, data, created_at, updated_at)
        SELECT 'ticketModel', part->>'id', ${appId}, part, now(), now()
        FROM jsonb_array_elements(${JSON.stringify(batch)}::jsonb) AS part`
    }
    return ids
  })

// ---------------------------------------------------------------- measuring

interface Ranked {
  readonly ticketModelId: string
  readonly score: number
}

const check = (answer: unknown, what: string): void => {
  const ranked = answer as ReadonlyArray<Ranked>
  const descending = ranked.every((entry, i) => i === 0 || entry.score <= ranked[i - 1]!.score)
  if (!Array.isArray(answer) || ranked.length !== 10 || !descending || ranked[0]!.score < 0.8) {
    throw new Error(`${what}: unexpected answer ${JSON.stringify(answer).slice(0, 500)}`)
  }
}

const percentile = (times: ReadonlyArray<number>, p: number) => {
  const sorted = [...times].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]!
}

interface Row {
  readonly storage: string
  readonly path: string
  readonly cold: number
  readonly p50: number
  readonly p99: number
  readonly max: number
  readonly afterWrite?: number
}

const timed = async <A>(run: () => Promise<A>): Promise<[number, A]> => {
  const start = performance.now()
  const result = await run()
  return [performance.now() - start, result]
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
    const name = "mfg_bench_similarity"
    await adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    await adminQuery(`CREATE DATABASE ${name}`)
    return {
      env: { DATABASE_URL: `${POSTGRES}/${name}` } as Record<string, string>,
      config: { databaseUrl: Option.some(Redacted.make(`${POSTGRES}/${name}`)) },
      cleanup: () => adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    }
  }
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "mfg-bench-similarity-"))
  return {
    env: { DATA_DIR: dir } as Record<string, string>,
    config: { databaseUrl: Option.none(), dataDir: dir },
    cleanup: async () => Fs.rmSync(dir, { recursive: true, force: true })
  }
}

const measure = async (storage: Storage): Promise<ReadonlyArray<Row>> => {
  const prepared = await prepareStorage(storage)
  const rows: Array<Row> = []
  try {
    // The engine in this process.
    const runtime = ManagedRuntime.make(
      Engine.layer.pipe(
        Layer.provide(EngineOutboundLive),
        Layer.provideMerge(StorageLive("tool")),
        Layer.provide(InstrumentsNoOp),
        Layer.provide(AppConfig.layerWith(prepared.config))
      )
    )
    const [insertMs, ids] = await timed(() => runtime.runPromise(insertParts(APP, PARTS)))
    await runtime.runPromise(insertParts(OTHER_APP, 1000))
    console.log(`${storage}: ${PARTS.toLocaleString("en")} parts inserted in ${(insertMs / 1000).toFixed(1)} s`)
    const query = ids[0]!
    const invoke = () =>
      runtime.runPromise(Effect.gen(function*() {
        const engine = yield* Engine
        return yield* engine.run(PublicContract.groups.ticketModel.endpoints.similarity, { appId: APP, requestId: randomUUID() }, {
          params: { id: query },
          payload: {}
        })
      }))
    const [cold, first] = await timed(invoke)
    check(first, `${storage} engine, cold`)
    const warm: Array<number> = []
    for (let call = 0; call < CALLS; call++) {
      const [ms, answer] = await timed(invoke)
      check(answer, `${storage} engine, warm`)
      warm.push(ms)
    }
    const afterWrite: Array<number> = []
    for (let write = 0; write < WRITES; write++) {
      await runtime.runPromise(insertParts(APP, 1))
      const [ms, answer] = await timed(invoke)
      check(answer, `${storage} engine, after a write`)
      afterWrite.push(ms)
    }
    rows.push({
      storage,
      path: "engine operation",
      cold,
      p50: percentile(warm, 0.5),
      p99: percentile(warm, 0.99),
      max: Math.max(...warm),
      afterWrite: percentile(afterWrite, 0.5)
    })
    await runtime.dispose()

    // The whole service over HTTP, a fresh process (its index is built by its first call).
    const port = await freePort()
    const server = await startServer({
      name: `service (${storage})`,
      args: [...START_NODE_OPTIONS, "src/main.ts"],
      port,
      env: { ...START_ENV, ...prepared.env, PORT: String(port), HOST: "127.0.0.1", ADMIN_TOKEN },
      unset: storage === "pglite" ? ["DATABASE_URL", "DOWNSTREAM_URL"] : ["DOWNSTREAM_URL"],
      readyPath: "/ready"
    })
    try {
      const secret = await fetch(`${server.baseUrl}/api/v1/secret`, {
        method: "POST",
        headers: { "x-admin-token": ADMIN_TOKEN, "content-type": "application/json" },
        body: JSON.stringify({ appId: APP, ipAddresses: ["127.0.0.1/32"] })
      }).then((response) => response.json() as Promise<{ value: string }>)
      const call = async () => {
        const response = await fetch(`${server.baseUrl}/v1/ticket-model/${query}/similarity`, {
          method: "POST",
          headers: { authorization: `Bearer ${secret.value}`, "content-type": "application/json" },
          body: "{}"
        })
        const body = await response.json()
        if (response.status !== 200) throw new Error(`HTTP ${response.status}: ${JSON.stringify(body)}`)
        return body
      }
      const [httpCold, httpFirst] = await timed(call)
      check(httpFirst, `${storage} HTTP, cold`)
      const httpWarm: Array<number> = []
      for (let i = 0; i < CALLS; i++) {
        const [ms, answer] = await timed(call)
        check(answer, `${storage} HTTP, warm`)
        httpWarm.push(ms)
      }
      rows.push({
        storage,
        path: `HTTP (RSS ${server.rssMiB()?.toFixed(0) ?? "?"} MiB)`,
        cold: httpCold,
        p50: percentile(httpWarm, 0.5),
        p99: percentile(httpWarm, 0.99),
        max: Math.max(...httpWarm)
      })
    } finally {
      await server.stop()
    }
  } finally {
    await prepared.cleanup()
  }
  return rows
}

// ---------------------------------------------------------------- run

const rows: Array<Row> = []
try {
  for (const storage of STORAGES) rows.push(...(await measure(storage)))
} catch (error) {
  await stopAll()
  console.error(error)
  process.exit(1)
}

const ms = (value: number | undefined) => (value === undefined ? "" : value.toFixed(1))
const table = [
  ["storage", "path", "parts", "cold ms", "warm p50 ms", "warm p99 ms", "warm max ms", "after a write p50 ms"],
  ...rows.map((row) => [row.storage, row.path, PARTS.toLocaleString("en"), ms(row.cold), ms(row.p50), ms(row.p99), ms(row.max), ms(row.afterWrite)])
]
const widths = table[0]!.map((_, column) => Math.max(...table.map((line) => line[column]!.length)))
console.log()
for (const [index, line] of table.entries()) {
  console.log(line.map((cell, column) => (column < 2 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!))).join("  "))
  if (index === 0) console.log(widths.map((width) => "-".repeat(width)).join("  "))
}
console.log(`\n${CALLS} warm calls per row, one at a time; target: warm p50 < ${TARGET_MS} ms`)
const missed = rows.filter((row) => row.p50 >= TARGET_MS)
if (missed.length > 0) console.error(`missed the target: ${missed.map((row) => `${row.storage} ${row.path}`).join(", ")}`)
process.exit(missed.length > 0 ? 1 : 0)
