/**
 * The processes the benchmarks measure: the service (`node src/main.ts`, on
 * PostgreSQL or embedded PGlite) and the two node:http baselines of
 * bench/baselines.ts, plus the calls that set them up (a secret, records).
 */
import { randomBytes } from "node:crypto"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import * as Path from "node:path"
import { issueSecret } from "./auth.ts"
import { type BenchDatabase, withClient } from "./postgres.ts"
import { freePort, REPO_ROOT, type Server, startServer, stopAll } from "./servers.ts"

/** A benchmark whose setup or responses are wrong: it reports no number. */
export class BenchmarkInvalid extends Error {}

export type Storage = "postgres" | "pglite"

export const APP_ID = "bench"
export const IP_RANGES: ReadonlyArray<string> = ["0.0.0.0/0"]
/** The admin token of every service a benchmark starts (random per run). */
export const ADMIN_TOKEN = randomBytes(24).toString("hex")

export interface Reply {
  readonly status: number
  readonly headers: Headers
  readonly body: unknown
  readonly text: string
}

export const requestJson = async (url: string, init: RequestInit = {}): Promise<Reply> => {
  const response = await fetch(url, init)
  const text = await response.text()
  let body: unknown = undefined
  try {
    body = text.length > 0 ? JSON.parse(text) : undefined
  } catch {
    // Left undefined: the caller checks the shape.
  }
  return { status: response.status, headers: response.headers, body, text }
}

/** The `id` of a JSON object reply, if it has one. */
export const idOf = (reply: Reply): unknown => (reply.body as { readonly id?: unknown } | undefined)?.id

const dataDirs: Array<string> = []

/** Removes the PGlite directories of the services started so far (call after they stopped). */
export const removeDataDirs = () => {
  for (const dir of dataDirs.splice(0)) rmSync(dir, { recursive: true, force: true })
}

export interface ServiceOptions {
  readonly name: string
  readonly storage: Storage
  /** The PostgreSQL database (storage `postgres`). */
  readonly databaseUrl?: string
  /** More environment for this process only (e.g. MODEL_FETCH_ALLOW_PRIVATE, OTEL_EXPORTER_OTLP_ENDPOINT). */
  readonly env?: Readonly<Record<string, string>>
  /** Options to node before the script (e.g. `--cpu-prof`). */
  readonly nodeOptions?: ReadonlyArray<string>
}

/**
 * What `npm start` runs (package.json's start script, `[NAME=value ...] exec
 * node [options] src/main.ts`): the variables it sets and the options it
 * gives node (the memory settings of docs/operations.md), so that the
 * benchmarks measure the service as operators run it.
 */
const START_SCRIPT = (() => {
  const { scripts } = JSON.parse(readFileSync(Path.join(REPO_ROOT, "package.json"), "utf8")) as { readonly scripts: Record<string, string> }
  const [, assignments = "", options = ""] = /^\s*((?:\w+=\S*\s+)*)exec\s+node\s+(.*?)\s*src\/main\.ts/.exec(scripts["start"] ?? "") ?? []
  const words = (text: string) => text.split(/\s+/).filter((word) => word.length > 0)
  return {
    env: Object.fromEntries(words(assignments).map((assignment) => assignment.split("=", 2) as [string, string])),
    nodeOptions: words(options)
  }
})()
export const START_ENV: Readonly<Record<string, string>> = START_SCRIPT.env
export const START_NODE_OPTIONS: ReadonlyArray<string> = START_SCRIPT.nodeOptions

/**
 * `node src/main.ts` on its storage, as `npm start` runs it (START_ENV,
 * START_NODE_OPTIONS, then `nodeOptions`), ready once /ready answers 200. Tracing
 * and rate limits are off unless `env` sets an exporter or RATE_LIMIT (and
 * REDIS_URL), whatever this process's environment holds, and the engine is
 * the embedded one.
 */
export const startService = async (options: ServiceOptions): Promise<Server> => {
  const port = await freePort()
  let storageEnv: Record<string, string>
  if (options.storage === "postgres") {
    if (options.databaseUrl === undefined) throw new Error(`${options.name}: storage postgres needs a database URL`)
    storageEnv = { DATABASE_URL: options.databaseUrl }
  } else {
    const dir = mkdtempSync(Path.join(tmpdir(), "mfg-bench-pglite-"))
    dataDirs.push(dir)
    storageEnv = { DATA_DIR: dir }
  }
  return startServer({
    name: options.name,
    args: [...START_NODE_OPTIONS, ...(options.nodeOptions ?? []), "src/main.ts"],
    port,
    // No rate limit unless `env` sets one: the load would spend RATE_LIMIT's default budget in a fraction of a second.
    env: { ...START_ENV, PORT: String(port), HOST: "127.0.0.1", ADMIN_TOKEN, RATE_LIMIT: "off", ...storageEnv, ...options.env },
    unset: [
      options.storage === "postgres" ? "DATA_DIR" : "DATABASE_URL",
      "DOWNSTREAM_URL",
      "OTEL_EXPORTER_OTLP_ENDPOINT",
      "MODEL_FETCH_PLACEHOLDER_HOSTS",
      "REDIS_URL"
    ],
    readyPath: "/ready",
    startTimeoutMs: 90_000
  })
}

/** A new Incoming Secret of the service (admin API); its value. */
export const createSecret = async (
  server: Server,
  ipAddresses: ReadonlyArray<string> = IP_RANGES
): Promise<{ readonly id: string; readonly value: string }> => {
  const created = await requestJson(`${server.baseUrl}/api/v1/secret`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-admin-token": ADMIN_TOKEN },
    body: JSON.stringify({ appId: APP_ID, ipAddresses })
  })
  const { id, value } = (created.body ?? {}) as { readonly id?: unknown; readonly value?: unknown }
  if (created.status !== 201 || typeof id !== "string" || typeof value !== "string") {
    throw new BenchmarkInvalid(`${server.name}: creating a secret answered ${created.status} ${created.text.slice(0, 300)}`)
  }
  return { id, value }
}

/** `POST /v1/<resource>` with the secret; the created record (which has an id), or BenchmarkInvalid. */
export const createRecord = async (
  server: Server,
  secret: string,
  resource: string,
  body: unknown
): Promise<Readonly<Record<string, unknown>> & { readonly id: string }> => {
  const reply = await requestJson(`${server.baseUrl}/v1/${resource}`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: secret },
    body: JSON.stringify(body)
  })
  if (reply.status < 200 || reply.status > 299 || typeof idOf(reply) !== "string") {
    throw new BenchmarkInvalid(`${server.name}: POST /v1/${resource} answered ${reply.status} ${reply.text.slice(0, 300)}`)
  }
  return reply.body as Readonly<Record<string, unknown>> & { readonly id: string }
}

export interface Baselines {
  readonly ceiling: Server
  readonly peer: Server
  /** The one secret both accept. */
  readonly secret: string
}

/**
 * Both baselines on one fresh secret, serving a copy of `record` as
 * `GET /v1/customer/<record.id>`; the pg peer's rows go into `database`
 * (made by createBenchDatabase).
 */
export const startBaselines = async (
  database: { readonly name: string; readonly url: string },
  record: Readonly<Record<string, unknown>> & { readonly id: string }
): Promise<Baselines> => {
  const secret = issueSecret()
  await withClient(database.name, async (client) => {
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
      env: { PORT: String(peerPort), HOST: "127.0.0.1", DATABASE_URL: database.url }
    })
  ])
  return { ceiling, peer, secret: secret.value }
}

/** The secret with a wrong random part: the same id, refused with the one 401. */
export const wrongRandomPart = (secret: string) => {
  const [id = "", random = ""] = secret.split(".")
  return `${id}.${random.startsWith("A") ? "B" : "A"}${random.slice(1)}`
}

/**
 * Before any load: the record reads back with either Authorization form, and
 * a wrong secret is refused, so the target really authenticates.
 */
export const checkAuthenticatedRead = async (name: string, url: string, secret: string, recordId: string) => {
  for (const authorization of [secret, `Bearer ${secret}`]) {
    const read = await requestJson(url, { headers: { authorization } })
    if (read.status !== 200 || idOf(read) !== recordId) {
      throw new BenchmarkInvalid(`${name}: GET ${url} answered ${read.status} ${read.text.slice(0, 300)}`)
    }
  }
  const refused = await requestJson(url, { headers: { authorization: `Bearer ${wrongRandomPart(secret)}` } })
  if (refused.status !== 401) throw new BenchmarkInvalid(`${name}: a wrong secret answered ${refused.status}, not 401`)
}

/**
 * What a benchmark run leaves behind, removed at its end or on SIGINT and
 * SIGTERM: the servers it started, their data directories, its database.
 * `interrupted()` tells the run to stop measuring.
 */
export const cleanupOnExit = (name: string, database: () => BenchDatabase | undefined) => {
  let interrupted = false
  const cleanup = async () => {
    await stopAll()
    removeDataDirs()
    try {
      await database()?.drop()
    } catch (error) {
      console.error(`could not drop ${name}: ${error instanceof Error ? error.message : String(error)}`)
    }
  }
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.once(signal, () => {
      interrupted = true
      console.error(`\n${signal}: stopping the servers`)
      cleanup().finally(() => process.exit(130))
    })
  }
  return { cleanup, interrupted: () => interrupted }
}
