/**
 * Which SQL failures mean storage is out of reach or overloaded, as opposed
 * to a statement of ours being wrong: the first is a 503 the caller may retry,
 * the second a bug. The gateway's stores and the engine judge alike.
 */
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
