/**
 * The embedded database's own process, started by a server (EmbeddedChild.ts)
 * as `node embeddedDatabaseProcess.ts <DATA_DIR>` with an IPC channel:
 * PGlite (Postgres in WebAssembly, CPU-bound) runs here, on an event loop
 * and a core of its own, beside the server's HTTP.
 *
 * It takes DATA_DIR's lock (its pid and its server's), opens PGlite, shares
 * it over DATA_DIR/gateway.sock, and says `Ready`. It closes PGlite and exits
 * when the server asks (`Close`) or is gone (the IPC channel disconnects: the
 * server stopped or was killed), so it outlives its server only by the time
 * PGlite takes to close. SIGINT and SIGTERM are ignored: a terminal's Ctrl-C
 * or a supervisor's stop reaches the whole process group, and the server
 * closes the database itself once its meter's last rows are written.
 *
 * Its log lines are JSON, like the server's, on the same stdout.
 */
import { Cause, Deferred, Effect, Exit, Schema } from "effect"
import { JsonLoggerLive, writeLine } from "../../platform/telemetry/JsonLog.ts"
import { type DatabaseProcessMessage, ServerMessage } from "./EmbeddedChild.ts"
import { openEmbedded } from "./EmbeddedDatabase.ts"

/** Exit codes: a start refused (the server reports why), and a failure while serving (EX_SOFTWARE). */
const REFUSED = 1
const FAILED = 70

const server = process.ppid
const dataDir = process.argv[2]

const fatal = (msg: string, fields: Record<string, unknown> = {}) =>
  writeLine(JSON.stringify({ time: new Date().toISOString(), level: "ERROR", msg, pid: process.pid, ...fields }))

const tell = (message: DatabaseProcessMessage) => {
  if (process.connected) process.send?.(message)
}

if (dataDir === undefined || process.send === undefined) {
  fatal("the embedded database process is started by the server (with DATA_DIR and an IPC channel), not on its own")
  process.exit(REFUSED)
}

process.on("uncaughtException", (error) => {
  fatal(`the embedded database failed: ${error.message}`, { cause: error.stack, exitCode: FAILED })
  process.exit(FAILED)
})
// The server decides when the database closes (see above).
process.on("SIGINT", () => {})
process.on("SIGTERM", () => {})

/** Why the database closes: the server asked, or it is gone. */
const closeRequested = Deferred.makeUnsafe<"asked" | "server gone">()
const isClose = Schema.is(ServerMessage)
process.on("message", (message) => {
  if (isClose(message)) Deferred.doneUnsafe(closeRequested, Exit.succeed("asked"))
})
process.on("disconnect", () => {
  Deferred.doneUnsafe(closeRequested, Exit.succeed("server gone"))
})

const serve = Effect.gen(function*() {
  // A close asked for while the lock is awaited ends the wait; PGlite being opened is opened, then closed.
  const opened = yield* openEmbedded(dataDir!, { share: true, waitForLock: true, server }).pipe(
    Effect.as(true),
    Effect.raceFirst(Effect.as(Deferred.await(closeRequested), false))
  )
  if (opened) tell({ _tag: "Ready" })
  const why = yield* Deferred.await(closeRequested)
  if (why === "server gone") yield* Effect.logWarning(`server process ${server} is gone: closing the embedded database`)
  return why
})

const program = Effect.scoped(serve).pipe(
  Effect.tap((why) => why === "server gone" ? Effect.logInfo("the embedded database is closed") : Effect.void),
  Effect.annotateLogs({ pid: process.pid }),
  Effect.provide(JsonLoggerLive)
)

void Effect.runPromiseExit(program).then((exit) => {
  if (Exit.isSuccess(exit)) return process.exit(0)
  const error = Cause.squash(exit.cause)
  const tag = typeof error === "object" && error !== null && "_tag" in error ? error._tag : undefined
  const message = error instanceof Error ? error.message : String(error)
  if (tag === "DataDirInUse" || tag === "DataDirNotPrivate") {
    tell({ _tag: "Failed", reason: tag, message })
    return process.exit(REFUSED)
  }
  tell({ _tag: "Failed", reason: "Unexpected", message })
  fatal(`the embedded database failed: ${message}`, { cause: Cause.pretty(exit.cause), exitCode: FAILED })
  process.exit(FAILED)
})
