/**
 * An event as GET /v1/event answers it and a webhook delivery's body carries
 * it: one schema per type (each a component of the OpenAPI document), the
 * union of them all.
 */
import { Schema } from "effect"
import { Mode } from "../Grants.ts"
import { EVENT_DATA } from "./catalogue.ts"
import { EVENT_TYPES, type EventType } from "./types.ts"

const envelope = <T extends EventType>(type: T) =>
  Schema.Struct({
    id: Schema.String.annotate({ description: "The event's id: the same in every delivery of it (`webhook-id`), for deduplication" }),
    type: Schema.Literal(type),
    createdAt: Schema.String.annotate({ format: "date-time", description: "When the change was committed" }),
    appId: Schema.String,
    mode: Mode.annotate({
      description: "`test` for a change of the app's test data (made with a test-mode secret, delivered only to endpoints created " +
        "in test mode), `live` otherwise"
    }),
    data: EVENT_DATA[type] as (typeof EVENT_DATA)[T]
  }).annotate({ identifier: `Event.${type}`, title: `Event ${type}` })

const members = EVENT_TYPES.map(envelope)

export const Event = Schema.Union(members).annotate({
  identifier: "Event",
  description: "A change the engine made, by `type`; `data.object` is the changed record as read"
})
export type Event = typeof Event.Type
