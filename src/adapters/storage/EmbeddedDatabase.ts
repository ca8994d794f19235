/**
 * The embedded database: PGlite in DATA_DIR.
 *
 * PGlite admits one process per data directory. The process that opens it
 * holds `owner.lock`: a server's database process (embeddedDatabaseProcess.ts,
 * which shares the database over the unix socket `gateway.sock` in DATA_DIR),
 * or a CLI command while no server runs. So CLI commands work whether or not
 * the server is running, and a database process still closing after its
 * server was killed keeps the next server out until it has exited.
 *
 * Data at rest is private: every tenant's records, secret hashes and meter
 * rows are in these files, so only the service's OS user may read or change
 * them (PrivateDataDir.ts).
 */
import { PGlite } from "@electric-sql/pglite"
import { Data, Effect, Schedule, Schema } from "effect"
import { spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Net from "node:net"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { DATABASE_TEMPLATE } from "./DatabaseTemplate.ts"
import { PgliteBridge } from "./PgliteBridge.ts"
import { PGLITE_PROCESS_FLAGS, pgliteOptions } from "./PgliteSettings.ts"
import { makeDataDirPrivate } from "./PrivateDataDir.ts"

export class DataDirInUse extends Schema.TaggedError<DataDirInUse>()("DataDirInUse", {
  message: Schema.String
}) {}

export const socketPath = (dataDir: string) => Path.join(Path.resolve(dataDir), "gateway.sock")
const lockPath = (dataDir: string) => Path.join(Path.resolve(dataDir), "owner.lock")

/**
 * Who holds the lock: the process that has PGlite open and, for a server's
 * database process, that server (the process an operator knows). The file
 * holds `<pid>` or `<pid> <server pid>`.
 */
interface LockHolder {
  readonly pid: number
  readonly server: number | undefined
}

const isPid = (value: number | undefined): value is number => value !== undefined && Number.isInteger(value) && value > 0

const HAS_PROC = Fs.existsSync("/proc/self/stat")

/**
 * Whether a process runs. A zombie does not: a database process whose server
 * was killed belongs to init once it exits, and init may take a while to
 * reap it (Linux; elsewhere a zombie counts as running).
 */
const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0)
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
  if (!HAS_PROC) return true
  try {
    const stat = Fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    // The state follows the command name, which is in parentheses and may hold spaces.
    const state = stat.charAt(stat.lastIndexOf(")") + 2)
    return state !== "Z" && state !== "X"
  } catch {
    return false
  }
}

/** The lock's holder, or undefined when there is no lock file or it names no process. */
const readHolder = (file: string): LockHolder | undefined => {
  let text: string
  try {
    text = Fs.readFileSync(file, "utf8")
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined
    throw error
  }
  const [pid, server] = text.trim().split(/\s+/).map(Number)
  return isPid(pid) ? { pid, server: isPid(server) ? server : undefined } : undefined
}

/** A database process whose server is gone: it is closing PGlite and exits when done. */
const isOrphaned = (holder: LockHolder) => holder.server !== undefined && !isAlive(holder.server)

/**
 * Creates the lock file with its content in one step (a hard link to a
 * complete draft), so another process never reads it empty; false when it
 * exists.
 */
const createLock = (file: string, content: string): boolean => {
  const draft = `${file}.${process.pid}`
  Fs.writeFileSync(draft, content, { mode: 0o600 })
  try {
    Fs.linkSync(draft, file)
    return true
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false
    throw error
  } finally {
    Fs.rmSync(draft, { force: true })
  }
}

/** Takes the data directory's lock, clearing one left by a process that died; or the live process that holds it. */
const tryLock = (dataDir: string, server: number | undefined): { readonly locked: true } | { readonly locked: false; readonly holder: LockHolder } => {
  const file = lockPath(dataDir)
  const content = server === undefined ? `${process.pid}\n` : `${process.pid} ${server}\n`
  for (;;) {
    if (createLock(file, content)) return { locked: true }
    const holder = readHolder(file)
    if (holder !== undefined && holder.pid !== process.pid && isAlive(holder.pid)) return { locked: false, holder }
    Fs.rmSync(file, { force: true })
  }
}

/** Removes the lock if this process still holds it. */
const releaseLock = (dataDir: string) => {
  const file = lockPath(dataDir)
  if (readHolder(file)?.pid === process.pid) Fs.rmSync(file, { force: true })
}

class LockHeld extends Data.TaggedError("LockHeld")<{ readonly holder: LockHolder }> {}

/**
 * A server waits a moment for a lock held by another server (one that is
 * stopping as this one starts), then says who holds it: well within a second.
 */
const HOLDER_WAIT_MS = 600
/**
 * A database process whose server is gone is waited for longer: it exits as
 * soon as PGlite is closed (a checkpoint: seconds at most), and the next
 * server then starts instead of failing.
 */
const ORPHAN_WAIT_MS = 30_000

const inUse = (dataDir: string, holder: LockHolder) => {
  const named = `DATA_DIR ${dataDir} is in use by process`
  if (holder.server === undefined) return new DataDirInUse({ message: `${named} ${holder.pid}` })
  if (!isOrphaned(holder)) return new DataDirInUse({ message: `${named} ${holder.server}` })
  return new DataDirInUse({
    message: `${named} ${holder.pid} (the embedded database of server process ${holder.server}, which is gone; ` +
      `it did not close within ${ORPHAN_WAIT_MS / 1000} s)`
  })
}

/** Holds the lock until the scope closes. Waiting for it (between attempts) can be interrupted. */
const acquireLock = (dataDir: string, options: { readonly wait: boolean; readonly server: number | undefined }) =>
  Effect.suspend(() => {
    const since = Date.now()
    const worthWaiting = (held: LockHeld) => options.wait && Date.now() - since < (isOrphaned(held.holder) ? ORPHAN_WAIT_MS : HOLDER_WAIT_MS)
    const attempt = Effect.try({
      try: () => tryLock(dataDir, options.server),
      catch: (error) => new DataDirInUse({ message: `DATA_DIR ${dataDir} cannot be locked: ${String(error)}` })
    }).pipe(Effect.flatMap((lock) => lock.locked ? Effect.void : Effect.fail(new LockHeld({ holder: lock.holder }))))
    return Effect.acquireRelease(attempt, () => Effect.sync(() => releaseLock(dataDir))).pipe(
      Effect.retry({
        schedule: Schedule.spaced("100 millis"),
        while: (error) => error._tag === "LockHeld" && worthWaiting(error)
      }),
      Effect.catchTag("LockHeld", (held) => Effect.fail(inUse(dataDir, held.holder)))
    )
  })

const CREATE_SCRIPT = fileURLToPath(new URL("./createDataDirProcess.ts", import.meta.url))

/** Runs createDataDirProcess.ts on `directory`; why it failed, or undefined. */
const createInOwnProcess = (directory: string) =>
  Effect.callback<string | undefined>((resume) => {
    const child = spawn(process.execPath, [...PGLITE_PROCESS_FLAGS, CREATE_SCRIPT, directory], { stdio: ["ignore", "ignore", "pipe"] })
    let stderr = ""
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => stderr = (stderr + chunk).slice(-2000))
    child.once("error", (error) => resume(Effect.succeed(error.message)))
    child.once("exit", (code, signal) =>
      resume(Effect.succeed(code === 0 ? undefined : stderr.trim() || (signal !== null ? `signal ${signal}` : `exit code ${code}`))))
    return Effect.sync(() =>
      child.kill("SIGKILL")
    )
  })

/**
 * A fresh DATA_DIR's database, made in `pgdata.new`, then moved to `pgdata`
 * (a creation cut short, the server killed, leaves no half-made database for
 * the next start to open): a copy of the install's template
 * (DatabaseTemplate.ts), or, without one (installed with
 * `--ignore-scripts`), initdb in a process of its own, for the memory it
 * takes (createDataDirProcess.ts). What the copy writes is as private as
 * the rest of DATA_DIR: the template's modes are 0700 and 0600, and the
 * umask of this process is 077 (PrivateDataDir.ts).
 */
export const createDatabase = Effect.fnUntraced(function*(pgdata: string, template: string = DATABASE_TEMPLATE) {
  const making = `${pgdata}.new`
  Fs.rmSync(making, { recursive: true, force: true })
  if (Fs.existsSync(template)) {
    Fs.cpSync(template, making, { recursive: true, mode: Fs.constants.COPYFILE_EXCL })
  } else {
    const failure = yield* createInOwnProcess(making)
    if (failure !== undefined) return yield* Effect.die(new Error(`the database of DATA_DIR could not be created: ${failure}`))
  }
  Fs.renameSync(making, pgdata)
})

export interface OpenOptions {
  /** Share the database over `gateway.sock` (a server's database process). */
  readonly share: boolean
  /** Wait for a lock held by a server stopping, or a database process closing, rather than failing at once. */
  readonly waitForLock: boolean
  /** The server this process opens the database for, recorded in the lock (its pid). */
  readonly server?: number | undefined
}

/**
 * Opens PGlite in DATA_DIR for this process, holding the lock until the scope
 * closes. DATA_DIR is made private first (`makeDataDirPrivate`), and what
 * PGlite writes stays private (`PrivateNodeFS`). When the scope closes, the
 * socket stops serving (its connections are cut), the batch PGlite is
 * running finishes, then PGlite closes and the lock is released.
 */
export const openEmbedded = Effect.fnUntraced(function*(dataDir: string, options: OpenOptions) {
  yield* makeDataDirPrivate(dataDir)
  yield* acquireLock(dataDir, { wait: options.waitForLock, server: options.server })
  const pgdata = Path.join(Path.resolve(dataDir), "pgdata")
  if (!Fs.existsSync(pgdata)) yield* createDatabase(pgdata)
  const db = yield* Effect.acquireRelease(
    Effect.promise(() => PGlite.create(pgliteOptions(pgdata))),
    (db) => Effect.promise(() => db.close()).pipe(Effect.ignore)
  )
  const bridge = yield* Effect.acquireRelease(
    Effect.sync(() => new PgliteBridge(db)),
    (bridge) => Effect.promise(() => bridge.close())
  )
  if (options.share) yield* shareOverSocket(bridge, socketPath(dataDir))
  return bridge
})

const shareOverSocket = (bridge: PgliteBridge, path: string) =>
  Effect.acquireRelease(
    Effect.callback<{ readonly server: Net.Server; readonly sockets: Set<Net.Socket> }>((resume) => {
      Fs.rmSync(path, { force: true })
      const sockets = new Set<Net.Socket>()
      const server = Net.createServer((socket) => {
        sockets.add(socket)
        const connection = bridge.connect()
        socket.pipe(connection).pipe(socket)
        socket.on("error", () => connection.destroy())
        socket.on("close", () => {
          sockets.delete(socket)
          connection.destroy()
        })
        connection.on("error", () => socket.destroy())
      })
      server.listen(path, () => {
        Fs.chmodSync(path, 0o600)
        resume(Effect.succeed({ server, sockets }))
      })
      server.on("error", (error) => resume(Effect.die(error)))
    }),
    ({ server, sockets }) =>
      Effect.callback<void>((resume) => {
        // Closing waits for open connections: a CLI command's, or the server's pool when it is gone, are cut.
        server.close(() => resume(Effect.void))
        for (const socket of sockets) socket.destroy()
      })
  )

/** Whether a server is sharing this data directory right now. */
export const isShared = (dataDir: string): Effect.Effect<boolean> =>
  Effect.callback<boolean>((resume) => {
    const socket = Net.connect({ path: socketPath(dataDir) })
    socket.once("connect", () => {
      socket.destroy()
      resume(Effect.succeed(true))
    })
    socket.once("error", () => resume(Effect.succeed(false)))
  })
