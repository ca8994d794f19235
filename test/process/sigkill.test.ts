/**
 * A response that a client received is always in the meter table, even if the
 * process is then killed with SIGKILL.
 *
 * For each storage (PostgreSQL when TEST_DATABASE_URL is set, embedded PGlite
 * always) the service runs as a child process under concurrent load and is
 * killed with SIGKILL mid-load; every 2xx response's `x-request-id` must then
 * be a row of `meter_event`. On PGlite the database runs in a process of the
 * service's own, which must then close PGlite and exit by itself; and a new
 * server started at once on the same DATA_DIR must wait for it, then start
 * with every row there.
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
      if (output.includes("Listening on http")) {
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

/** `beforeKill` runs just before the SIGKILL. */
const loadThenKill = async (server: Server, fixture: Fixture, beforeKill: () => void = () => {}): Promise<LoadResult> => {
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
    beforeKill()
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
  /** Once the service is dead: waits for what it left running to end by itself (PGlite's database process). */
  readonly afterKill: () => Promise<void>
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
    afterKill: () => Promise.resolve(),
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

/** The processes named in DATA_DIR/owner.lock: the one with PGlite open and the server it serves, if any. */
const lockHolder = (dataDir: string): { readonly database: number; readonly server: number | undefined } | undefined => {
  let text: string
  try {
    text = Fs.readFileSync(Path.join(dataDir, "owner.lock"), "utf8")
  } catch {
    return undefined
  }
  const [database, server] = text.trim().split(/\s+/).map(Number)
  return database === undefined || !(database > 0) ? undefined : { database, server: server !== undefined && server > 0 ? server : undefined }
}

/** Whether `pid` runs (a zombie, exited but not yet reaped, does not). */
const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0)
  } catch {
    return false
  }
  try {
    const stat = Fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    return stat.charAt(stat.lastIndexOf(")") + 2) !== "Z"
  } catch {
    return false
  }
}

/** How long PGlite's database process may take to close once its server is gone: a checkpoint, seconds at most. */
const DATABASE_CLOSE_MS = 20_000

const waitUntilGone = async (pid: number, ms: number) => {
  const deadline = Date.now() + ms
  while (isAlive(pid) && Date.now() < deadline) await sleep(50)
  return !isAlive(pid)
}

interface PgliteStorage extends Storage {
  readonly dataDir: string
}

const pgliteStorage = async (): Promise<PgliteStorage> => {
  const dataDir = await Fs.promises.mkdtemp(Path.join(Os.tmpdir(), "sigkill-pglite-"))
  return {
    dataDir,
    env: { DATA_DIR: dataDir },
    afterKill: async () => {
      // The database process of the killed server: it closes PGlite on its own and releases the lock.
      const holder = lockHolder(dataDir)
      if (holder === undefined) return
      expect(await waitUntilGone(holder.database, DATABASE_CLOSE_MS), `database process ${holder.database} still runs`).toBe(true)
      expect(lockHolder(dataDir), "owner.lock left behind: PGlite was not closed").toBeUndefined()
    },
    meterRows: async () => {
      // No process has DATA_DIR open any more; PGlite itself is opened here directly.
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
      // The service's own view: the CLI opens DATA_DIR and counts.
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
    await storage!.afterKill()
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

// ---------------------------------------------------------------------------
// The drill: SIGKILL, then a new server at once on the same DATA_DIR

/** The embedded database processes running for `dataDir` (their command line names it). */
const databaseProcesses = (dataDir: string): ReadonlyArray<number> =>
  Fs.readdirSync("/proc").filter((entry) => /^\d+$/.test(entry)).flatMap((entry) => {
    try {
      const args = Fs.readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0")
      return args.some((arg) => arg.endsWith("embeddedDatabaseProcess.ts")) && args.includes(dataDir) && isAlive(Number(entry))
        ? [Number(entry)]
        : []
    } catch {
      return []
    }
  })

const waitFor = async (condition: () => boolean, ms: number) => {
  const deadline = Date.now() + ms
  while (!condition() && Date.now() < deadline) await sleep(50)
  return condition()
}

describe("SIGKILL, then a new server at once on the same DATA_DIR: embedded PGlite", () => {
  let storage: PgliteStorage | undefined
  const servers: Array<Server> = []
  let held: number | undefined

  afterAll(async () => {
    if (held !== undefined && isAlive(held)) process.kill(held, "SIGCONT")
    for (const server of servers) await stopServer(server)
    await storage?.cleanup()
  }, 30_000)

  it("starts once the killed server's database process has closed, with every 2xx in meter_event", async () => {
    storage = await pgliteStorage()
    const dataDir = storage.dataDir
    const first = await startServer(storage.env)
    servers.push(first)
    const fixture = await createFixture(first)
    const holder = lockHolder(dataDir)
    expect(holder?.server, "owner.lock names the server").toBe(first.child.pid)
    const oldDatabase = holder!.database

    // The old database process is held still (SIGSTOP) as its server dies, so the new server finds DATA_DIR
    // open by a process that is closing: it must wait for it, neither failing nor opening DATA_DIR beside it.
    const load = await loadThenKill(first, fixture, () => {
      held = oldDatabase
      process.kill(oldDatabase, "SIGSTOP")
    })
    await first.exited
    let outcome: "starting" | "listening" | "failed" = "starting"
    const starting = startServer(storage.env)
    starting.then(() => (outcome = "listening"), () => (outcome = "failed"))

    const newDatabase = () => databaseProcesses(dataDir).find((pid) => pid !== oldDatabase)
    expect(await waitFor(() => newDatabase() !== undefined || outcome !== "starting", STARTUP_TIMEOUT_MS)).toBe(true)
    // Well past the 0.6 s a live server's lock is waited for.
    await sleep(2_000)
    expect(outcome, "the new server did not wait for the old database process").toBe("starting")
    expect(lockHolder(dataDir)?.database, "the lock changed hands while the old database process had DATA_DIR open").toBe(oldDatabase)

    process.kill(oldDatabase, "SIGCONT")
    held = undefined
    const second = await starting
    servers.push(second)
    expect(await waitUntilGone(oldDatabase, DATABASE_CLOSE_MS), "the old database process still runs").toBe(true)
    expect(lockHolder(dataDir)?.server).toBe(second.child.pid)

    // The new server serves the same records; then a graceful stop.
    const after = await fetch(`${second.baseUrl}/v1/customer/${fixture.customerId}`, { headers: { authorization: fixture.secret } })
    expect(after.status).toBe(200)
    const afterId = after.headers.get("x-request-id")!
    second.child.kill("SIGTERM")
    expect(await second.exited).toEqual({ code: 0, signal: null })
    expect(databaseProcesses(dataDir), "a database process outlived its server's graceful stop").toEqual([])

    const rows = await storage.meterRows()
    const okIds = [fixture.createRequestId, ...load.okIds, afterId]
    const missing = okIds.filter((id) => !rows.requestIds.has(id))
    console.log(
      `sigkill drill ${JSON.stringify({ ok: okIds.length, okBeforeKill: load.okBeforeKill, meterRows: rows.requestIds.size, missing: missing.length })}`
    )
    expect(load.okBeforeKill).toBeGreaterThanOrEqual(MIN_OK_RESPONSES)
    expect(load.otherStatuses).toEqual({})
    expect(missing, "2xx responses missing from meter_event").toEqual([])
  }, 120_000)
})
