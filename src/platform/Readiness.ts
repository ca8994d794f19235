/**
 * The readiness checks of a server (src/services/Readiness.ts): the list its
 * layers add to, beginning with storage's check, and the run behind `GET /ready`: every
 * check at once, each bounded by CHECK_TIMEOUT_MS, so a dependency that
 * hangs makes `/ready` answer 503 in about that time, never hang with it.
 */
import { Cause, Effect, Exit, Fiber, Layer, Option, References } from "effect"
import { SqlClient } from "effect/sql"
import { DependencyUnreachable, type ReadinessBody, type ReadinessCheck, ReadinessChecks } from "../services/Readiness.ts"

/** How long one dependency may take to answer its check. */
export const CHECK_TIMEOUT_MS = 2_000

/**
 * A list the server's layers add their checks to, after `first`: the body
 * names `first` in its order, then the added checks by name (layers are
 * built in no set order).
 */
export const readinessChecksAfter = (first: ReadonlyArray<ReadinessCheck>): ReadinessChecks["Service"] => {
  const checks = new Map<string, ReadinessCheck>()
  return {
    add: (check) => {
      checks.set(check.name, check)
    },
    all: () => [...first, ...[...checks.values()].sort((a, b) => a.name.localeCompare(b.name))]
  }
}

/** The checks of a server over storage: storage's first, then those its layers add (the remote engine, Redis). */
export const ReadinessChecksLive = Layer.effect(
  ReadinessChecks,
  Effect.map(SqlClient.SqlClient, (sql) => readinessChecksAfter([storageCheck(sql)]))
)

/** Network and server error codes an operator recognises, in words. */
const CODES: Readonly<Record<string, string>> = {
  ECONNREFUSED: "connection refused",
  ECONNRESET: "connection reset",
  EPIPE: "connection closed",
  ETIMEDOUT: "connection timed out",
  ENOTFOUND: "host not found",
  EAI_AGAIN: "host not found (DNS)",
  EHOSTUNREACH: "host unreachable",
  ENETUNREACH: "network unreachable",
  UND_ERR_SOCKET: "connection closed",
  UND_ERR_CONNECT_TIMEOUT: "connection timed out",
  UND_ERR_CLOSED: "connection closed",
  "57P01": "the database is shutting down",
  "57P02": "the database is shutting down",
  "57P03": "the database is starting up",
  "28P01": "authentication failed",
  "28000": "authentication failed",
  "3D000": "the database does not exist"
}
/** A code as errors carry it: letters, digits and underscores only, so it can hold no URL and no secret. */
const CODE = /^[A-Z0-9_]{2,40}$/

/**
 * A failure in a few words for the `/ready` body: the first error code found
 * along its causes (`connection refused`, or the code itself), else
 * `fallback`. Never the errors' messages, which may carry a URL with its
 * password.
 */
export const causeInWords = (error: unknown, fallback: string): string => {
  let current: unknown = error
  for (let depth = 0; depth < 8 && typeof current === "object" && current !== null; depth++) {
    const { cause, code, originalError, reason } = current as { cause?: unknown; code?: unknown; originalError?: unknown; reason?: unknown }
    if (typeof code === "string" && CODE.test(code)) return CODES[code] ?? code
    // AggregateError: one per address tried; originalError: node-redis's reconnection errors.
    if (current instanceof AggregateError && current.errors.length > 0) current = current.errors[0]
    else current = cause ?? originalError ?? reason
  }
  return fallback
}

/** Storage answers a `SELECT 1`. */
export const storageCheck = (sql: SqlClient.SqlClient): ReadinessCheck => ({
  name: "storage",
  probe: sql`SELECT 1`.pipe(
    Effect.asVoid,
    Effect.mapError((error) => new DependencyUnreachable({ cause: causeInWords(error, "the query failed") }))
  )
})

/**
 * One check's state: `ok` or `unreachable: <cause>`. The probe runs in a
 * fiber of its own, so that the bound holds even when the probe is slow to
 * interrupt (a driver waiting on a socket): past it the answer is given and
 * the probe is interrupted in the background.
 */
const stateOf = Effect.fnUntraced(function*(check: ReadinessCheck) {
  // A probe polled every few seconds makes no spans (its SQL statement, its HTTP call): nobody wants them in traces.
  const fiber = yield* Effect.forkDetach(Effect.provideService(check.probe, References.TracerEnabled, false))
  const exit = yield* Fiber.await(fiber).pipe(Effect.timeoutOption(CHECK_TIMEOUT_MS))
  if (Option.isNone(exit)) {
    yield* Effect.forkDetach(Fiber.interrupt(fiber))
    return `unreachable: no answer within ${CHECK_TIMEOUT_MS / 1000} s`
  }
  if (Exit.isSuccess(exit.value)) return "ok"
  const error = Cause.findErrorOption(exit.value.cause)
  return `unreachable: ${Option.isSome(error) ? error.value.cause : "the check failed unexpectedly"}`
})

/** Every check at once; the body and status of `GET /ready`. A failing check the process serves without leaves it ready, degraded. */
export const checkReadiness = (checks: ReadonlyArray<ReadinessCheck>): Effect.Effect<{ readonly status: 200 | 503; readonly body: ReadinessBody }> =>
  Effect.map(Effect.forEach(checks, stateOf, { concurrency: "unbounded" }), (states) => {
    const entries = checks.map((check, index) => [check.name, states[index]!] as const)
    const down = checks.filter((_, index) => states[index] !== "ok")
    const failing = down.filter((check) => check.whileDown === undefined).map((check) => check.name)
    const degraded = down.filter((check) => check.whileDown !== undefined).map((check) => `${check.name} unreachable: ${check.whileDown}`)
    const body: ReadinessBody = {
      status: failing.length === 0 ? "ready" : "unavailable",
      ...(failing.length === 0 ? {} : { reason: `${failing.join(", ")} unreachable` }),
      ...(degraded.length === 0 ? {} : { degraded: degraded.join("; ") }),
      checks: Object.fromEntries(entries)
    }
    return { status: failing.length === 0 ? 200 : 503, body }
  })
