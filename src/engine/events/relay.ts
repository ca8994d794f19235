/**
 * The relay: the fallback from committed events to running deliveries
 * (docs/webhooks.md). The dispatcher (dispatcher.ts) fans out, and attempts
 * first, the events its own process's calls wrote, within milliseconds; the
 * relay takes whatever it did not:
 *
 * 1. events not relayed FALLBACK_GRACE after they were written (written
 *    outside a call: quote expiry, `endpoint.disabled`; or by an instance that
 *    died, or whose dispatcher was full or down, before fanning them out),
 *    fanned out as the dispatcher does (fanOut.ts) but without a lease;
 * 2. deliveries pending, not started and not leased (made by the relay or a
 *    redelivery, or leased by a dispatcher that did not hand them on within
 *    the lease: its instance died), whose workflow it starts after the
 *    attempts they have made already, and marks them started. The
 *    workflow's id is the delivery's, so a start repeated after a crash runs
 *    the delivery once.
 *
 * It runs as a cluster singleton (one instance at a time among those sharing
 * the database; another takes it over when that one stops or dies) and
 * looks every POLL_INTERVAL when a round found nothing to do. Beside it,
 * every EXPIRY_INTERVAL, the quotes whose validity has passed are stored
 * `expired` with their events (src/engine/orders/quoteExpiry.ts): a change
 * made by time rather than by a call, which one instance makes.
 */
import { Duration, Effect, Schedule } from "effect"
import { Singleton } from "effect/cluster"
import type { SqlClient } from "effect/sql"
import type { WorkflowEngine } from "effect/workflow"
import { traced } from "../../domain/Span.ts"
import { expireQuotes } from "../orders/quoteExpiry.ts"
import { MAX_ATTEMPTS } from "./attempts.ts"
import { startDeliveryWorkflows } from "./delivery.ts"
import { deliveriesToStart, eventsWaiting } from "./EventRepository.ts"
import { fanOut } from "./fanOut.ts"

/** How often an idle relay looks for events and deliveries left to it. */
export const POLL_INTERVAL = Duration.millis(250)
/**
 * How long an event may wait for the dispatcher of the instance that wrote
 * it before the relay fans it out: the dispatcher takes a call's events
 * within milliseconds of its commit, so an event older than this was missed.
 */
export const FALLBACK_GRACE = Duration.seconds(2)
/** How often quotes past their validity are moved to expired: their event's delay at most. */
export const EXPIRY_INTERVAL = Duration.minutes(1)
/** Events, and deliveries, per round. */
const BATCH = 500

/**
 * A look that usually finds nothing: no span, so that an idle instance
 * exports none (the relay looks 4 times a second). What a look finds is
 * worked on in a span of its own, a root whose SQL is under it.
 */
const untraced = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.withTracerEnabled(effect, false)

/** Step 1: the oldest events not relayed within FALLBACK_GRACE become deliveries; how many events. */
export const relayEvents = Effect.gen(function*() {
  // Most rounds find nothing: a look through the partial index first, so an idle relay writes nothing.
  if (!(yield* untraced(eventsWaiting(FALLBACK_GRACE)))) return 0
  return (yield* fanOut({ olderThan: FALLBACK_GRACE, limit: BATCH }, undefined).pipe(traced("webhook relay events"))).events
})

/** Step 2: the workflows of the pending deliveries neither started nor leased; how many. */
export const startDeliveries = Effect.gen(function*() {
  const deliveries = yield* untraced(deliveriesToStart(BATCH))
  if (deliveries.length === 0) return 0
  // At least one attempt left to make: more recorded than MAX_ATTEMPTS - 1 only when some were repeated after a takeover.
  yield* startDeliveryWorkflows(deliveries.map(({ attemptsMade, id }) => ({ id, attemptsMade: Math.min(attemptsMade, MAX_ATTEMPTS - 1) })))
    .pipe(traced("webhook relay deliveries", { attributes: { "webhook.deliveries": deliveries.length } }))
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

const relayLoop = Effect.forever(Effect.flatMap(round, (done) => done === 0 ? Effect.sleep(POLL_INTERVAL) : Effect.void))

/** The sweep is background polling too: no span; the quotes it expires are logged. */
const expiryLoop = Effect.forever(
  untraced(expireQuotes).pipe(
    Effect.tap((moved) => moved === 0 ? Effect.void : Effect.logInfo("quotes expired", { quotes: moved })),
    Effect.catch((error) => Effect.logWarning("quote expiry sweep failed; next sweep in a minute", { error: String(error) })),
    Effect.andThen(Effect.sleep(EXPIRY_INTERVAL))
  )
)

/** The relay, and the expiry sweep, as the cluster's singleton. */
export const WebhookRelayLive = Singleton.make("event-relay", Effect.all([relayLoop, expiryLoop], { concurrency: 2, discard: true }))
