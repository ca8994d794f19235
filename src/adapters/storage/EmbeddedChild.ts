/**
 * The server's side of the embedded database process
 * (embeddedDatabaseProcess.ts): PGlite runs there, on an event loop (and a
 * core) of its own, and the server reaches it over `DATA_DIR/gateway.sock`
 * like any CLI command does.
 *
 * - Start: `node embeddedDatabaseProcess.ts <DATA_DIR>` with an IPC channel;
 *   ready when it says so, having taken the lock, opened PGlite and started
 *   sharing it. Its refusals (DATA_DIR in use, not private) are the server's.
 * - Stop: when the scope closes (after the server's pool, so after the
 *   meter's last rows) it is asked to close and waited for; one that does not
 *   exit within CLOSE_TIMEOUT is killed.
 * - The server gone (stopped, killed): the IPC channel closes and the
 *   process closes PGlite and exits on its own.
 * - The process gone while the server runs: storage is unreachable and
 *   nothing brings it back in this process, so the server logs why and exits
 *   with code 70, and its supervisor restarts the whole service (a new start
 *   recovers PGlite's write-ahead log).
 */
import { Duration, Effect, Schema } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { ExitCode } from "../../platform/StartFailure.ts"
import { DataDirInUse } from "./EmbeddedDatabase.ts"
import { PGLITE_PROCESS_FLAGS } from "./PgliteSettings.ts"
import { DataDirNotPrivate } from "./PrivateDataDir.ts"

/** The process's script, run by this process's own node. */
export const EMBEDDED_DATABASE_SCRIPT = fileURLToPath(new URL("./embeddedDatabaseProcess.ts", import.meta.url))

/** What the database process tells its server: ready, or why it could not start. */
export const DatabaseProcessMessage = Schema.Union([
  Schema.TaggedStruct("Ready", {}),
  Schema.TaggedStruct("Failed", {
    reason: Schema.Literals(["DataDirInUse", "DataDirNotPrivate", "Unexpected"]),
    message: Schema.String
  })
])
export type DatabaseProcessMessage = typeof DatabaseProcessMessage.Type

/** What the server tells the database process: close PGlite and exit. */
export const ServerMessage = Schema.TaggedStruct("Close", {})
export type ServerMessage = typeof ServerMessage.Type

/** Opening a fresh DATA_DIR (initdb) takes a few seconds, a loaded machine several times that. */
const START_TIMEOUT = Duration.minutes(2)
/** Closing is a checkpoint: seconds at most. */
const CLOSE_TIMEOUT = Duration.seconds(30)

interface Exited {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
}

interface Running {
  readonly child: ChildProcess
  readonly exited: Promise<Exited>
  /** Set once the server asks it to close: its exit is then expected. */
  closing: boolean
}

const describeExit = ({ code, signal }: Exited) => (signal !== null ? `signal ${signal}` : `code ${code}`)

const spawnDatabaseProcess = (dataDir: string): Running => {
  // Its lines go where the server's go (the same stdout and stderr), even after the server is gone.
  const child = spawn(process.execPath, [...PGLITE_PROCESS_FLAGS, EMBEDDED_DATABASE_SCRIPT, Path.resolve(dataDir)], {
    stdio: ["ignore", "inherit", "inherit", "ipc"],
    serialization: "json"
  })
  const exited = new Promise<Exited>((resolve) => {
    child.once("exit", (code, signal) => resolve({ code, signal }))
    // Not started at all (no such executable): no exit event follows. Other errors (a failed send) change nothing here.
    child.on("error", () => {
      if (child.pid === undefined) resolve({ code: null, signal: null })
    })
  })
  return { child, exited, closing: false }
}

const isRunning = (child: ChildProcess) => child.exitCode === null && child.signalCode === null

/** Asks the process to close, waits for it boundedly, and kills it if it does not go. */
const stopDatabaseProcess = Effect.fnUntraced(function*(running: Running) {
  running.closing = true
  if (!isRunning(running.child)) return
  const close: ServerMessage = { _tag: "Close" }
  // A channel already gone (or failing now) is a disconnect to the process: it closes by itself all the same.
  if (running.child.connected) running.child.send(close, () => {})
  const exited = yield* Effect.promise(() => running.exited).pipe(Effect.timeoutOption(CLOSE_TIMEOUT))
  if (exited._tag === "Some") return
  yield* Effect.logWarning(
    `the embedded database process (pid ${running.child.pid}) did not close within ${Duration.format(CLOSE_TIMEOUT)}: killing it`
  )
  running.child.kill("SIGKILL")
  yield* Effect.promise(() => running.exited)
})

const decodeMessage = Schema.decodeUnknownOption(DatabaseProcessMessage)

/** Waits for `Ready`; the process's refusal as the server's typed error; a defect if it exits first. */
const awaitReady = (running: Running) =>
  Effect.callback<void, DataDirInUse | DataDirNotPrivate>((resume) => {
    const { child } = running
    const onMessage = (raw: unknown) => {
      const message = decodeMessage(raw)
      if (message._tag === "None") return
      const value = message.value
      if (value._tag === "Ready") return resume(Effect.void)
      switch (value.reason) {
        case "DataDirInUse":
          return resume(Effect.fail(new DataDirInUse({ message: value.message })))
        case "DataDirNotPrivate":
          return resume(Effect.fail(new DataDirNotPrivate({ message: value.message })))
        default:
          return resume(Effect.die(new Error(`the embedded database could not start: ${value.message}`)))
      }
    }
    const onError = (error: Error) => resume(Effect.die(new Error(`cannot start the embedded database process: ${error.message}`)))
    child.on("message", onMessage)
    child.once("error", onError)
    void running.exited.then((exited) => resume(Effect.die(new Error(`the embedded database process exited (${describeExit(exited)}) before it was ready`))))
    return Effect.sync(() => {
      child.off("message", onMessage)
      child.off("error", onError)
    })
  }).pipe(
    Effect.timeoutOrElse({
      duration: START_TIMEOUT,
      orElse: () => Effect.die(new Error(`the embedded database was not ready within ${Duration.format(START_TIMEOUT)}`))
    })
  )

/** Once ready: an exit nobody asked for ends the server, naming the process and how it ended. */
const exitWithDatabase = Effect.fnUntraced(function*(running: Running) {
  const exited = yield* Effect.promise(() => running.exited)
  if (running.closing) return
  yield* Effect.logError(
    `the embedded database process (pid ${running.child.pid}) exited unexpectedly (${describeExit(exited)}): ` +
      `storage is unreachable, so the service stops for its supervisor to restart it`
  ).pipe(Effect.annotateLogs({ exitCode: ExitCode.runtimeFailure }))
  yield* Effect.sync(() => process.exit(ExitCode.runtimeFailure))
})

/**
 * Runs the embedded database process for DATA_DIR for the scope's lifetime:
 * ready (serving `gateway.sock`) when this succeeds, closed when the scope
 * closes.
 */
export const runEmbeddedDatabase = Effect.fnUntraced(function*(dataDir: string) {
  const running = yield* Effect.acquireRelease(Effect.sync(() => spawnDatabaseProcess(dataDir)), stopDatabaseProcess)
  yield* awaitReady(running)
  yield* Effect.forkScoped(exitWithDatabase(running))
})
