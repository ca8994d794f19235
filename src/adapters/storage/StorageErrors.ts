import { Effect } from "effect"
import type { SqlError } from "effect/sql/SqlError"
import { ServiceUnavailable } from "../../domain/Errors.ts"
import { isOutage } from "../../domain/StorageOutage.ts"

/** During an outage every call fails the same way: one warning a second says so without flooding the log. */
const WARNING_INTERVAL_MS = 1_000
let lastWarningAt = Number.NEGATIVE_INFINITY
let failuresSinceWarning = 0

/** The outage warning, at most once per WARNING_INTERVAL_MS, with the number of failures it stands for. */
const warnOutage = (reason: string) =>
  Effect.suspend(() => {
    failuresSinceWarning++
    const now = Date.now()
    if (now - lastWarningAt < WARNING_INTERVAL_MS) return Effect.void
    const failures = failuresSinceWarning
    failuresSinceWarning = 0
    lastWarningAt = now
    return Effect.logWarning("storage unavailable", reason).pipe(Effect.annotateLogs({ failures }))
  })

/**
 * For `Effect.catchTag("SqlError", storageFailure)` on the request path: an
 * outage becomes the 503 (and a warning, at most one a second), any other
 * SQL failure is a bug and stays a defect.
 */
export const storageFailure = (error: SqlError): Effect.Effect<never, ServiceUnavailable> =>
  isOutage(error)
    ? warnOutage(error.reason._tag).pipe(Effect.andThen(Effect.fail(ServiceUnavailable.storage())))
    : Effect.die(error)
