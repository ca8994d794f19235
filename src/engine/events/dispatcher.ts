/**
 * The dispatcher: the fast path from a call's committed events to their
 * receivers (docs/webhooks.md). It runs in every instance that delivers (not
 * a singleton) and takes the ids of the events its own process's calls wrote
 * (its subscription to CommittedEvents.ts), in batches:
 *
 * 1. one statement fans a batch out (fanOut.ts): the events marked relayed,
 *    their deliveries made and leased to this instance for `lease`
 *    (`claimed_until`, during which no relay starts them), and what their
 *    first attempts need (endpoint URL, event, secrets) read;
 * 2. each delivery's first attempt is made at once, concurrently, with the
 *    workflow's request, verdict and metrics (attempts.ts `requestOf`,
 *    `judgeAttempt`), waiting at most SLOT_WAIT for one of its endpoint's
 *    slots; the attempts made are recorded in batches, one statement each
 *    (EventRepository.ts `recordAttempts`, the workflow's record);
 * 3. a delivery that succeeded is done: it never has a workflow. One to be
 *    retried (once its attempt is recorded), or not attempted (no slot in
 *    time, or past IN_FLIGHT), is handed to its `DeliverWebhook` workflow
 *    with the attempts it made, and marked started.
 *
 * Per event that is a share of one fan-out statement and of one record
 * statement, where a workflow per delivery took about ten commits of the
 * cluster's message storage: 500 events/s delivered rather than 230–270
 * (bench/README.md).
 *
 * Whatever it does not finish is the relay's (relay.ts): an event it did not
 * take (the hub full, its fan-out failed, its instance died first) once
 * FALLBACK_GRACE has passed, a delivery it leased and did not hand on (its
 * instance died, its storage failed) once the lease has run out. So a
 * delivery is made at least once, and twice only after a death or an attempt
 * outlasting its lease.
 */
import { Cause, Context, Duration, Effect, FiberSet, Layer, Option, PubSub, Queue, Semaphore } from "effect"
import { judgeAttempt, requestOf } from "./attempts.ts"
import { CommittedEvents } from "./CommittedEvents.ts"
import { startDeliveryWorkflows } from "./delivery.ts"
import { type AttemptRecord, recordAttempts } from "./EventRepository.ts"
import { type DeliveryMade, fanOut } from "./fanOut.ts"
import { WebhookSender } from "./sender.ts"

/**
 * A dispatcher's deliveries are its own for WEBHOOK_TIMEOUT and this margin:
 * its first attempt waits for a slot (SLOT_WAIT, 5 s) and the answer (up to
 * WEBHOOK_TIMEOUT), then is recorded and, if to be retried, handed to its
 * workflow; 15 s more cover a slow database. A lease runs out unattempted only
 * when the instance died (or its storage failed) meanwhile: the relay then
 * starts the delivery's workflow, at most this long after the event.
 */
export const LEASE_MARGIN = Duration.seconds(20)
export const leaseFor = (webhookTimeout: Duration.Duration) => Duration.sum(webhookTimeout, LEASE_MARGIN)

/** Events per fan-out statement, attempts per record statement. */
const BATCH = 500
/**
 * Statements of each kind (fan-out, record) in flight at once: while one
 * waits for the database the next batch is taken and sent, so a slow commit
 * delays its own batch only.
 */
const STATEMENTS_IN_FLIGHT = 4
/**
 * First attempts in flight (waiting for a slot or for the answer), at most;
 * past it deliveries go to their workflows. An endpoint answering 500 events/s
 * through its four slots queues a few hundred at a busy moment.
 */
const IN_FLIGHT = 2048
/** First attempts in flight to one endpoint, at most: a slow endpoint takes half of IN_FLIGHT and leaves the rest to others. */
const IN_FLIGHT_PER_ENDPOINT = IN_FLIGHT / 2
/** How long a first attempt waits for a slot of its endpoint (PER_ENDPOINT_CONCURRENCY) before its workflow takes it: well inside the lease. */
export const SLOT_WAIT = Duration.seconds(5)

export interface DispatcherOptions {
  /** How long the deliveries it makes are its own (`leaseFor(WEBHOOK_TIMEOUT)`). */
  readonly lease: Duration.Duration
}

interface HandOff {
  readonly id: string
  readonly attemptsMade: number
}

/**
 * The deliveries the dispatcher hands to their workflows. The dispatcher
 * starts without the cluster, so that a call's events take the fast path
 * while the cluster is still starting (its runner registering, its shards
 * acquired: seconds on PostgreSQL); the hand-offs wait here meanwhile.
 */
export class DispatcherHandOffs extends Context.Service<DispatcherHandOffs, Queue.Queue<HandOff>>()("mfg/engine/events/DispatcherHandOffs") {}

/**
 * Forever: a batch (`take`, of 1 to BATCH) taken as soon as one of
 * STATEMENTS_IN_FLIGHT is free, and handled in a fiber of its own.
 */
const inBatches = Effect.fnUntraced(function*<A, R>(
  take: Effect.Effect<ReadonlyArray<A>>,
  handle: (batch: ReadonlyArray<A>) => Effect.Effect<void, never, R>
) {
  const free = yield* Semaphore.make(STATEMENTS_IN_FLIGHT)
  const running = yield* FiberSet.make<void, never>()
  return yield* Effect.forever(Effect.gen(function*() {
    yield* Semaphore.take(free, 1)
    const batch = yield* take
    yield* FiberSet.run(running, handle(batch).pipe(Effect.ensuring(Semaphore.release(free, 1))))
  }))
})

/** A failure logged as what the relay does about it; an interruption (the dispatcher stopping) stays one. */
const leftToTheRelay = (message: string, fields: Readonly<Record<string, unknown>>) => (cause: Cause.Cause<unknown>) => {
  if (Cause.hasInterruptsOnly(cause)) return Effect.interrupt
  const error = Cause.squash(cause)
  return Effect.logWarning(message, { ...fields, error: error instanceof Error ? error.message : String(error) })
}

/** The dispatcher, as long as the layer lasts: it stops listening, and interrupts its attempts, when the layer closes. */
export const webhookDispatcherLayer = (options: DispatcherOptions) =>
  Layer.effect(
    DispatcherHandOffs,
    Effect.gen(function*() {
      const sender = yield* WebhookSender
      // Subscribed as the layer is built, before its loops start: ids published from now on wait for them (up to the
      // hub's capacity). Released with the layer's scope, after the loops have been interrupted.
      const committed = yield* PubSub.subscribe(yield* CommittedEvents)
      const handOffs = yield* Queue.unbounded<HandOff>()
      const made = yield* Queue.unbounded<AttemptRecord & { readonly retry: boolean }>()
      // Stopping (the loops below interrupted first), the attempts made and not yet recorded are, so that none is made again.
      yield* Effect.addFinalizer(() =>
        Effect.flatMap(Queue.clear(made), (left) => recordAttempts(left)).pipe(
          Effect.catchCause(leftToTheRelay("webhook attempts not recorded at stop; the relay starts their deliveries once their lease runs out", {}))
        )
      )
      const attempts = yield* FiberSet.make<void, never>()
      const inFlightTo = new Map<string, number>()
      let inFlight = 0

      const release = (endpointId: string) =>
        Effect.sync(() => {
          inFlight--
          const left = inFlightTo.get(endpointId)! - 1
          if (left === 0) inFlightTo.delete(endpointId)
          else inFlightTo.set(endpointId, left)
        })

      const attemptFirst = (delivery: DeliveryMade) =>
        Effect.gen(function*() {
          const sent = yield* sender.sendWithin(requestOf(delivery.endpoint, delivery.event, delivery.secrets), SLOT_WAIT)
          if (Option.isNone(sent)) return yield* Queue.offer(handOffs, { id: delivery.id, attemptsMade: 0 })
          const judged = yield* judgeAttempt(delivery.id, 1, sent.value, delivery.event.createdAt)
          yield* Queue.offer(made, { deliveryId: delivery.id, attempt: judged.attempt, after: judged.after, retry: judged.verdict === "retry" })
        }).pipe(
          Effect.catchCause(
            leftToTheRelay("a webhook's first attempt failed; the relay starts its delivery once its lease runs out", { deliveryId: delivery.id })
          ),
          Effect.asVoid,
          Effect.ensuring(release(delivery.endpoint.id))
        )

      const dispatch = Effect.fnUntraced(function*(ids: ReadonlyArray<string>) {
        const fanned = yield* fanOut({ ids }, options.lease).pipe(
          Effect.catchCause((cause) =>
            Effect.as(
              leftToTheRelay("webhook fan-out failed; the relay takes the events over shortly", { events: ids.length })(cause),
              { events: 0, deliveries: [] }
            )
          )
        )
        for (const delivery of fanned.deliveries) {
          const toEndpoint = inFlightTo.get(delivery.endpoint.id) ?? 0
          if (inFlight >= IN_FLIGHT || toEndpoint >= IN_FLIGHT_PER_ENDPOINT) {
            yield* Queue.offer(handOffs, { id: delivery.id, attemptsMade: 0 })
            continue
          }
          inFlight++
          inFlightTo.set(delivery.endpoint.id, toEndpoint + 1)
          yield* FiberSet.run(attempts, attemptFirst(delivery))
        }
      })

      /** The attempts made since the last record, in one statement; then the ones to retry handed on. */
      const record = (batch: ReadonlyArray<AttemptRecord & { readonly retry: boolean }>) =>
        recordAttempts(batch).pipe(
          Effect.andThen(Queue.offerAll(handOffs, batch.filter((one) => one.retry).map((one) => ({ id: one.deliveryId, attemptsMade: 1 })))),
          Effect.catchCause(
            leftToTheRelay("webhook attempts not recorded; the relay starts their deliveries once their lease runs out", { attempts: batch.length })
          ),
          // Taken from the queue, the batch is written even when the dispatcher is stopping.
          Effect.uninterruptible
        )

      yield* Effect.forkScoped(inBatches(Queue.takeBetween(made, 1, BATCH), record))
      yield* Effect.forkScoped(inBatches(PubSub.takeBetween(committed, 1, BATCH), dispatch))
      return handOffs
    })
  )

/** The hand-offs' workflows started, on the cluster, in batches. */
export const DispatcherHandOffsLive = Layer.effectDiscard(Effect.gen(function*() {
  const handOffs = yield* DispatcherHandOffs
  const handOff = (batch: ReadonlyArray<HandOff>) =>
    startDeliveryWorkflows(batch).pipe(
      Effect.catchCause(
        leftToTheRelay("webhook workflows not started; the relay starts them once their lease runs out", { deliveries: batch.length })
      )
    )
  yield* Effect.forkScoped(inBatches(Queue.takeBetween(handOffs, 1, BATCH), handOff))
}))
