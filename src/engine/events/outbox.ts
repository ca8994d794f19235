/**
 * The outbox: an event is a row written by the step that makes its change,
 * inside that step's transaction, so a committed change always has its event
 * and a rolled-back one never does. The relay (relay.ts) turns rows into
 * deliveries once committed; GET /v1/event reads them as the feed.
 */
import { Context, Effect, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { EVENT_DATA, type EventData } from "../../domain/events/catalogue.ts"
import type { EventType } from "../../domain/events/types.ts"
import { timeOrderedUuid } from "../../domain/TimeOrderedId.ts"
import type { Step } from "../Operation.ts"

/** The request whose operation is running (Engine.run provides it): events record it, so a call can name the events it wrote. */
export const CurrentRequestId = Context.Reference<string | undefined>("mfg/engine/CurrentRequestId", { defaultValue: () => undefined })

/** Whether the running operation wrote an event (Engine.run provides one per call and reads it once the call has committed). */
export interface CallEvents {
  wrote: boolean
}
export const CurrentCallEvents = Context.Reference<CallEvents | undefined>("mfg/engine/CurrentCallEvents", { defaultValue: () => undefined })

const committedListeners = new Set<() => void>()

/** Calls `listener` whenever an operation of this process has committed events (the relay wakes on it); answers the unsubscribe. */
export const onEventsCommitted = (listener: () => void): () => void => {
  committedListeners.add(listener)
  return () => committedListeners.delete(listener)
}

/** Tells the listeners that events were committed. */
export const eventsCommitted = (): void => {
  for (const listener of committedListeners) listener()
}

/**
 * Writes the event `type` of the app with `data`. Call it inside the
 * transaction of the change (crud.ts's `transactional`, `sql.withTransaction`
 * or a record hook, which run in their write's transaction): outside one it
 * would commit on its own, and a failure after it would leave an event of a
 * change that did not happen.
 *
 * The data is encoded by the catalogue's schema of its type first, so that
 * `data.object` is the record exactly as a read of it answers: a stored
 * record keeps more than a read answers (a geometry's manufacturability
 * measurements and shape signature), which the schema leaves out, as the
 * read's own encoding does.
 */
export const recordEvent = <T extends EventType>(appId: string, type: T, data: EventData<T>): Step<string> =>
  Effect.gen(function*() {
    // Every data schema is plain JSON whose encoded form is its type's: one encoder serves them all.
    const schema = EVENT_DATA[type] as unknown as Schema.Codec<EventData<T>>
    // The engine builds the data from records its schemas hold: one that does not fit is the engine's defect.
    const encoded = yield* Effect.orDie(Schema.encodeEffect(schema)(data))
    const sql = yield* SqlClient.SqlClient
    const requestId = yield* CurrentRequestId
    const call = yield* CurrentCallEvents
    if (call !== undefined) call.wrote = true
    const id = timeOrderedUuid()
    yield* sql`
      INSERT INTO engine_event (id, app_id, type, created_at, data, request_id)
      VALUES (${id}, ${appId}, ${type}, clock_timestamp(), ${JSON.stringify(encoded)}::jsonb, ${requestId ?? null})`
    return id
  })
