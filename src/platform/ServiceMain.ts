/**
 * Runs a server (the gateway, or the engine on its own) as the process's
 * main program, the way an operator or a container runtime expects:
 *
 * - SIGTERM or SIGINT starts a graceful stop: a `shutting down` line, the
 *   server stops accepting, calls in flight finish, the meter writes what is
 *   queued, storage closes; then a `stopped` line with what was drained, and
 *   exit 0. A second signal ends the stop at once (exit 130). The same signal
 *   twice within REPEAT_WINDOW_MS counts once: a terminal's Ctrl-C reaches
 *   both `npm start` and the service, and npm forwards it as well.
 * - A failure, at start or later, is logged as JSON lines naming the cause
 *   and the variable to change (StartFailure.ts), and the exit code says
 *   which kind of failure it was.
 *
 * Every line is JSON, like every other line of the process.
 */
import { Cause, Effect, Exit, Layer, Runtime } from "effect"
import { ShutdownReport } from "./ShutdownReport.ts"
import { describeFailure, ExitCode } from "./StartFailure.ts"
import { JsonLoggerLive, writeLine } from "./telemetry/JsonLog.ts"

/**
 * A repeat of the stop signal within this many milliseconds is the same
 * request to stop: one Ctrl-C reaches both `npm start` and the service, and
 * npm forwards it as well, a few milliseconds later. A person's second Ctrl-C,
 * or a supervisor's second signal, comes later than that and ends the stop.
 */
const REPEAT_WINDOW_MS = 150

/** A graceful stop still running after this long says, and again each time as long again, which parts it waits on. */
const SLOW_STOP_NOTICE_MS = 10_000

const log = (level: "INFO" | "WARN" | "ERROR", msg: string, fields: Record<string, unknown>) =>
  writeLine(JSON.stringify({ time: new Date().toISOString(), level, msg, ...fields }))

/** Runs `service` until a signal stops it or it fails, then exits with the code that says which. */
export const runService = <ROut>(service: Layer.Layer<ROut, unknown>): void => {
  const report = ShutdownReport.make()
  const program = Layer.launch(Layer.provide(service, Layer.succeed(ShutdownReport, report))).pipe(Effect.provide(JsonLoggerLive))

  let stop: { readonly signal: NodeJS.Signals; readonly at: number; readonly openConnections: number; readonly meterRowsWritten: number } | undefined

  const runMain = Runtime.makeRunMain(({ fiber, teardown }) => {
    const onSignal = (signal: NodeJS.Signals) => {
      if (stop === undefined) {
        stop = { signal, at: performance.now(), ...report.read() }
        log("INFO", "shutting down", { signal, openConnections: stop.openConnections })
        const since = stop.at
        const slow = setInterval(() => {
          log("WARN", "the graceful stop is still waiting", {
            elapsedMs: Math.round(performance.now() - since),
            waitingOn: report.parts().waitingOn,
            openConnections: report.read().openConnections
          })
        }, SLOW_STOP_NOTICE_MS)
        slow.unref()
        fiber.addObserver(() => clearInterval(slow))
        fiber.interruptUnsafe(fiber.id)
        return
      }
      if (signal === stop.signal && performance.now() - stop.at < REPEAT_WINDOW_MS) return
      log("WARN", `forced to stop by a second signal (${signal}) before the graceful stop finished`, {
        signal,
        openConnections: report.read().openConnections,
        exitCode: ExitCode.forced
      })
      process.exit(ExitCode.forced)
    }
    process.on("SIGINT", onSignal)
    process.on("SIGTERM", onSignal)
    fiber.addObserver((exit) => {
      process.removeListener("SIGINT", onSignal)
      process.removeListener("SIGTERM", onSignal)
      teardown(exit, (code) => process.exit(code))
    })
  })

  runMain(program, {
    disableErrorReporting: true,
    teardown: (exit, onExit) => {
      if (Exit.isFailure(exit) && !Cause.hasInterruptsOnly(exit.cause)) {
        const lines = describeFailure(exit.cause)
        for (const line of lines) {
          const unexpected = line.exitCode === ExitCode.runtimeFailure
          log("ERROR", line.message, {
            ...(line.variable === undefined ? {} : { variable: line.variable }),
            exitCode: line.exitCode,
            ...(unexpected ? { cause: Cause.pretty(exit.cause) } : {})
          })
        }
        return onExit(lines[0]?.exitCode ?? ExitCode.runtimeFailure)
      }
      const now = report.read()
      log("INFO", "stopped", {
        ...(stop === undefined ? {} : {
          signal: stop.signal,
          durationMs: Math.round(performance.now() - stop.at),
          connectionsClosed: stop.openConnections,
          meterRowsWritten: now.meterRowsWritten - stop.meterRowsWritten,
          partsMs: report.parts().durationsMs
        }),
        exitCode: ExitCode.stopped
      })
      onExit(ExitCode.stopped)
    }
  })
}
