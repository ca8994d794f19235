/**
 * A quote's state as read. A `sent` quote whose `validUntil` has passed is
 * `expired`: nothing runs at the moment it expires, so storage keeps `sent`
 * and every read and every move looks at the state as of now. Every state
 * but `sent` is final; the engine closes a ticket's open quotes when a newer
 * quote or a change of the ticket supersedes them, or the ticket is
 * cancelled (withdrawn).
 */
import { Effect } from "effect"
import { TicketQuote } from "../../domain/resources/orders.ts"
import { listRecords, type RecordOf } from "../crud.ts"
import type { OperationContext, Step } from "../Operation.ts"
import { replaceLocked } from "../writes.ts"

export type Quote = RecordOf<typeof TicketQuote>
export type QuoteStateName = Quote["state"]

/** How messages name a quote: its number (Q-000042). */
export const quoteLabel = (quote: Quote) => `quote ${quote.number}`

/** The quote's state at `now` (ms): a sent quote past its validity is expired. */
export const stateAt = (quote: Pick<Quote, "state" | "validUntil">, now: number): QuoteStateName =>
  quote.state === "sent" && Date.parse(quote.validUntil) <= now ? "expired" : quote.state

/** Quotes stored before exchange rates carried the EUR figures whatever their currency: their rate is 1. */
const rateOf = (quote: { readonly exchangeRate?: number | undefined }) => quote.exchangeRate ?? 1

/** A stored quote as every read answers it: its state as of `now`, and its exchange rate. */
export const asRead = (quote: Quote, now = Date.now()): Quote => ({ ...quote, state: stateAt(quote, now), exchangeRate: rateOf(quote) })

/** The ticket's open quotes (sent and still valid), oldest first. */
export const openQuotes = (context: OperationContext, ticketId: string, now = Date.now()): Step<ReadonlyArray<Quote>> =>
  Effect.map(listRecords(TicketQuote, context.appId, { ticketId, state: "sent" }), (quotes) => quotes.filter((quote) => stateAt(quote, now) === "sent"))

/** Closes the ticket's open quotes: `superseded` (a newer quote, a change of the ticket) or `withdrawn` (the ticket cancelled). */
export const closeOpenQuotes = (context: OperationContext, ticketId: string, state: "superseded" | "withdrawn"): Step<void> =>
  Effect.gen(function*() {
    for (const quote of yield* openQuotes(context, ticketId)) {
      yield* replaceLocked(TicketQuote.name, context.appId, quote.id, { ...quote, state })
    }
  })
