/**
 * A webhook delivery as a durable workflow (`effect/workflow` on
 * `effect/cluster`, docs/webhooks.md): attempt, and after a failed attempt
 * sleep on a durable clock until the next, up to MAX_ATTEMPTS; once the last
 * has failed, disable the endpoint. Each attempt is an activity, so a
 * workflow taken over by another instance (its own stopped or was killed)
 * replays the attempts made and goes on from the one that was running: a
 * delivery is made at least once, and never lost.
 *
 * The workflow's id is the delivery's, so starting it twice (the relay
 * retried after a crash) runs it once.
 */
import { Effect, Schedule, Schema } from "effect"
import { Activity, DurableClock, Workflow } from "effect/workflow"
import { attemptDelivery, disableEndpointAfter, MAX_ATTEMPTS, retryDelay } from "./attempts.ts"

export const DeliverWebhook = Workflow.make("DeliverWebhook", {
  payload: { deliveryId: Schema.String },
  idempotencyKey: ({ deliveryId }) => deliveryId
})

const Verdict = Schema.Literals(["succeeded", "retry", "failed", "abandoned"])

/** Storage out for a moment (a restart, a failover) delays a step; out for longer, the workflow's run fails and is taken up again. */
const throughOutages = <A, E, R>(step: Effect.Effect<A, E, R>) =>
  step.pipe(Effect.retry({ schedule: Schedule.exponential("500 millis"), times: 6 }), Effect.orDie)

export const DeliverWebhookLive = DeliverWebhook.toLayer(Effect.fnUntraced(function*({ deliveryId }) {
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
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
