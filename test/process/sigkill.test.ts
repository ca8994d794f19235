/**
 * A response that a client received is always in the meter table, even if the
 * process is then killed with SIGKILL.
 *
 * For each storage (PostgreSQL when TEST_DATABASE_URL is set, embedded PGlite
 * always) the service runs as a child process under concurrent load and is
 * killed with SIGKILL mid-load; every 2xx response's `x-request-id` must then
 * be a row of `meter_event`.
 */
import { PGlite } from "@electric-sql/pglite"
import { type ChildProcess, execFile, spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import * as Fs from "node:fs"
import * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const ROOT = fileURLToPath(new URL("../../", import.meta.url))
const NODE = Path.join(ROOT, "node_modules", ".bin", "node")
const ADMIN_TOKEN = "sigkill-test-admin-token"
const APP_ID = "kill"
const TEST_DATABASE_URL = process.env["TEST_DATABASE_URL"]

/** How long the service may take to say "Listening on" (about 3 s on an idle 2-core machine, 15 s when it is heavily oversubscribed). */
const STARTUP_TIMEOUT_MS = 25_000
const REQUEST_TIMEOUT_MS = 3_000
const LOOPS = 16
/** The kill comes at the first of these, while the loops are running. */
const KILL_AFTER_MS = 1_500
const KILL_AFTER_OK_RESPONSES = 500
/** The load stops at the first of these (or at the kill). */
const LOAD_MAX_MS = 2_000
const LOAD_MAX_REQUESTS = 4_000
/** 2xx responses needed before the kill, so the test cannot pass vacuously. */
const MIN_OK_RESPONSES = 50

// ---------------------------------------------------------------------------
// The child process

interface Server {
  readonly child: ChildProcess
  readonly baseUrl: string
  readonly output: () => string
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
}

const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = Net.createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      server.close(() => (port > 0 ? resolve(port) : reject(new Error("no port"))))
    })
  })

/** The environment of the service and the CLI: only what this test decides about storage and config. */
const childEnv = (storage: Readonly<Record<string, string>>): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = { ...process.env }
  for (
    const key of [
      "DATABASE_URL",
      "DATA_DIR",
      "DOWNSTREAM_URL",
      "RELEASED_AT",
      "TRUSTED_PROXIES",
      "METER_FLUSH_WINDOW_MS",
      "PORT",
      "HOST",
      "ADMIN_TOKEN"
    ]
  ) delete env[key]
  return { ...env, ...storage }
}

const startServer = async (storage: Readonly<Record<string, string>>): Promise<Server> => {
  const port = await freePort()
  const child = spawn(NODE, ["src/main.ts"], {
    cwd: ROOT,
    env: childEnv({ ...storage, PORT: String(port), HOST: "127.0.0.1", ADMIN_TOKEN }),
    stdio: ["ignore", "pipe", "pipe"]
  })
  let output = ""
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once("exit", (code, signal) => resolve({ code, signal }))
  })
  const server: Server = { child, baseUrl: `http://127.0.0.1:${port}`, output: () => output, exited }
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      reject(new Error(`the service did not log "Listening on" within ${STARTUP_TIMEOUT_MS} ms; its output:\n${output}`))
    }, STARTUP_TIMEOUT_MS)
    const onData = (chunk: Buffer) => {
      output += chunk.toString("utf8")
      if (output.includes("Listening on")) {
        clearTimeout(timer)
        resolve()
      }
    }
    child.stdout?.on("data", onData)
    child.stderr?.on("data", onData)
    child.once("error", (error) => {
      clearTimeout(timer)
      reject(new Error(`cannot start the service: ${error.message}`))
    })
    void exited.then(({ code, signal }) => {
      clearTimeout(timer)
      reject(new Error(`the service exited before listening (code ${code}, signal ${signal}); its output:\n${output}`))
    })
  }).catch(async (error: unknown) => {
    await stopServer(server)
    throw error
  })
  return server
}

const isRunning = (child: ChildProcess) => child.exitCode === null && child.signalCode === null

/** Kills the child (if it still runs) and waits, boundedly, for it to be gone. */
const stopServer = async (server: Server | undefined) => {
  if (server === undefined) return
  if (isRunning(server.child)) server.child.kill("SIGKILL")
  await Promise.race([server.exited, sleep(5_000)])
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

const postJson = async (url: string, headers: Readonly<Record<string, string>>, body: unknown) => {
  const response = await fetch(url, {
    method: "POST",
    headers: { ...headers, "content-type": "application/json" },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(10_000)
  })
  const text = await response.text()
  return { response, text }
}

interface Fixture {
  readonly secret: string
  readonly customerId: string
  /** The `x-request-id` of the customer creation (a 2xx the client received). */
  readonly createRequestId: string
}

const createFixture = async (server: Server): Promise<Fixture> => {
  const issued = await postJson(`${server.baseUrl}/api/v1/secret`, { "x-admin-token": ADMIN_TOKEN }, {
    appId: APP_ID,
    ipAddresses: ["0.0.0.0/0"]
  })
  expect(issued.response.status, issued.text).toBe(201)
  const secret = (JSON.parse(issued.text) as { value: string }).value
  const created = await postJson(`${server.baseUrl}/v1/customer`, { authorization: secret }, {
    name: "K",
    email: "k@example.com"
  })
  expect(created.response.status, created.text).toBe(200)
  const createRequestId = created.response.headers.get("x-request-id")
  expect(createRequestId).toBeTruthy()
  return { secret, customerId: (JSON.parse(created.text) as { id: string }).id, createRequestId: createRequestId! }
}

// ---------------------------------------------------------------------------
// The load and the kill

interface LoadResult {
  /** The `x-request-id` of every 2xx response received, before or after the kill. */
  readonly okIds: ReadonlyArray<string>
  readonly okBeforeKill: number
  readonly okWithoutRequestId: number
  /** Responses other than 2xx, by status. */
  readonly otherStatuses: Readonly<Record<string, number>>
  readonly failures: number
  readonly started: number
  readonly killedAtMs: number | undefined
  readonly elapsedMs: number
}

const loadThenKill = async (server: Server, fixture: Fixture): Promise<LoadResult> => {
  const url = `${server.baseUrl}/v1/customer/${fixture.customerId}`
  const headers = { authorization: fixture.secret }
  const okIds: Array<string> = []
  const otherStatuses: Record<string, number> = {}
  let okBeforeKill = 0
  let okWithoutRequestId = 0
  let failures = 0
  let started = 0
  let killedAtMs: number | undefined
  const startedAt = Date.now()

  const kill = () => {
    if (killedAtMs !== undefined) return
    killedAtMs = Date.now() - startedAt
    okBeforeKill = okIds.length
    server.child.kill("SIGKILL")
  }
  const killTimer = setTimeout(kill, KILL_AFTER_MS)

  const loop = async () => {
    while (killedAtMs === undefined && Date.now() - startedAt < LOAD_MAX_MS && started < LOAD_MAX_REQUESTS) {
      started++
      try {
        const response = await fetch(url, { headers, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) })
        // The status line and headers are what the client received: record them before the body.
        if (response.status >= 200 && response.status < 300) {
          const requestId = response.headers.get("x-request-id")
          if (requestId === null) okWithoutRequestId++
          else okIds.push(requestId)
          if (okIds.length >= KILL_AFTER_OK_RESPONSES) kill()
        } else {
          otherStatuses[response.status] = (otherStatuses[response.status] ?? 0) + 1
        }
        await response.arrayBuffer().catch(() => undefined)
      } catch {
        // In flight at the kill: expected.
        failures++
      }
    }
  }

  try {
    await Promise.all(Array.from({ length: LOOPS }, loop))
  } finally {
    clearTimeout(killTimer)
    // Should the load have ended before the kill (it cannot, short of every loop failing), kill now.
    kill()
  }
  return {
    okIds,
    okBeforeKill,
    okWithoutRequestId,
    otherStatuses,
    failures,
    started,
    killedAtMs,
    elapsedMs: Date.now() - startedAt
  }
}

// ---------------------------------------------------------------------------
// The storages

interface MeterRows {
  readonly requestIds: ReadonlySet<string>
}

interface Storage {
  readonly env: Readonly<Record<string, string>>
  /** The app's rows of `meter_event`; called once the child is dead. */
  readonly meterRows: () => Promise<MeterRows>
  readonly cleanup: () => Promise<void>
}

const withPgClient = async <A>(url: string, f: (client: pg.Client) => Promise<A>): Promise<A> => {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000, statement_timeout: 10_000 })
  await client.connect()
  try {
    return await f(client)
  } finally {
    await client.end()
  }
}

const postgresStorage = async (adminUrl: string): Promise<Storage> => {
  const database = `kill_${randomBytes(6).toString("hex")}`
  await withPgClient(adminUrl, (client) => client.query(`CREATE DATABASE ${database}`))
  const url = new URL(adminUrl)
  url.pathname = `/${database}`
  const databaseUrl = url.toString()
  return {
    env: { DATABASE_URL: databaseUrl },
    meterRows: () =>
      withPgClient(databaseUrl, async (client) => {
        const rows = await client.query<{ request_id: string }>(
          "SELECT request_id FROM meter_event WHERE app_id = $1",
          [APP_ID]
        )
        return { requestIds: new Set(rows.rows.map((row) => row.request_id)) }
      }),
    cleanup: () =>
      withPgClient(adminUrl, async (client) => {
        await client.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`)
      })
  }
}

/** `cli.ts usage --app kill` on the data directory (no server runs): the service's own reading after the crash. */
const cliUsage = (dataDir: string): Promise<{ total: number }> =>
  new Promise((resolve, reject) => {
    execFile(
      NODE,
      ["src/cli.ts", "usage", "--app", APP_ID],
      { cwd: ROOT, env: childEnv({ DATA_DIR: dataDir }), timeout: 20_000, killSignal: "SIGKILL" },
      (error, stdout, stderr) => {
        if (error !== null) {
          reject(new Error(`cli usage failed: ${error.message}\n${stdout}\n${stderr}`))
          return
        }
        try {
          resolve(JSON.parse(stdout) as { total: number })
        } catch {
          reject(new Error(`cli usage printed no JSON:\n${stdout}\n${stderr}`))
        }
      }
    )
  })

const pgliteStorage = async (): Promise<Storage> => {
  const dataDir = await Fs.promises.mkdtemp(Path.join(Os.tmpdir(), "sigkill-pglite-"))
  return {
    env: { DATA_DIR: dataDir },
    meterRows: async () => {
      // The killed server left owner.lock with its pid; PGlite itself is opened here directly.
      const db = await PGlite.create({ dataDir: Path.join(dataDir, "pgdata") })
      let requestIds: Set<string>
      try {
        const rows = await db.query<{ request_id: string }>(
          "SELECT request_id FROM meter_event WHERE app_id = $1",
          [APP_ID]
        )
        requestIds = new Set(rows.rows.map((row) => row.request_id))
      } finally {
        await db.close()
      }
      // The service's own view: the CLI clears the dead pid's lock, opens DATA_DIR and counts.
      const usage = await cliUsage(dataDir)
      expect(usage.total, "cli usage total vs rows read directly").toBe(requestIds.size)
      return { requestIds }
    },
    cleanup: () => Fs.promises.rm(dataDir, { recursive: true, force: true })
  }
}

// ---------------------------------------------------------------------------
// The test, once per storage

const killSuite = (makeStorage: () => Promise<Storage>) => () => {
  let storage: Storage | undefined
  let server: Server | undefined
  let fixture: Fixture | undefined

  beforeAll(async () => {
    storage = await makeStorage()
    server = await startServer(storage.env)
    fixture = await createFixture(server)
  }, STARTUP_TIMEOUT_MS + 15_000)

  afterAll(async () => {
    await stopServer(server)
    await storage?.cleanup()
  }, 20_000)

  it("every 2xx response received before the SIGKILL has its row in meter_event", async () => {
    const live = server!
    const load = await loadThenKill(live, fixture!)
    const exit = await Promise.race([live.exited, sleep(5_000).then(() => undefined)])
    const rows = await storage!.meterRows()

    const okIds = [fixture!.createRequestId, ...load.okIds]
    const missing = okIds.filter((id) => !rows.requestIds.has(id))
    const summary = {
      loops: LOOPS,
      started: load.started,
      ok: okIds.length,
      okBeforeKill: load.okBeforeKill,
      okAfterKill: load.okIds.length - load.okBeforeKill,
      failures: load.failures,
      otherStatuses: load.otherStatuses,
      killedAtMs: load.killedAtMs,
      elapsedMs: load.elapsedMs,
      meterRows: rows.requestIds.size,
      missing: missing.length
    }
    console.log(`sigkill ${JSON.stringify(summary)}`)

    // The child died of our SIGKILL, mid-load.
    expect(exit, `the child did not die; its output:\n${live.output()}`).toEqual({ code: null, signal: "SIGKILL" })
    expect(load.killedAtMs).toBeDefined()
    expect(load.okBeforeKill, JSON.stringify(summary)).toBeGreaterThanOrEqual(MIN_OK_RESPONSES)
    // Every authenticated 2xx carries its request id, and ids are unique.
    expect(load.okWithoutRequestId).toBe(0)
    expect(new Set(okIds).size).toBe(okIds.length)
    // Under this load, the only answers are 2xx.
    expect(load.otherStatuses).toEqual({})
    // The property: every response the client received is metered.
    expect(missing, `2xx responses missing from meter_event: ${JSON.stringify(summary)}`).toEqual([])
    expect(rows.requestIds.size).toBeGreaterThanOrEqual(okIds.length)
  }, 45_000)
}

describe.skipIf(TEST_DATABASE_URL === undefined || TEST_DATABASE_URL === "")(
  "SIGKILL under load: PostgreSQL",
  killSuite(() => postgresStorage(TEST_DATABASE_URL!))
)

describe("SIGKILL under load: embedded PGlite", killSuite(pgliteStorage))
