/**
 * The relay: from committed events to running deliveries (docs/webhooks.md).
 *
 * It runs as a cluster singleton (one instance at a time among those sharing
 * the database; another takes it over when that one stops or dies) and, in
 * a loop:
 *
 * 1. takes the events not yet relayed, oldest first, and in one transaction
 *    makes a delivery for each enabled endpoint of the event's app that
 *    subscribes to its type, and marks the events relayed;
 * 2. starts the delivery workflow of each delivery not yet started and marks
 *    it started. The workflow's id is the delivery's, so a start repeated
 *    after a crash between the two runs the delivery once.
 *
 * It waits POLL_INTERVAL only when a round found nothing to do. Beside it,
 * every EXPIRY_INTERVAL, the quotes whose validity has passed are stored
 * `expired` with their events (src/engine/orders/quoteExpiry.ts): a change
 * made by time rather than by a call, which one instance makes.
 */
import { Duration, Effect, Schedule } from "effect"
import { Singleton } from "effect/cluster"
import { SqlClient } from "effect/sql"
import type { WorkflowEngine } from "effect/workflow"
import { WebhookEndpoint } from "../../domain/resources/webhooks.ts"
import { expireQuotes } from "../orders/quoteExpiry.ts"
import { DeliverWebhook } from "./delivery.ts"
import { onEventsCommitted } from "./outbox.ts"

/**
 * How often an idle relay looks for new events. An operation of this
 * instance that commits events wakes it at once (outbox.ts
 * `eventsCommitted`); events of another instance sharing the database wait
 * for the next look.
 */
export const POLL_INTERVAL = Duration.millis(250)
/** How often quotes past their validity are moved to expired: their event's delay at most. */
export const EXPIRY_INTERVAL = Duration.minutes(1)
/** Events, and deliveries, per round. */
const BATCH = 500

/** Step 1: the oldest events not relayed yet become deliveries; how many events. */
export const relayEvents = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // Most rounds find nothing: a look through the partial index first, so an idle relay opens no transaction.
  const waiting = yield* sql`SELECT 1 FROM engine_event WHERE NOT relayed LIMIT 1`
  if (waiting.length === 0) return 0
  return yield* sql.withTransaction(Effect.gen(function*() {
    const events = yield* sql<{ id: string }>`
      SELECT id FROM engine_event WHERE NOT relayed ORDER BY seq LIMIT ${BATCH} FOR UPDATE SKIP LOCKED`
    if (events.length === 0) return 0
    const ids = events.map((event) => event.id)
    yield* sql`
      INSERT INTO engine_webhook_delivery (id, app_id, endpoint_id, event_id, event_type, status, next_attempt_at, created_at, updated_at)
      SELECT gen_random_uuid()::text, event.app_id, endpoint.id, event.id, event.type, 'pending', now(), now(), now()
      FROM engine_event event
      JOIN engine_record endpoint ON endpoint.resource = ${WebhookEndpoint.name} AND endpoint.app_id = event.app_id
      WHERE event.id = ANY(${ids}::text[])
        AND coalesce((endpoint.data->>'enabled')::boolean, true)
        AND (endpoint.data->'events' ? event.type OR endpoint.data->'events' ? '*')
      ORDER BY event.seq`
    yield* sql`UPDATE engine_event SET relayed = true WHERE id = ANY(${ids}::text[])`
    return events.length
  }))
})

/** Step 2: the workflows of the deliveries not started yet; how many. */
export const startDeliveries = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const deliveries = yield* sql<{ id: string }>`
    SELECT id FROM engine_webhook_delivery WHERE NOT started ORDER BY created_at LIMIT ${BATCH}`
  if (deliveries.length === 0) return 0
  yield* Effect.forEach(deliveries, ({ id }) => DeliverWebhook.execute({ deliveryId: id }, { discard: true }), {
    concurrency: 32,
    discard: true
  })
  yield* sql`UPDATE engine_webhook_delivery SET started = true WHERE id = ANY(${deliveries.map(({ id }) => id)}::text[])`
  return deliveries.length
})

/** One round; a failure (storage down) is logged and the round retried after a pause. */
const round: Effect.Effect<number, never, SqlClient.SqlClient | WorkflowEngine.WorkflowEngine> = Effect.gen(function*() {
  const relayed = yield* relayEvents
  const started = yield* startDeliveries
  return relayed + started
}).pipe(
  Effect.tapError((error) => Effect.logWarning("webhook relay round failed; retrying", { error: String(error) })),
  Effect.retry(Schedule.spaced("1 second")),
  Effect.orDie
)

/** POLL_INTERVAL, or less if this instance commits events meanwhile. */
const idle = Effect.callback<void>((resume) => {
  const stop = () => {
    clearTimeout(timer)
    unsubscribe()
  }
  const timer = setTimeout(() => {
    stop()
    resume(Effect.void)
  }, Duration.toMillis(POLL_INTERVAL))
  const unsubscribe = onEventsCommitted(() => {
    stop()
    resume(Effect.void)
  })
  // Interrupted (the singleton moves, the service stops): neither is left behind.
  return Effect.sync(stop)
})

const relayLoop = Effect.forever(Effect.flatMap(round, (done) => done === 0 ? idle : Effect.void))

const expiryLoop = Effect.forever(
  expireQuotes.pipe(
    Effect.tap((moved) => moved === 0 ? Effect.void : Effect.logInfo("quotes expired", { quotes: moved })),
    Effect.catch((error) => Effect.logWarning("quote expiry sweep failed; next sweep in a minute", { error: String(error) })),
    Effect.andThen(Effect.sleep(EXPIRY_INTERVAL))
  )
)

/** The relay, and the expiry sweep, as the cluster's singleton. */
export const WebhookRelayLive = Singleton.make("event-relay", Effect.all([relayLoop, expiryLoop], { concurrency: 2, discard: true }))
