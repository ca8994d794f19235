/**
 * The webhooks' metrics, recorded with Effect's Metric like the model
 * files' (src/engine/geometry/ModelMetrics.ts), by whichever process runs
 * the engine:
 *
 * | metric | kind, unit | attributes |
 * |---|---|---|
 * | `webhook.attempt.duration` | histogram, s | `error.type` when the attempt failed |
 * | `webhook.delivery.lag` | histogram, s | none: event written → 2xx received |
 *
 * `error.type` is the receiver's status code (`500`), `timeout`,
 * `unreachable` (no connection) or `refused` (an address the policy refuses).
 * The lag is what a receiver waits for a change: the fan-out, the queue of
 * its endpoint and every failed attempt before the one answered.
 */
import { Effect, Metric } from "effect"
import type { AttemptOutcome } from "./sender.ts"

const ATTEMPT_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]
/** Seconds: tens of milliseconds when the receiver answers at once, days when it was down. */
const LAG_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 3600, 21600, 86400, 259200]

const attemptSeries = new Map<string, Metric.Histogram<number>>()
const attemptDuration = (errorType: string | undefined) => {
  const key = errorType ?? ""
  let metric = attemptSeries.get(key)
  if (metric === undefined) {
    metric = Metric.histogram("webhook.attempt.duration", {
      description: "Duration of webhook delivery attempts, request to answer; error.type when one failed",
      boundaries: ATTEMPT_BUCKETS,
      attributes: errorType === undefined ? { unit: "s" } : { unit: "s", "error.type": errorType }
    })
    attemptSeries.set(key, metric)
  }
  return metric
}

const deliveryLag = Metric.histogram("webhook.delivery.lag", {
  description: "Time from an event's write to the 2xx of its delivery",
  boundaries: LAG_BUCKETS,
  attributes: { unit: "s" }
})

/** What kind of failure an attempt was, as `error.type`. */
export const attemptErrorType = (outcome: AttemptOutcome): string | undefined => {
  if (outcome.succeeded) return undefined
  if (outcome.statusCode !== null) return String(outcome.statusCode)
  if (outcome.error?.includes("WEBHOOK_TIMEOUT") === true) return "timeout"
  if (outcome.error?.includes("is not called") === true || outcome.error?.startsWith("url:") === true) return "refused"
  return "unreachable"
}

/** Records an attempt, and for a delivered event its lag since `eventCreatedAt`. */
export const recordAttemptMetrics = Effect.fnUntraced(function*(outcome: AttemptOutcome, eventCreatedAt: string | undefined) {
  yield* Metric.update(attemptDuration(attemptErrorType(outcome)), outcome.latencyMs / 1000)
  if (outcome.succeeded && eventCreatedAt !== undefined) {
    yield* Metric.update(deliveryLag, Math.max(0, Date.now() - Date.parse(eventCreatedAt)) / 1000)
  }
})
