/**
 * The outbox: an event is a row written by the step that makes its change,
 * inside that step's transaction, so a committed change always has its event
 * and a rolled-back one never does. Once the call has committed, the engine
 * publishes the ids of the events it wrote (CommittedEvents.ts) to this
 * process's dispatcher (dispatcher.ts), which makes their deliveries and
 * first attempts at once; the relay (relay.ts) catches up on any it did not
 * take. GET /v1/event reads the rows as the feed.
 */
import { Context, Effect, Schema } from "effect"
import { EVENT_DATA, type EventData } from "../../domain/events/catalogue.ts"
import type { EventType } from "../../domain/events/types.ts"
import { timeOrderedUuid } from "../../domain/TimeOrderedId.ts"
import { insertEvent } from "./EventRepository.ts"

/** The ids of the events the running operation wrote (Engine.run provides one per call and reads it once the call has ended). */
export interface CallEvents {
  readonly ids: Array<string>
}

/**
 * The call whose operation is running (Engine.run provides it): its request,
 * which events record so that a call can name the events it wrote, and the
 * ids of the events written so far. One service, so that a call adds one
 * entry to its context rather than two.
 */
export interface OperationCall {
  readonly requestId: string
  readonly events: CallEvents
}
export const CurrentCall = Context.Reference<OperationCall | undefined>("mfg/engine/CurrentCall", { defaultValue: () => undefined })

/**
 * Writes the event `type` of the app with `data`. Call it inside the
 * transaction of the change (crud.ts's `transactional`, `inTransaction`
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
export const recordEvent = Effect.fnUntraced(function*<T extends EventType>(appId: string, type: T, data: EventData<T>) {
  // The engine builds the data from records its schemas hold: one that does not fit is the engine's defect.
  const encoded = yield* Effect.orDie(Schema.encodeUnknownEffect(EVENT_DATA[type])(data))
  const call = yield* CurrentCall
  const id = timeOrderedUuid()
  yield* insertEvent({ id, appId, type, data: encoded }, call?.requestId)
  call?.events.ids.push(id)
  return id
})
