/**
 * A webhook delivery as a durable workflow (`effect/workflow` on
 * `effect/cluster`, docs/webhooks.md): attempt, and after a failed attempt
 * sleep on a durable clock until the next, up to MAX_ATTEMPTS; once the last
 * has failed, disable the endpoint. Each attempt is an activity, so a
 * workflow taken over by another instance (its own stopped or was killed)
 * replays the attempts made and goes on from the one that was running: a
 * delivery is made at least once, and never lost.
 *
 * A delivery whose first attempt the dispatcher made (dispatcher.ts) and
 * that is to be retried is started with `attemptsMade`: the workflow then
 * first waits the delay after that attempt and goes on from the next one.
 * Workflows stored before the field existed have none: 0.
 *
 * The workflow's id is the delivery's, so starting it twice (the relay
 * retried after a crash, or took over a delivery whose lease ran out) runs
 * it once.
 */
import { Effect, Schedule, Schema } from "effect"
import { Activity, DurableClock, Workflow } from "effect/workflow"
import { attemptDelivery, disableEndpointAfter, MAX_ATTEMPTS, retryDelay } from "./attempts.ts"
import { markStarted } from "./EventRepository.ts"

export const DeliverWebhook = Workflow.make("DeliverWebhook", {
  payload: { deliveryId: Schema.String, attemptsMade: Schema.optionalKey(Schema.Int) },
  idempotencyKey: ({ deliveryId }) => deliveryId
})

const Verdict = Schema.Literals(["succeeded", "retry", "failed", "abandoned"])

/** Storage out for a moment (a restart, a failover) delays a step; out for longer, the workflow's run fails and is taken up again. */
const throughOutages = <A, E, R>(step: Effect.Effect<A, E, R>) =>
  step.pipe(Effect.retry({ schedule: Schedule.exponential("500 millis"), times: 6 }), Effect.orDie)

export const DeliverWebhookLive = DeliverWebhook.toLayer(Effect.fnUntraced(function*({ attemptsMade = 0, deliveryId }) {
  if (attemptsMade > 0) {
    yield* DurableClock.sleep({ name: `wait after attempt ${attemptsMade}`, duration: retryDelay(deliveryId, attemptsMade) })
  }
  for (let attempt = attemptsMade + 1; attempt <= MAX_ATTEMPTS; attempt++) {
    const verdict = yield* Activity.make({
      name: `attempt ${attempt}`,
      success: Verdict,
      execute: throughOutages(attemptDelivery(deliveryId, attempt))
    })
    if (verdict === "succeeded" || verdict === "abandoned") return
    if (verdict === "failed") break
    yield* DurableClock.sleep({ name: `wait after attempt ${attempt}`, duration: retryDelay(deliveryId, attempt) })
  }
  yield* Activity.make({ name: "disable endpoint", execute: throughOutages(disableEndpointAfter(deliveryId)) })
}))

/** Workflows started at once, at most: each start is a round trip to the cluster's message storage. */
const START_CONCURRENCY = 32

/**
 * Starts the deliveries' workflows, each after the attempts it has made
 * already, and marks the deliveries started. A crash between the two starts
 * a workflow again, which its id makes a no-op.
 */
export const startDeliveryWorkflows = Effect.fnUntraced(function*(deliveries: ReadonlyArray<{ readonly id: string; readonly attemptsMade: number }>) {
  if (deliveries.length === 0) return
  yield* Effect.forEach(
    deliveries,
    ({ attemptsMade, id }) => DeliverWebhook.execute({ deliveryId: id, ...(attemptsMade === 0 ? {} : { attemptsMade }) }, { discard: true }),
    { concurrency: START_CONCURRENCY, discard: true }
  )
  yield* markStarted(deliveries.map(({ id }) => id))
})
