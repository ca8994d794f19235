/**
 * What a graceful stop drained, for its `shutting down` and `stopped` log
 * lines: the parts of the service that hold work (the HTTP server's
 * connections, the meter's rows) register a reading here, and the process
 * runner (ServiceMain.ts) reads them when the signal arrives and when the
 * service has stopped. Tests and tools that run no such runner have none, and
 * the parts register nothing.
 */
import { Context, Effect } from "effect"
import type * as Http from "node:http"

/** A reading: connections open now, meter rows written so far. */
export interface DrainReadings {
  readonly openConnections: number
  readonly meterRowsWritten: number
}

export class ShutdownReport extends Context.Service<ShutdownReport, {
  readonly track: (name: keyof DrainReadings, read: () => number) => void
  readonly read: () => DrainReadings
}>()("mfg/layers/ShutdownReport") {
  static readonly make = (): ShutdownReport["Service"] => {
    const readers = new Map<keyof DrainReadings, Array<() => number>>()
    const total = (name: keyof DrainReadings) => (readers.get(name) ?? []).reduce((sum, read) => sum + read(), 0)
    return {
      track: (name, read) => {
        readers.set(name, [...(readers.get(name) ?? []), read])
      },
      read: () => ({ openConnections: total("openConnections"), meterRowsWritten: total("meterRowsWritten") })
    }
  }
}

/** Registers `read` under `name` when the process keeps a report. */
export const trackForShutdown = (name: keyof DrainReadings, read: () => number) =>
  Effect.serviceOption(ShutdownReport).pipe(
    Effect.map((report) => {
      if (report._tag === "Some") report.value.track(name, read)
    })
  )

/** An HTTP server whose open connections the report counts (NodeHttpServer.layer's `evaluate`). */
export const countingConnections = (make: () => Http.Server) =>
  Effect.map(Effect.serviceOption(ShutdownReport), (report) => () => {
    const server = make()
    if (report._tag === "Some") {
      let open = 0
      server.on("connection", (socket) => {
        open++
        socket.once("close", () => open--)
      })
      report.value.track("openConnections", () => open)
    }
    return server
  })
