/**
 * The embedded database: PGlite in DATA_DIR.
 *
 * PGlite admits one process per data directory. The process that opens it
 * (the server, or a CLI command while no server runs) holds `owner.lock` and,
 * when serving, shares the database over the unix socket `gateway.sock` in
 * DATA_DIR, so CLI commands work whether or not the server is running.
 *
 * Data at rest is private: every tenant's records, secret hashes and meter
 * rows are in these files, so only the service's OS user may read or change
 * them (PrivateDataDir.ts).
 */
import { PGlite } from "@electric-sql/pglite"
import { Effect, Schedule, Schema } from "effect"
import * as Fs from "node:fs"
import * as Net from "node:net"
import * as Path from "node:path"
import { PgliteBridge } from "./PgliteBridge.ts"
import { makeDataDirPrivate, PrivateNodeFS } from "./PrivateDataDir.ts"

export class DataDirInUse extends Schema.TaggedError<DataDirInUse>()("DataDirInUse", {
  message: Schema.String
}) {}

export const socketPath = (dataDir: string) => Path.join(Path.resolve(dataDir), "gateway.sock")
const lockPath = (dataDir: string) => Path.join(Path.resolve(dataDir), "owner.lock")

const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

/** Takes the data directory's lock, clearing one left by a process that died; or the live process that holds it. */
const tryLock = (dataDir: string): { readonly locked: true } | { readonly locked: false; readonly holder: number } => {
  const file = lockPath(dataDir)
  try {
    Fs.writeFileSync(file, String(process.pid), { flag: "wx", mode: 0o600 })
    return { locked: true }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error
    const holder = Number(Fs.readFileSync(file, "utf8").trim())
    if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && isAlive(holder)) return { locked: false, holder }
    Fs.rmSync(file, { force: true })
    return tryLock(dataDir)
  }
}

/**
 * A server waits a moment for a lock held by another process (one that is
 * stopping as this one starts), then says who holds it: well within a second.
 */
const LOCK_WAIT = Schedule.spaced("200 millis").pipe(Schedule.upTo({ times: 3 }))

const acquireLock = (dataDir: string, waitFor: "wait" | "once") =>
  Effect.acquireRelease(
    Effect.try({
      try: () => tryLock(dataDir),
      catch: (error) => new DataDirInUse({ message: `DATA_DIR ${dataDir} cannot be locked: ${String(error)}` })
    }).pipe(
      Effect.flatMap((lock) =>
        lock.locked ? Effect.void : Effect.fail(new DataDirInUse({ message: `DATA_DIR ${dataDir} is in use by process ${lock.holder}` }))
      ),
      waitFor === "wait" ? Effect.retry(LOCK_WAIT) : (self) => self
    ),
    () => Effect.sync(() => Fs.rmSync(lockPath(dataDir), { force: true }))
  )

/**
 * Opens PGlite in DATA_DIR for this process, holding the lock until the scope
 * closes. DATA_DIR is made private first (`makeDataDirPrivate`), and what
 * PGlite writes stays private (`PrivateNodeFS`).
 */
export const openEmbedded = (dataDir: string, options: { readonly share: boolean; readonly waitForLock: boolean }) =>
  Effect.gen(function*() {
    yield* makeDataDirPrivate(dataDir)
    yield* acquireLock(dataDir, options.waitForLock ? "wait" : "once")
    const db = yield* Effect.acquireRelease(
      Effect.promise(() => PGlite.create({ fs: new PrivateNodeFS(Path.join(Path.resolve(dataDir), "pgdata")) })),
      (db) => Effect.promise(() => db.close()).pipe(Effect.ignore)
    )
    const bridge = new PgliteBridge(db)
    if (options.share) yield* shareOverSocket(bridge, socketPath(dataDir))
    return bridge
  })

const shareOverSocket = (bridge: PgliteBridge, path: string) =>
  Effect.acquireRelease(
    Effect.callback<Net.Server>((resume) => {
      Fs.rmSync(path, { force: true })
      const server = Net.createServer((socket) => {
        const connection = bridge.connect()
        socket.pipe(connection).pipe(socket)
        socket.on("error", () => connection.destroy())
        socket.on("close", () => connection.destroy())
        connection.on("error", () => socket.destroy())
      })
      server.listen(path, () => {
        Fs.chmodSync(path, 0o600)
        resume(Effect.succeed(server))
      })
      server.on("error", (error) => resume(Effect.die(error)))
    }),
    (server) =>
      Effect.callback<void>((resume) => {
        server.close(() => resume(Effect.void))
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
