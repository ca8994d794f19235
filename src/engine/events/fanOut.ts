/**
 * Fan-out: committed events become their deliveries, one per enabled
 * endpoint of the event's app subscribed to its type, and are marked
 * relayed, in one statement (one transaction). The dispatcher (dispatcher.ts)
 * fans out the events its process's calls wrote; the relay (relay.ts) those
 * left over. Each takes only rows not relayed and not locked by the other
 * (`FOR UPDATE SKIP LOCKED`, the mark in the same statement), so an event
 * is fanned out once: one delivery per event and endpoint.
 */
import { Duration, Effect } from "effect"
import { SqlClient } from "effect/sql"
import { WebhookEndpoint } from "../../domain/resources/webhooks.ts"
import { type EventRow, type StoredEvent, toEvent } from "./store.ts"

/** Which events to fan out: these (a call's, once committed), or the oldest not relayed for `olderThan`. */
export type EventsToFanOut =
  | { readonly ids: ReadonlyArray<string> }
  | { readonly olderThan: Duration.Duration; readonly limit: number }

/** A delivery made, with what its first attempt needs: the endpoint's URL, the event, the secrets that sign now. */
export interface DeliveryMade {
  readonly id: string
  readonly endpoint: { readonly id: string; readonly url: string }
  readonly event: StoredEvent
  readonly secrets: ReadonlyArray<string>
}

export interface FannedOut {
  /** Events fanned out (some may have had no endpoint to deliver to). */
  readonly events: number
  readonly deliveries: ReadonlyArray<DeliveryMade>
}

/** One row per delivery made; without any, one row of nulls but `events`. */
interface FanOutRow extends EventRow {
  readonly events: number
  readonly delivery_id: string | null
  readonly endpoint_id: string
  readonly url: string
  readonly secrets: ReadonlyArray<string>
}

/**
 * Fans the events out; `leasedFor` gives the deliveries a lease
 * (`claimed_until`) during which their maker makes their first attempt
 * itself and no relay starts them; without one the relay starts them. The
 * answer carries what the first attempts need, read in the same statement,
 * so that they read nothing more: the endpoints enabled and subscribed as
 * the statement saw them, and the secrets that sign as signingSecrets
 * (store.ts) reads them.
 */
export const fanOut = Effect.fnUntraced(function*(
  events: EventsToFanOut,
  leasedFor: Duration.Duration | undefined
) {
  const sql = yield* SqlClient.SqlClient
  const which = "ids" in events
    ? sql`id = ANY(${events.ids}::text[])`
    : sql`created_at < now() - make_interval(secs => ${durationSeconds(events.olderThan)})`
  const limit = "ids" in events ? events.ids.length : events.limit
  const claimedUntil = leasedFor === undefined ? sql`NULL::timestamptz` : sql`now() + make_interval(secs => ${durationSeconds(leasedFor)})`
  const rows = yield* sql<FanOutRow>`
    WITH claimed AS (
      UPDATE engine_event SET relayed = true
      WHERE id IN (SELECT id FROM engine_event WHERE NOT relayed AND ${which} ORDER BY seq LIMIT ${limit} FOR UPDATE SKIP LOCKED)
      RETURNING id, app_id, type, created_at, data, seq
    ), subscribed AS (
      SELECT claimed.*, endpoint.id AS endpoint_id, endpoint.data->>'url' AS url
      FROM claimed
      JOIN engine_record endpoint ON endpoint.resource = ${WebhookEndpoint.name} AND endpoint.app_id = claimed.app_id
      WHERE coalesce((endpoint.data->>'enabled')::boolean, true)
        AND (endpoint.data->'events' ? claimed.type OR endpoint.data->'events' ? '*')
    ), made AS (
      INSERT INTO engine_webhook_delivery
        (id, app_id, endpoint_id, event_id, event_type, status, next_attempt_at, claimed_until, created_at, updated_at)
      SELECT gen_random_uuid()::text, app_id, endpoint_id, id, type, 'pending', now(), ${claimedUntil}, now(), now()
      FROM subscribed
      ORDER BY seq
      RETURNING id, endpoint_id, event_id
    )
    SELECT counted.events, made.id AS delivery_id, made.endpoint_id, subscribed.url,
      subscribed.id, subscribed.app_id, subscribed.type, subscribed.created_at, subscribed.data,
      ARRAY(
        SELECT secret FROM engine_webhook_secret
        WHERE endpoint_id = made.endpoint_id AND (expires_at IS NULL OR expires_at > now())
        ORDER BY expires_at IS NULL DESC, created_at DESC
      ) AS secrets
    FROM (SELECT count(*)::int AS events FROM claimed) counted
    LEFT JOIN made ON true
    LEFT JOIN subscribed ON subscribed.id = made.event_id AND subscribed.endpoint_id = made.endpoint_id
    ORDER BY subscribed.seq`
  return {
    events: rows[0]?.events ?? 0,
    deliveries: rows.flatMap((row) =>
      row.delivery_id === null ? [] : [{
        id: row.delivery_id,
        endpoint: { id: row.endpoint_id, url: row.url },
        event: toEvent(row),
        secrets: row.secrets
      }]
    )
  }
})

const durationSeconds = (duration: Duration.Duration) => Duration.toMillis(duration) / 1000
