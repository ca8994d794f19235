/**
 * The rows of events and webhooks (migration 0013): the event feed, the
 * endpoints' signing secrets and the deliveries, and every statement on
 * them. The endpoints themselves are records (`webhookEndpoint`,
 * src/domain/resources/webhooks.ts), which fan-out joins in its statement.
 */
import { Duration, Effect } from "effect"
import { SqlClient } from "effect/sql"
import { randomBytes } from "node:crypto"
import type { Event } from "../../domain/events/Event.ts"
import type { EventType } from "../../domain/events/types.ts"
import { appOfDataSpace, modeOfDataSpace } from "../../domain/Grants.ts"
import { rangeEnd, rangeStart } from "../../domain/Resource.ts"
import type { DeliveryAttempt, EventQuery, WebhookDelivery, WebhookDeliveryQuery } from "../../domain/resources/webhooks.ts"
import { WebhookEndpoint } from "../../domain/resources/webhooks.ts"
import { timeOrderedUuid } from "../../domain/TimeOrderedId.ts"
import type { Step } from "../Operation.ts"

/** How long a rotated-out secret still signs (docs/webhooks.md). */
export const PREVIOUS_SECRET_HOURS = 24
/** Attempts a delivery keeps (the latest). */
const KEPT_ATTEMPTS = 50

type Delivery = typeof WebhookDelivery.Type
type Attempt = typeof DeliveryAttempt.Type

/** A Standard Webhooks secret: `whsec_` and 24 random bytes in base64. */
const newSecret = () => `whsec_${randomBytes(24).toString("base64")}`

export const addSecret = (endpointId: string): Step<string> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => {
    const secret = newSecret()
    return sql`INSERT INTO engine_webhook_secret (endpoint_id, secret, created_at) VALUES (${endpointId}, ${secret}, now())`.pipe(
      Effect.as(secret)
    )
  })

/** A new current secret; the current one signs for PREVIOUS_SECRET_HOURS more, older ones go. In the caller's transaction. */
export const rotateSecret = Effect.fnUntraced(function*(endpointId: string) {
  const sql = yield* SqlClient.SqlClient
  yield* sql`DELETE FROM engine_webhook_secret WHERE endpoint_id = ${endpointId} AND expires_at IS NOT NULL`
  yield* sql`
    UPDATE engine_webhook_secret SET expires_at = now() + make_interval(hours => ${PREVIOUS_SECRET_HOURS})
    WHERE endpoint_id = ${endpointId} AND expires_at IS NULL`
  return yield* addSecret(endpointId)
})

/** The secrets that sign a delivery now: the current one first. */
export const signingSecrets = (endpointId: string): Step<ReadonlyArray<string>> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{ secret: string }>`
        SELECT secret FROM engine_webhook_secret
        WHERE endpoint_id = ${endpointId} AND (expires_at IS NULL OR expires_at > now())
        ORDER BY expires_at IS NULL DESC, created_at DESC`,
      (rows) => rows.map((row) => row.secret)
    ))

export const removeSecrets = (endpointId: string): Step<void> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => Effect.asVoid(sql`DELETE FROM engine_webhook_secret WHERE endpoint_id = ${endpointId}`))

// ---------------------------------------------------------------------------
// Events

export interface EventRow {
  readonly id: string
  readonly app_id: string
  readonly type: EventType
  readonly created_at: Date | string
  readonly data: unknown
  readonly total?: string | number
}

/** An event as written: its data is what recordEvent took for its type, so the row is the event as typed. */
export type StoredEvent = Event

const iso = (value: Date | string) => (value instanceof Date ? value : new Date(value)).toISOString()

/** The event as read and delivered: its app, and the mode of the data space it was written in. */
export const toEvent = (row: EventRow): StoredEvent =>
  ({
    id: row.id,
    type: row.type,
    createdAt: iso(row.created_at),
    appId: appOfDataSpace(row.app_id),
    mode: modeOfDataSpace(row.app_id),
    data: row.data
  }) as StoredEvent

export const findEvent = (id: string): Step<StoredEvent | undefined> =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      Effect.map(sql<EventRow>`SELECT id, app_id, type, created_at, data FROM engine_event WHERE id = ${id}`, (rows) =>
        rows[0] === undefined ? undefined : toEvent(rows[0]))
  )

/** The app's events in the order written, filtered by type and creation date. */
export const listEvents = Effect.fnUntraced(function*(appId: string, query: typeof EventQuery.Type, limit: number, offset: number) {
  const sql = yield* SqlClient.SqlClient
  const conditions = [sql`app_id = ${appId}`]
  if (query.type !== undefined) conditions.push(sql`type = ANY(${query.type}::text[])`)
  if (query.requestId !== undefined) conditions.push(sql`request_id = ${query.requestId}`)
  const on = query.createdAt
  const from = query["createdAt[from]"] ?? on
  const to = query["createdAt[to]"] ?? on
  if (from !== undefined) conditions.push(sql`created_at >= ${rangeStart(from).toISOString()}::timestamptz`)
  if (to !== undefined) conditions.push(sql`created_at <= ${rangeEnd(to).toISOString()}::timestamptz`)
  const rows = yield* sql<EventRow>`
    SELECT id, app_id, type, created_at, data, count(*) OVER () AS total FROM engine_event WHERE ${sql.and(conditions)}
    ORDER BY seq LIMIT ${limit} OFFSET ${offset}`
  if (rows.length > 0) return { items: rows.map(toEvent), total: Number(rows[0]!.total) }
  const [counted] = yield* sql<{ total: string | number }>`SELECT count(*) AS total FROM engine_event WHERE ${sql.and(conditions)}`
  return { items: [], total: Number(counted?.total ?? 0) }
})

/** Writes the event `id` (outbox.ts's recordEvent: in the transaction of its change), its data encoded already. */
export const insertEvent = Effect.fnUntraced(function*(
  event: { readonly id: string; readonly appId: string; readonly type: EventType; readonly data: unknown },
  requestId: string | undefined
) {
  const sql = yield* SqlClient.SqlClient
  const { appId, data, id, type } = event
  yield* sql`
    INSERT INTO engine_event (id, app_id, type, created_at, data, request_id)
    VALUES (${id}, ${appId}, ${type}, clock_timestamp(), ${JSON.stringify(data)}::jsonb, ${requestId ?? null})`
})

/** An event written already relayed: delivered only where its writer says (a test event). */
export const insertRelayedEvent = Effect.fnUntraced(function*(appId: string, type: EventType, data: unknown, requestId: string | undefined) {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<EventRow>`
    INSERT INTO engine_event (id, app_id, type, created_at, data, request_id, relayed)
    VALUES (${timeOrderedUuid()}, ${appId}, ${type}, clock_timestamp(), ${JSON.stringify(data)}::jsonb, ${requestId ?? null}, true)
    RETURNING id, app_id, type, created_at, data`
  return toEvent(rows[0]!)
})

// ---------------------------------------------------------------------------
// Deliveries

interface DeliveryRow {
  readonly id: string
  readonly app_id: string
  readonly endpoint_id: string
  readonly event_id: string
  readonly event_type: EventType
  readonly status: Delivery["status"]
  readonly attempts: ReadonlyArray<Attempt>
  readonly next_attempt_at: Date | string | null
  readonly created_at: Date | string
  readonly updated_at: Date | string
  readonly total?: string | number
}

export interface StoredDelivery extends Delivery {
  readonly appId: string
}

const toDelivery = (row: DeliveryRow): StoredDelivery => ({
  id: row.id,
  appId: row.app_id,
  endpointId: row.endpoint_id,
  eventId: row.event_id,
  eventType: row.event_type,
  status: row.status,
  attempts: row.attempts,
  nextAttemptAt: row.next_attempt_at === null ? null : iso(row.next_attempt_at),
  createdAt: iso(row.created_at),
  updatedAt: iso(row.updated_at)
})

/** The delivery as the API answers it (no app id). */
export const asDelivery = ({ appId: _appId, ...delivery }: StoredDelivery): Delivery => delivery

const DELIVERY_COLUMNS = "id, app_id, endpoint_id, event_id, event_type, status, attempts, next_attempt_at, created_at, updated_at"

/** A new delivery of the event to the endpoint; `started` when its writer runs it itself (a test). */
export const insertDelivery = (
  delivery: { readonly appId: string; readonly endpointId: string; readonly eventId: string; readonly eventType: EventType },
  started = false
): Step<StoredDelivery> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<DeliveryRow>`
        INSERT INTO engine_webhook_delivery (id, app_id, endpoint_id, event_id, event_type, status, next_attempt_at, started, created_at, updated_at)
        VALUES (${timeOrderedUuid()}, ${delivery.appId}, ${delivery.endpointId}, ${delivery.eventId}, ${delivery.eventType}, 'pending',
          now(), ${started}, now(), now())
        RETURNING ${sql.literal(DELIVERY_COLUMNS)}`,
      (rows) => toDelivery(rows[0]!)
    ))

export const findDelivery = (id: string, appId?: string): Step<StoredDelivery | undefined> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<DeliveryRow>`
        SELECT ${sql.literal(DELIVERY_COLUMNS)} FROM engine_webhook_delivery
        WHERE id = ${id} ${appId === undefined ? sql`` : sql`AND app_id = ${appId}`}`,
      (rows) => rows[0] === undefined ? undefined : toDelivery(rows[0])
    ))

export const listDeliveries = Effect.fnUntraced(function*(appId: string, query: typeof WebhookDeliveryQuery.Type, limit: number, offset: number) {
  const sql = yield* SqlClient.SqlClient
  const conditions = [sql`app_id = ${appId}`]
  if (query.endpointId !== undefined) conditions.push(sql`endpoint_id = ${query.endpointId}`)
  if (query.eventId !== undefined) conditions.push(sql`event_id = ${query.eventId}`)
  if (query.status !== undefined) conditions.push(sql`status = ${query.status}`)
  for (const field of ["createdAt", "updatedAt"] as const) {
    const column = field === "createdAt" ? "created_at" : "updated_at"
    const on = query[field]
    const from = query[`${field}[from]`] ?? on
    const to = query[`${field}[to]`] ?? on
    if (from !== undefined) conditions.push(sql`${sql.literal(column)} >= ${rangeStart(from).toISOString()}::timestamptz`)
    if (to !== undefined) conditions.push(sql`${sql.literal(column)} <= ${rangeEnd(to).toISOString()}::timestamptz`)
  }
  const rows = yield* sql<DeliveryRow>`
    SELECT ${sql.literal(DELIVERY_COLUMNS)}, count(*) OVER () AS total FROM engine_webhook_delivery WHERE ${sql.and(conditions)}
    ORDER BY created_at, id LIMIT ${limit} OFFSET ${offset}`
  if (rows.length > 0) return { items: rows.map((row) => asDelivery(toDelivery(row))), total: Number(rows[0]!.total) }
  const [counted] = yield* sql<{ total: string | number }>`SELECT count(*) AS total FROM engine_webhook_delivery WHERE ${sql.and(conditions)}`
  return { items: [], total: Number(counted?.total ?? 0) }
})

/** An attempt to record, and where its delivery stands after it. */
export interface AttemptRecord {
  readonly deliveryId: string
  readonly attempt: Attempt
  readonly after: { readonly status: Delivery["status"]; readonly nextAttemptAt: Date | null }
}

/**
 * Records attempts and where each delivery stands after its own, in one
 * statement. Every attempt made is recorded (one repeated after a takeover
 * too); only a pending delivery changes its state (one ended meanwhile, its
 * endpoint removed, stays as it is). One attempt per delivery.
 */
export const recordAttempts = (records: ReadonlyArray<AttemptRecord>): Step<void> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => {
    if (records.length === 0) return Effect.void
    const rows = records.map(({ after, attempt, deliveryId }) => ({
      id: deliveryId,
      attempt,
      status: after.status,
      next_attempt_at: after.nextAttemptAt === null ? null : after.nextAttemptAt.toISOString()
    }))
    return Effect.asVoid(sql`
      UPDATE engine_webhook_delivery AS delivery SET
        attempts = CASE WHEN jsonb_array_length(delivery.attempts) >= ${KEPT_ATTEMPTS}
          THEN (delivery.attempts - 0) || jsonb_build_array(recorded.attempt)
          ELSE delivery.attempts || jsonb_build_array(recorded.attempt) END,
        status = CASE WHEN delivery.status = 'pending' THEN recorded.status ELSE delivery.status END,
        next_attempt_at = CASE WHEN delivery.status = 'pending' THEN recorded.next_attempt_at ELSE delivery.next_attempt_at END,
        updated_at = now()
      FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS recorded(id text, attempt jsonb, status text, next_attempt_at timestamptz)
      WHERE delivery.id = recorded.id`)
  })

/** Records one attempt (recordAttempts). */
export const recordAttempt = (id: string, attempt: Attempt, after: AttemptRecord["after"]): Step<void> => recordAttempts([{ deliveryId: id, attempt, after }])

/** Ends a pending delivery without an attempt (its endpoint was disabled or removed). */
export const abandonDelivery = (id: string): Step<void> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.asVoid(sql`
      UPDATE engine_webhook_delivery SET status = 'failed', next_attempt_at = NULL, updated_at = now()
      WHERE id = ${id} AND status = 'pending'`))

/** Ends every pending delivery to the endpoint (it is being removed). In the caller's transaction. */
export const abandonDeliveriesTo = (endpointId: string): Step<void> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.asVoid(sql`
      UPDATE engine_webhook_delivery SET status = 'failed', next_attempt_at = NULL, updated_at = now()
      WHERE endpoint_id = ${endpointId} AND status = 'pending'`))

/** Marks the deliveries started (their workflows are). */
export const markStarted = (ids: ReadonlyArray<string>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => Effect.asVoid(sql`UPDATE engine_webhook_delivery SET started = true WHERE id = ANY(${ids}::text[])`))

// ---------------------------------------------------------------------------
// Relay and fan-out

const durationSeconds = (duration: Duration.Duration) => Duration.toMillis(duration) / 1000

/**
 * Whether an event waits that was not relayed within `grace`: a look through
 * the partial index, so an idle relay writes nothing. Its order is the
 * index's, so no plan reads the table instead: without it, the plan
 * PostgreSQL settles on while the table is small scans it whole, however
 * many events it has come to hold.
 */
export const eventsWaiting = (grace: Duration.Duration) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql`
        SELECT 1 FROM engine_event WHERE NOT relayed AND created_at < now() - make_interval(secs => ${Duration.toMillis(grace) / 1000})
        ORDER BY seq LIMIT 1`,
      (rows) => rows.length > 0
    ))

/** Up to `limit` pending deliveries neither started nor leased, oldest first, with the attempts each has made. */
export const deliveriesToStart = (limit: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ id: string; attemptsMade: number }>`
      SELECT id, jsonb_array_length(attempts) AS "attemptsMade" FROM engine_webhook_delivery
      WHERE NOT started AND status = 'pending' AND (claimed_until IS NULL OR claimed_until < now())
      ORDER BY created_at LIMIT ${limit}`)

/** Which events to fan out: these (a call's, once committed), or the oldest not relayed for `olderThan`. */
export type EventsToFanOut =
  | { readonly ids: ReadonlyArray<string> }
  | { readonly olderThan: Duration.Duration; readonly limit: number }

/** One row per delivery made; without any, one row of nulls but `events`. */
export interface FanOutRow extends EventRow {
  readonly events: number
  readonly delivery_id: string | null
  readonly endpoint_id: string
  readonly url: string
  readonly secrets: ReadonlyArray<string>
}

/**
 * The events claimed (marked relayed), their deliveries made, one per
 * enabled endpoint of the event's app subscribed to its type, in one
 * statement (fanOut.ts); `leasedFor` gives the deliveries their lease
 * (`claimed_until`). The rows carry the endpoint's URL and the secrets that
 * sign now, read as signingSecrets reads them.
 */
export const claimAndFanOut = Effect.fnUntraced(function*(events: EventsToFanOut, leasedFor: Duration.Duration | undefined) {
  const sql = yield* SqlClient.SqlClient
  const which = "ids" in events
    ? sql`id = ANY(${events.ids}::text[])`
    : sql`created_at < now() - make_interval(secs => ${durationSeconds(events.olderThan)})`
  const limit = "ids" in events ? events.ids.length : events.limit
  const claimedUntil = leasedFor === undefined ? sql`NULL::timestamptz` : sql`now() + make_interval(secs => ${durationSeconds(leasedFor)})`
  return yield* sql<FanOutRow>`
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
})
