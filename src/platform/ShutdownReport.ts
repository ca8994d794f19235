/**
 * What a graceful stop drained, for its `shutting down` and `stopped` log
 * lines: the parts of the service that hold work (the HTTP server's
 * connections, the meter's rows) register a reading here, and the process
 * runner (ServiceMain.ts) reads them when the signal arrives and when the
 * service has stopped. Tests and tools that run no such runner have none, and
 * the parts register nothing.
 */
import { Context, Duration, Effect, Fiber, Layer, Option, Scope } from "effect"
import type * as Http from "node:http"

/** A reading: connections open now, meter rows written so far. */
export interface DrainReadings {
  readonly openConnections: number
  readonly meterRowsWritten: number
}

/** The parts of the service a stop releases: those still releasing, and how long each finished one took. */
export interface PartsStopping {
  readonly waitingOn: ReadonlyArray<string>
  readonly durationsMs: Readonly<Record<string, number>>
}

export class ShutdownReport extends Context.Service<ShutdownReport, {
  readonly track: (name: keyof DrainReadings, read: () => number) => void
  readonly read: () => DrainReadings
  /** `name` begins its release; the returned function says it has finished. */
  readonly releasing: (name: string) => () => void
  readonly parts: () => PartsStopping
}>()("mfg/layers/ShutdownReport") {
  static readonly make = (): ShutdownReport["Service"] => {
    const readers = new Map<keyof DrainReadings, Array<() => number>>()
    const total = (name: keyof DrainReadings) => (readers.get(name) ?? []).reduce((sum, read) => sum + read(), 0)
    const waiting = new Set<string>()
    const durationsMs: Record<string, number> = {}
    return {
      track: (name, read) => {
        readers.set(name, [...(readers.get(name) ?? []), read])
      },
      read: () => ({ openConnections: total("openConnections"), meterRowsWritten: total("meterRowsWritten") }),
      releasing: (name) => {
        const began = performance.now()
        waiting.add(name)
        return () => {
          waiting.delete(name)
          durationsMs[name] = Math.round(performance.now() - began)
        }
      },
      parts: () => ({ waitingOn: [...waiting], durationsMs: { ...durationsMs } })
    }
  }
}

/** How long a stop waits for a part, and what it means for the part's work when the stop goes on without it. */
export interface ReleaseBound {
  readonly within: Duration.Duration
  readonly consequence: string
}

/**
 * `layer`, its release timed as the part `name`: a stop that takes long says
 * which part it still waits on, and the `stopped` line how long each took.
 * The layer is built in a scope of its own, closed where its place in the
 * composition closes it, so the order of release is unchanged.
 *
 * With `within`, the stop waits that long for the part and then goes on
 * without it (a WARN line says so, with `consequence`): for a part whose
 * work is durable elsewhere, so that it never holds the whole stop.
 */
export const releasedAs = (name: string, bound?: ReleaseBound) => <A, E, R>(layer: Layer.Layer<A, E, R>): Layer.Layer<A, E, R> =>
  Layer.fromBuild((memoMap, scope) =>
    Effect.gen(function*() {
      const report = yield* Effect.serviceOption(ShutdownReport)
      const own = yield* Scope.fork(scope, "sequential")
      yield* Scope.addFinalizerExit(scope, (exit) =>
        Effect.suspend(() => {
          const finished = report._tag === "Some" ? report.value.releasing(name) : () => undefined
          const close = Effect.ensuring(Scope.close(own, exit), Effect.sync(finished))
          return bound === undefined ? close : closeWithin(close, name, bound)
        }))
      return yield* Layer.buildWithMemoMap(layer, memoMap, own)
    })
  )

/** Runs `close` on a fiber of its own and waits for it at most `within`. */
const closeWithin = (close: Effect.Effect<void>, name: string, bound: ReleaseBound) =>
  Effect.gen(function*() {
    const closing = yield* Effect.forkDetach(close)
    const closed = yield* Effect.interruptible(Fiber.await(closing)).pipe(Effect.timeoutOption(bound.within))
    if (Option.isNone(closed)) {
      yield* Effect.logWarning(`the graceful stop goes on without ${name}, still releasing after ${Duration.format(bound.within)}: ${bound.consequence}`)
    }
  })
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
