/**
 * PostgreSQL at start: a database that is still starting (a container
 * started beside the service, a failover) is waited for, with backoff, for
 * DATABASE_CONNECT_TIMEOUT, and each failed attempt is a log line saying so.
 * Then, or at once for credentials it refuses, the start stops with a message
 * that names the server and the cause in words, never the URL (it may carry a
 * password).
 */
import { Duration, Effect, Schedule } from "effect"
import type { SqlError } from "effect/sql/SqlError"
import { InvalidConfig } from "../../domain/Errors.ts"
import { StorageUnreachable } from "../../platform/StartFailure.ts"

/** The first retry waits this long, each next one twice as long, up to MAX_RETRY_DELAY. */
const FIRST_RETRY_DELAY = Duration.millis(250)
const MAX_RETRY_DELAY = Duration.seconds(5)

const CAUSES: Record<string, string> = {
  ECONNREFUSED: "connection refused",
  ENOTFOUND: "host not found",
  EAI_AGAIN: "host name lookup failed",
  ETIMEDOUT: "connection timed out",
  EHOSTUNREACH: "host unreachable",
  ENETUNREACH: "network unreachable",
  ECONNRESET: "connection reset"
}

/** The cause of a failed connection in words: the system error's when there is one. */
const causeInWords = (error: SqlError): string => {
  for (let current: unknown = error, depth = 0; typeof current === "object" && current !== null && depth < 5; depth++) {
    const code = (current as { code?: unknown }).code
    if (typeof code === "string" && CAUSES[code] !== undefined) return CAUSES[code]
    current = (current as { cause?: unknown }).cause
  }
  return error.reason.message
}

/** The first PostgreSQL error (its SQLSTATE and its own message) along `error`'s causes. */
const serverError = (error: SqlError): { readonly code: string; readonly message: string } | undefined => {
  for (let current: unknown = error, depth = 0; typeof current === "object" && current !== null && depth < 6; depth++) {
    const { cause, code, message } = current as { cause?: unknown; code?: unknown; message?: unknown }
    if (typeof code === "string" && SQLSTATE.test(code) && typeof message === "string") return { code, message }
    current = cause
  }
  return undefined
}
const SQLSTATE = /^[0-9A-Z]{5}$/

/**
 * What the server refuses for good, whatever the retries: the database or
 * the role does not exist (3D000, 28000), the credentials (28P01), the
 * permission to connect (42501). A configuration to change: exit 78.
 */
const REFUSALS: ReadonlySet<string> = new Set(["3D000", "28000", "28P01", "42501"])

const isUnreachable = (error: SqlError) => error.reason._tag === "ConnectionError" && !REFUSALS.has(serverError(error)?.code ?? "")

/**
 * `connect` (a client's creation, which opens its first connection) retried
 * while PostgreSQL cannot be reached, for at most `timeout`. `server` names
 * it in messages (`127.0.0.1:5432`).
 */
export const connectAtStart = <A, R>(connect: Effect.Effect<A, SqlError, R>, server: string, timeout: Duration.Duration) => {
  const retries = Schedule.min([Schedule.exponential(FIRST_RETRY_DELAY), Schedule.spaced(MAX_RETRY_DELAY)]).pipe(
    Schedule.upTo({ duration: timeout }),
    Schedule.tap((step) =>
      Effect.logWarning(`cannot reach PostgreSQL at ${server}: ${causeInWords(step.input as SqlError)}; retrying`).pipe(
        Effect.annotateLogs({
          attempt: step.attempt,
          retryInMs: Duration.toMillis(step.duration),
          variable: "DATABASE_URL",
          giveUpAfter: `${Duration.format(timeout)} (DATABASE_CONNECT_TIMEOUT)`
        })
      )
    )
  )
  return connect.pipe(
    Effect.retry({ schedule: retries, while: isUnreachable }),
    Effect.mapError((error) => {
      const refusal = serverError(error)
      if (refusal !== undefined && REFUSALS.has(refusal.code)) {
        return InvalidConfig.about("DATABASE_URL", `PostgreSQL at ${server} refused DATABASE_URL: ${refusal.message} (${refusal.code})`)
      }
      return error.reason._tag === "AuthenticationError" || error.reason._tag === "AuthorizationError"
        ? InvalidConfig.about("DATABASE_URL", `PostgreSQL at ${server} refused the credentials of DATABASE_URL: ${error.reason.message}`)
        : new StorageUnreachable({
          message: isUnreachable(error)
            ? `cannot reach PostgreSQL at ${server}: ${causeInWords(error)} (gave up after ${Duration.format(timeout)}, DATABASE_CONNECT_TIMEOUT)`
            : `PostgreSQL at ${server} did not accept the connection: ${error.reason.message}`
        })
    })
  )
}
