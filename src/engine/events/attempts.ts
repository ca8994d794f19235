/**
 * One delivery attempt and what follows from it, as steps the delivery
 * workflow (delivery.ts) runs as its activities: when the next attempt is
 * due (RETRY_DELAYS with jitter), and the endpoint disabled once the last
 * attempt of a delivery has failed (docs/webhooks.md). The dispatcher
 * (dispatcher.ts) makes a delivery's first attempt with the same request,
 * verdict and record (`requestOf`, `judgeAttempt`, EventRepository.ts `recordAttempts`).
 */
import { Effect } from "effect"
import { createHash } from "node:crypto"
import { WebhookEndpoint } from "../../domain/resources/webhooks.ts"
import { RecordRepository } from "../RecordRepository.ts"
import { inTransaction } from "../transaction.ts"
import { findRecord, type RecordOf } from "../typedRecords.ts"
import { abandonDelivery, findDelivery, findEvent, recordAttempt, signingSecrets, type StoredDelivery, type StoredEvent } from "./EventRepository.ts"
import { recordEvent } from "./outbox.ts"
import { type AttemptOutcome, type WebhookRequest, WebhookSender } from "./sender.ts"
import { recordAttemptMetrics } from "./WebhookMetrics.ts"

const SECOND = 1000
const MINUTE = 60 * SECOND
const HOUR = 60 * MINUTE

/**
 * The waits after each failed attempt: from seconds to a day, about 2.8 days
 * in all (13 attempts), then the delivery has failed. Each wait is moved by
 * up to ±20 % (JITTER), so that the retries of many deliveries failed at
 * once do not arrive together.
 */
export const RETRY_DELAYS: ReadonlyArray<number> = [
  5 * SECOND,
  30 * SECOND,
  2 * MINUTE,
  10 * MINUTE,
  30 * MINUTE,
  HOUR,
  2 * HOUR,
  4 * HOUR,
  8 * HOUR,
  12 * HOUR,
  16 * HOUR,
  24 * HOUR
]
export const MAX_ATTEMPTS = RETRY_DELAYS.length + 1
const JITTER = 0.2

/**
 * The wait after failed attempt `attempt` (1-based) of the delivery. The
 * jitter is drawn from the delivery's id and the attempt, not at random, so
 * that the workflow computes the same wait when it replays.
 */
export const retryDelay = (deliveryId: string, attempt: number): number => {
  const base = RETRY_DELAYS[Math.min(attempt, RETRY_DELAYS.length) - 1]!
  const draw = createHash("sha256").update(`${deliveryId}:${attempt}`).digest().readUInt32BE(0) / 0xffffffff
  return Math.round(base * (1 - JITTER + 2 * JITTER * draw))
}

export type AttemptVerdict = "succeeded" | "retry" | "failed" | "abandoned"

const endpointOf = (delivery: StoredDelivery) => findRecord(WebhookEndpoint, delivery.appId, delivery.endpointId)

/** The signed request of an attempt: the event as its body, every secret that signs now. */
export const requestOf = (endpoint: { readonly id: string; readonly url: string }, event: StoredEvent, secrets: ReadonlyArray<string>): WebhookRequest => ({
  endpointId: endpoint.id,
  url: endpoint.url,
  eventId: event.id,
  body: JSON.stringify(event),
  secrets
})

/** One attempt to POST the event to the endpoint, signed with the secrets that sign now. */
export const sendEvent = Effect.fnUntraced(function*(endpoint: RecordOf<typeof WebhookEndpoint>, event: StoredEvent) {
  const sender = yield* WebhookSender
  return yield* sender.send(requestOf(endpoint, event, yield* signingSecrets(endpoint.id)))
})

/**
 * What attempt `attempt` of the delivery came to: its verdict, the attempt as
 * recorded, and where the delivery stands after it (`pending` until the next
 * attempt, due after retryDelay, or final). Its metrics are recorded here.
 */
export const judgeAttempt = Effect.fnUntraced(function*(deliveryId: string, attempt: number, outcome: AttemptOutcome, eventCreatedAt: string) {
  yield* recordAttemptMetrics(outcome, eventCreatedAt)
  const { succeeded: _succeeded, ...recorded } = outcome
  const verdict: AttemptVerdict = outcome.succeeded ? "succeeded" : attempt >= MAX_ATTEMPTS ? "failed" : "retry"
  const nextAttemptAt = verdict === "retry" ? new Date(Date.now() + retryDelay(deliveryId, attempt)) : null
  return { verdict, attempt: recorded, after: { status: verdict === "retry" ? "pending" as const : verdict, nextAttemptAt } }
})

/**
 * Attempt `attempt` of the delivery: the event signed and POSTed to its
 * endpoint, the attempt recorded with where the delivery stands after it. A
 * delivery no longer pending (ended meanwhile), or whose endpoint is gone or
 * disabled, is not attempted: `abandoned`.
 */
export const attemptDelivery = Effect.fnUntraced(function*(deliveryId: string, attempt: number) {
  const delivery = yield* findDelivery(deliveryId)
  if (delivery === undefined || delivery.status !== "pending") return "abandoned"
  const endpoint = yield* endpointOf(delivery)
  const event = yield* findEvent(delivery.eventId)
  if (endpoint === undefined || endpoint.enabled === false || event === undefined) {
    yield* abandonDelivery(deliveryId)
    return "abandoned"
  }
  const judged = yield* judgeAttempt(deliveryId, attempt, yield* sendEvent(endpoint, event), event.createdAt)
  yield* recordAttempt(deliveryId, judged.attempt, judged.after)
  return judged.verdict
})

/**
 * After a delivery's last attempt failed: its endpoint is disabled, with the
 * reason, and `endpoint.disabled` is written, in one transaction. An
 * endpoint disabled already (by another delivery, or by its app) stays as it
 * is and nothing is written.
 */
export const disableEndpointAfter = Effect.fnUntraced(function*(deliveryId: string) {
  const records = yield* RecordRepository
  const delivery = yield* findDelivery(deliveryId)
  if (delivery === undefined) return
  yield* inTransaction(Effect.gen(function*() {
    const locked = yield* records.lockForRemoval(WebhookEndpoint.name, delivery.appId, delivery.endpointId)
    if (locked === undefined || locked.enabled === false) return
    const reason = `delivery ${deliveryId} of event ${delivery.eventId} failed ${MAX_ATTEMPTS} attempts over about 3 days`
    const { id: _id, createdAt: _createdAt, updatedAt: _updatedAt, ...fields } = locked
    const disabled = yield* records.replace(WebhookEndpoint.name, delivery.appId, delivery.endpointId, {
      ...fields,
      enabled: false,
      disabledReason: reason
    })
    if (disabled === undefined) return
    yield* recordEvent(delivery.appId, "endpoint.disabled", {
      object: disabled as typeof WebhookEndpoint.record.Type,
      reason
    })
  }))
})
