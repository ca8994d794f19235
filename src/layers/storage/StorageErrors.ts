import { Effect } from "effect"
import type { SqlError } from "effect/sql/SqlError"
import { ServiceUnavailable } from "../../domain/Errors.ts"

/** Failures that say storage is out of reach or overloaded, not that our SQL is wrong. */
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

/**
 * For `Effect.catchTag("SqlError", storageFailure)` on the request path: an
 * outage becomes the 503, any other SQL failure is a bug and stays a defect.
 */
export const storageFailure = (error: SqlError): Effect.Effect<never, ServiceUnavailable> =>
  isOutage(error)
    ? Effect.logWarning("storage unavailable", error.reason._tag).pipe(
      Effect.andThen(Effect.fail(ServiceUnavailable.storage()))
    )
    : Effect.die(error)
