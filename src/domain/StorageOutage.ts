/**
 * Which SQL failures mean storage is out of reach or overloaded, as opposed
 * to a statement of ours being wrong: the first is a 503 the caller may retry,
 * the second a bug. The gateway's stores and the engine judge alike.
 */
import { Effect } from "effect"
import type { SqlError } from "effect/sql/SqlError"

const OUTAGES = new Set([
  "ConnectionError",
  "AuthenticationError",
  "AuthorizationError",
  "LockTimeoutError",
  "StatementTimeoutError",
  "DeadlockError",
  "SerializationError",
  "UnknownError"
])

export const isOutage = (error: SqlError): boolean => OUTAGES.has(error.reason._tag)

/** Severities with which PostgreSQL ends the session it reports them on (a FATAL: a restart, a terminated backend). */
const SESSION_ENDING = new Set(["FATAL", "PANIC"])

/**
 * The connection is gone: every later statement on it fails so, and
 * PostgreSQL rolled back the transaction it held. Either the driver lost it
 * (`ConnectionError`; `operation` says whether opening it, `connect`, when
 * nothing was sent) or the server ended the session with a FATAL error,
 * which @effect/sql-pg reports with the server's fields as its cause.
 */
export const isConnectionLost = (error: SqlError): boolean => {
  if (error.reason._tag === "ConnectionError") return true
  const cause = error.reason.cause as { readonly severityUnlocalized?: unknown; readonly severity?: unknown } | null | undefined
  const severity = cause?.severityUnlocalized ?? cause?.severity
  return typeof severity === "string" && SESSION_ENDING.has(severity)
}

/**
 * A ROLLBACK (of a transaction or to a savepoint) or a RELEASE SAVEPOINT,
 * done when its connection is gone: there is nothing left to undo, and the
 * failure that led to it is the one answered.
 */
export const unlessConnectionLost = (cleanup: Effect.Effect<unknown, SqlError>) => Effect.catchIf(Effect.asVoid(cleanup), isConnectionLost, () => Effect.void)
