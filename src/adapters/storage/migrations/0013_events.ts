/**
 * Migration 0013: events and webhook deliveries (docs/webhooks.md).
 *
 * - `engine_event` is the outbox and the event feed: a row is written in the
 *   transaction of the change it announces (src/engine/events/outbox.ts).
 *   `relayed` is false until the relay (src/engine/events/relay.ts) has made
 *   its deliveries; the partial index keeps finding those rows cheap however
 *   long the feed grows. `request_id` is the call that made the change (its
 *   X-Request-Id), so an answer can name the events its call wrote.
 * - `engine_webhook_secret` holds an endpoint's signing secrets: the current
 *   one (no `expires_at`) and, for 24 h after a rotation, the one before.
 *   Signing needs the secret itself, so it is kept, never shown but on
 *   create and rotation.
 * - `engine_webhook_delivery` is one event for one endpoint: its attempts and
 *   where it stands; its workflow (src/engine/events/delivery.ts) runs the
 *   attempts. `started` is false until the relay has started that workflow.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export const events = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE engine_event (
      seq bigserial NOT NULL,
      id text PRIMARY KEY,
      app_id text NOT NULL,
      type text NOT NULL,
      created_at timestamptz NOT NULL,
      data jsonb NOT NULL,
      request_id text,
      relayed boolean NOT NULL DEFAULT false
    )`
  yield* sql`CREATE INDEX engine_event_app_created ON engine_event (app_id, created_at, id)`
  yield* sql`CREATE INDEX engine_event_unrelayed ON engine_event (seq) WHERE NOT relayed`
  yield* sql`CREATE INDEX engine_event_request ON engine_event (app_id, request_id) WHERE request_id IS NOT NULL`
  yield* sql`
    CREATE TABLE engine_webhook_secret (
      endpoint_id text NOT NULL,
      secret text NOT NULL,
      created_at timestamptz NOT NULL,
      expires_at timestamptz,
      PRIMARY KEY (endpoint_id, secret)
    )`
  yield* sql`
    CREATE TABLE engine_webhook_delivery (
      id text PRIMARY KEY,
      app_id text NOT NULL,
      endpoint_id text NOT NULL,
      event_id text NOT NULL,
      event_type text NOT NULL,
      status text NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
      attempts jsonb NOT NULL DEFAULT '[]',
      next_attempt_at timestamptz,
      started boolean NOT NULL DEFAULT false,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    )`
  yield* sql`CREATE INDEX engine_webhook_delivery_app ON engine_webhook_delivery (app_id, created_at, id)`
  yield* sql`CREATE INDEX engine_webhook_delivery_endpoint ON engine_webhook_delivery (endpoint_id, created_at)`
  yield* sql`CREATE INDEX engine_webhook_delivery_unstarted ON engine_webhook_delivery (created_at) WHERE NOT started`
})
