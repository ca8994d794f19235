/**
 * Fan-out: committed events become their deliveries, one per enabled
 * endpoint of the event's app subscribed to its type, and are marked
 * relayed, in one statement (one transaction). The dispatcher (dispatcher.ts)
 * fans out the events its process's calls wrote; the relay (relay.ts) those
 * left over. Each takes only rows not relayed and not locked by the other
 * (`FOR UPDATE SKIP LOCKED`, the mark in the same statement), so an event
 * is fanned out once: one delivery per event and endpoint.
 */
import { type Duration, Effect } from "effect"
import { claimAndFanOut, type EventsToFanOut, type StoredEvent, toEvent } from "./EventRepository.ts"

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

/**
 * Fans the events out; `leasedFor` gives the deliveries a lease
 * (`claimed_until`) during which their maker makes their first attempt
 * itself and no relay starts them; without one the relay starts them. The
 * answer carries what the first attempts need, read in the same statement,
 * so that they read nothing more: the endpoints enabled and subscribed as
 * the statement saw them, and the secrets that sign as signingSecrets
 * (EventRepository.ts) reads them.
 */
export const fanOut = Effect.fnUntraced(function*(
  events: EventsToFanOut,
  leasedFor: Duration.Duration | undefined
) {
  const rows = yield* claimAndFanOut(events, leasedFor)
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
