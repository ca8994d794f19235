/**
 * Migration 0014: a delivery's lease (docs/webhooks.md).
 *
 * - `claimed_until`: the dispatcher (src/engine/events/dispatcher.ts) that
 *   made the delivery makes its first attempt itself until then, and hands it
 *   to a workflow if it is to be retried; NULL for the deliveries the relay
 *   makes, or a redelivery. The relay starts the workflow of a delivery
 *   still pending and not started only once its lease has run out (its
 *   dispatcher's instance died).
 * - A delivery the dispatcher delivered at its first attempt never has a
 *   workflow, so it stays `started = false`: the partial index of the
 *   deliveries the relay may have to start holds the pending ones only, and
 *   stays as small as the work left.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export const webhookDeliveryLeases = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE engine_webhook_delivery ADD COLUMN claimed_until timestamptz`
  yield* sql`DROP INDEX engine_webhook_delivery_unstarted`
  yield* sql`CREATE INDEX engine_webhook_delivery_unstarted ON engine_webhook_delivery (created_at) WHERE NOT started AND status = 'pending'`
})
