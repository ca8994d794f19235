/**
 * Embedded PGlite runs in a process of the server's own (the database
 * process), as an operator sees it: named with its server in
 * DATA_DIR/owner.lock, gone when its server stops (gracefully or killed, then
 * having closed PGlite and said so in JSON lines), and the server stopping
 * with a JSON line and exit 70 when the database process dies under it.
 * DATA_DIR is never open in two processes: a database process still closing
 * after its server was killed is waited for, one of a live server refuses
 * the start at once. In-process servers (the test suites' StorageLive)
 * leave no database process behind.
 */
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Schedule } from "effect"
import { Reactivity } from "effect/reactivity"
import { SqlClient } from "effect/sql"
import { type ChildProcess, spawn, spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { socketPath } from "../../src/adapters/storage/EmbeddedDatabase.ts"
import { StorageLive } from "../../src/adapters/storage/Storage.ts"
import { InstrumentsNoOp } from "../../src/platform/telemetry/Instruments.ts"
import { testConfig } from "../support/backends.ts"
import { failedStart, logLines, NODE, type ServiceProcess, startService } from "../support/processes.ts"

const SCRIPT = "embeddedDatabaseProcess.ts"
/** How long a database process may take to close PGlite once its server is gone: a checkpoint, seconds at most. */
const CLOSE_MS = 20_000

const scratch = Fs.mkdtempSync(Path.join(Os.tmpdir(), "embedded-child-"))
const freshDir = () => Fs.mkdtempSync(Path.join(scratch, "data-"))

afterAll(() => {
  Fs.rmSync(scratch, { recursive: true, force: true })
})

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** Whether `pid` runs (a zombie, exited but not yet reaped, does not). */
const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0)
    const stat = Fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    return stat.charAt(stat.lastIndexOf(")") + 2) !== "Z"
  } catch {
    return false
  }
}

const waitFor = async (condition: () => boolean, ms: number) => {
  const deadline = Date.now() + ms
  while (!condition() && Date.now() < deadline) await sleep(50)
  return condition()
}

/** DATA_DIR/owner.lock: the process with PGlite open, and the server it serves. */
const lockHolder = (dataDir: string) => {
  try {
    const [database, server] = Fs.readFileSync(Path.join(dataDir, "owner.lock"), "utf8").trim().split(/\s+/).map(Number)
    return { database: database!, server }
  } catch {
    return undefined
  }
}

/** The database processes running for `dataDir` (their command line names it), with their parents. */
const databaseProcesses = (dataDir: string): ReadonlyArray<{ readonly pid: number; readonly parent: number }> =>
  Fs.readdirSync("/proc").filter((entry) => /^\d+$/.test(entry)).flatMap((entry) => {
    try {
      const args = Fs.readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0")
      if (!args.some((arg) => arg.endsWith(SCRIPT)) || !args.includes(Path.resolve(dataDir))) return []
      const stat = Fs.readFileSync(`/proc/${entry}/stat`, "utf8")
      const [state, parent] = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
      return state === "Z" ? [] : [{ pid: Number(entry), parent: Number(parent) }]
    } catch {
      return []
    }
  })

interface Exit {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
}

const exitOf = (child: ChildProcess): Promise<Exit> =>
  child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve({ code: child.exitCode, signal: child.signalCode })
    : new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })))

/** Everything the server's stdout and stderr carried, once both closed (the database process writes there too). */
const allOutput = (server: ServiceProcess) =>
  Promise.all(
    [server.child.stdout!, server.child.stderr!].map((stream) =>
      stream.closed ? Promise.resolve() : new Promise<void>((resolve) => stream.once("close", () => resolve()))
    )
  ).then(() => server.output())

const serve = (dataDir: string) => startService({ DATA_DIR: dataDir, REQUEST_LOG: "false" })

describe("the embedded database process", () => {
  const dataDir = freshDir()
  const started: Array<ServiceProcess> = []
  afterAll(async () => {
    for (const server of started) server.child.kill("SIGKILL")
    await waitFor(() => databaseProcesses(dataDir).length === 0, CLOSE_MS)
  }, CLOSE_MS + 5_000)

  it("is named in owner.lock with its server, serves it, and is gone when the server has stopped gracefully", async () => {
    const server = await serve(dataDir)
    started.push(server)
    const holder = lockHolder(dataDir)
    expect(holder?.server).toBe(server.child.pid)
    expect(databaseProcesses(dataDir)).toEqual([{ pid: holder!.database, parent: server.child.pid }])
    expect((await fetch(`${server.base}/ready`)).status).toBe(200)

    const exited = exitOf(server.child)
    server.child.kill("SIGTERM")
    expect(await exited).toEqual({ code: 0, signal: null })
    // The server waited for it: gone at once, PGlite closed (the lock released), the socket removed.
    expect(isAlive(holder!.database)).toBe(false)
    expect(lockHolder(dataDir)).toBeUndefined()
    expect(Fs.existsSync(Path.join(dataDir, "gateway.sock"))).toBe(false)
    expect(logLines(await allOutput(server)).map((line) => line.level)).not.toContain("ERROR")
  }, 60_000)

  it("closes PGlite and exits by itself when its server is killed, saying so in JSON lines", async () => {
    const server = await serve(dataDir)
    started.push(server)
    const database = lockHolder(dataDir)!.database
    server.child.kill("SIGKILL")
    expect(await waitFor(() => !isAlive(database), CLOSE_MS), `database process ${database} still runs`).toBe(true)
    expect(lockHolder(dataDir), "owner.lock left behind: PGlite was not closed").toBeUndefined()
    const lines = logLines(await allOutput(server))
    expect(lines.slice(-2).map(({ level, msg, pid }) => ({ level, msg, pid }))).toEqual([
      { level: "WARN", msg: `server process ${server.child.pid} is gone: closing the embedded database`, pid: database },
      { level: "INFO", msg: "the embedded database is closed", pid: database }
    ])
  }, 60_000)

  it("dying under its server stops the server with one JSON line naming it, exit 70", async () => {
    const server = await serve(dataDir)
    started.push(server)
    const database = lockHolder(dataDir)!.database
    const exited = exitOf(server.child)
    process.kill(database, "SIGKILL")
    expect(await exited).toEqual({ code: 70, signal: null })
    const lines = logLines(await allOutput(server))
    expect(lines.at(-1)).toMatchObject({
      level: "ERROR",
      msg: `the embedded database process (pid ${database}) exited unexpectedly (signal SIGKILL): ` +
        "storage is unreachable, so the service stops for its supervisor to restart it",
      exitCode: 70
    })
    // The next start clears the dead process's lock and serves the same database.
    const next = await serve(dataDir)
    started.push(next)
    expect((await fetch(`${next.base}/ready`)).status).toBe(200)
    await next.stop()
  }, 90_000)
})

describe("DATA_DIR held by another database process", () => {
  /** A process standing in for another server's database process, as owner.lock names it. */
  const standIn = () => spawn(NODE, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" })
  /** The pid of a process that has exited (and been reaped). */
  const deadPid = () => spawnSync(NODE, ["-e", ""]).pid!
  const standIns: Array<ChildProcess> = []
  afterAll(() => {
    for (const child of standIns) child.kill("SIGKILL")
  })

  it("of a live server: the start is refused in a moment, naming that server", async () => {
    const dataDir = freshDir()
    const holder = standIn()
    standIns.push(holder)
    Fs.writeFileSync(Path.join(dataDir, "owner.lock"), `${holder.pid} ${process.pid}\n`, { mode: 0o600 })
    const { code, output } = await failedStart("src/main.ts", { DATA_DIR: dataDir })
    expect(code, output).toBe(69)
    expect(logLines(output)[0]).toMatchObject({ level: "ERROR", msg: `DATA_DIR ${dataDir} is in use by process ${process.pid}`, variable: "DATA_DIR" })
    expect(databaseProcesses(dataDir)).toEqual([])
  }, 60_000)

  it("of a server that is gone: the start waits until it has exited, then serves", async () => {
    const dataDir = freshDir()
    const holder = standIn()
    standIns.push(holder)
    Fs.writeFileSync(Path.join(dataDir, "owner.lock"), `${holder.pid} ${deadPid()}\n`, { mode: 0o600 })
    let outcome: "starting" | "listening" | "failed" = "starting"
    const starting = serve(dataDir)
    starting.then(() => (outcome = "listening"), () => (outcome = "failed"))
    expect(await waitFor(() => databaseProcesses(dataDir).length > 0 || outcome !== "starting", 30_000)).toBe(true)
    // Well past the 0.6 s a live server's database process is waited for.
    await sleep(2_000)
    expect(outcome).toBe("starting")
    expect(lockHolder(dataDir)?.database).toBe(holder.pid)

    holder.kill("SIGKILL")
    const server = await starting
    try {
      expect(lockHolder(dataDir)?.server).toBe(server.child.pid)
      expect((await fetch(`${server.base}/ready`)).status).toBe(200)
    } finally {
      await server.stop()
    }
  }, 90_000)
})

describe("a database process waiting for DATA_DIR", () => {
  it("leaves as soon as its own server is gone, without waiting for the lock any longer", async () => {
    const dataDir = freshDir()
    const holder = spawn(NODE, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" })
    try {
      Fs.writeFileSync(Path.join(dataDir, "owner.lock"), `${holder.pid} ${spawnSync(NODE, ["-e", ""]).pid}\n`, { mode: 0o600 })
      const starting = serve(dataDir).catch((error: Error) => error)
      expect(await waitFor(() => databaseProcesses(dataDir).length > 0, 30_000)).toBe(true)
      const [waiting] = databaseProcesses(dataDir)
      process.kill(waiting!.parent, "SIGKILL")
      // Well within the 30 s it would wait for the lock.
      expect(await waitFor(() => !isAlive(waiting!.pid), 10_000), "the database process kept waiting for the lock").toBe(true)
      expect(await starting).toBeInstanceOf(Error)
      expect(lockHolder(dataDir)?.database).toBe(holder.pid)
    } finally {
      holder.kill("SIGKILL")
    }
  }, 60_000)
})

describe("the database process's socket, shared by every connection", () => {
  const dataDir = freshDir()
  const storage = StorageLive("serve").pipe(Layer.provide([InstrumentsNoOp, testConfig("pglite", { dataDir })]))
  const withStorage = <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient>) =>
    Effect.runPromise(Effect.scoped(Effect.flatMap(Layer.build(storage), (context) => Effect.provide(effect, context))))

  it("keeps statements larger than a socket read whole, beside other connections' statements", async () => {
    const big = (n: number) => String(n).repeat(400_000)
    const results = await withStorage(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`CREATE TABLE big_probe (n int, body text)`
      const writes = Effect.forEach(
        Array.from({ length: 12 }, (_, n) => n),
        (n) => sql<{ n: number; size: number }>`INSERT INTO big_probe VALUES (${n}, ${big(n)}) RETURNING n, length(body) AS size`,
        { concurrency: "unbounded" }
      )
      const reads = Effect.forEach(
        Array.from({ length: 60 }, (_, n) => n),
        (n) => sql<{ n: number }>`SELECT ${n}::int AS n`,
        { concurrency: "unbounded" }
      )
      const [written, read] = yield* Effect.all([writes, reads], { concurrency: 2 })
      const stored = yield* sql<{ n: number; ok: boolean }>`SELECT n, body = repeat(n::text, 400000) AS ok FROM big_probe ORDER BY n`
      return { written: written.map((rows) => rows[0]), read: read.map((rows) => rows[0]?.n), stored }
    }))
    expect(results.written).toEqual(Array.from({ length: 12 }, (_, n) => ({ n, size: big(n).length })))
    expect(results.read).toEqual(Array.from({ length: 60 }, (_, n) => n))
    expect(results.stored).toEqual(Array.from({ length: 12 }, (_, n) => ({ n, ok: true })))
  }, 120_000)

  it("closes the statements a connection prepared once it goes away", async () => {
    const counts = await withStorage(
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const prepared = sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_prepared_statements`.pipe(Effect.map((rows) => rows[0]!.n))
        const before = yield* prepared
        // A CLI command's connection: a few statements, then gone.
        const during = yield* Effect.scoped(Effect.gen(function*() {
          const other = yield* PgClient.make({ path: socketPath(dataDir), username: "postgres", database: "postgres", maxConnections: 1 })
          for (const n of [1, 2, 3]) yield* other`SELECT ${n}::int AS probe_${other.literal(String(n))}`
          return yield* prepared
        }))
        // The bridge closes them when the connection's end reaches it (the socket's close): looked at until then, boundedly.
        const after = yield* prepared.pipe(
          Effect.repeat({ schedule: Schedule.spaced("100 millis"), until: (n) => n === before, times: 50 })
        )
        return { before, during, after }
      }).pipe(Effect.provide(Reactivity.layer))
    )
    expect(counts.during).toBeGreaterThanOrEqual(counts.before + 3)
    expect(counts.after).toBe(counts.before)
  }, 120_000)
})

describe("in-process servers (StorageLive in a test worker)", () => {
  it("run one database process each, three at once, and leave none once their layers close", async () => {
    const dirs = [freshDir(), freshDir(), freshDir()]
    const whileOpen = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const contexts = yield* Effect.forEach(
        dirs,
        (dataDir) => Layer.build(StorageLive("serve").pipe(Layer.provide([InstrumentsNoOp, testConfig("pglite", { dataDir })]))),
        { concurrency: "unbounded" }
      )
      const answers = yield* Effect.forEach(contexts, (context) =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          return yield* sql<{ one: number }>`SELECT 1 AS one`
        }).pipe(Effect.provide(context)))
      return { answers, processes: dirs.map((dir) => databaseProcesses(dir)) }
    })))
    expect(whileOpen.answers.map((rows) => rows[0]?.one)).toEqual([1, 1, 1])
    expect(whileOpen.processes.map((found) => found.map(({ parent }) => parent))).toEqual([[process.pid], [process.pid], [process.pid]])
    expect(dirs.map((dir) => databaseProcesses(dir))).toEqual([[], [], []])
    expect(dirs.map((dir) => lockHolder(dir))).toEqual([undefined, undefined, undefined])
  }, 120_000)
})
