/**
 * How the engine's workflows write an event: its data encoded by the
 * catalogue's schema of its type first, so that `data.object` is the record
 * exactly as a read of it answers. A stored record keeps more than a read
 * answers (a geometry's manufacturability measurements and shape
 * signature), which the schema leaves out, as the read's own encoding does.
 */
import { Effect, Schema } from "effect"
import { EVENT_DATA, type EventData } from "../../domain/events/catalogue.ts"
import type { EventType } from "../../domain/events/types.ts"
import { recordEvent } from "../events/outbox.ts"
import type { Step } from "../Operation.ts"

/** Writes the event `type` of the app, with `data` as the catalogue says it, in the caller's transaction (outbox.ts). */
export const announce = <T extends EventType>(appId: string, type: T, data: EventData<T>): Step<void> => {
  // Every data schema is plain JSON whose encoded form is its type's: one encoder serves them all.
  const schema = EVENT_DATA[type] as unknown as Schema.Codec<EventData<T>>
  return Schema.encodeEffect(schema)(data).pipe(
    // The engine builds the data from records its schemas hold: one that does not fit is the engine's defect.
    Effect.orDie,
    Effect.flatMap((encoded) => recordEvent(appId, type, encoded)),
    Effect.asVoid
  )
}
