/**
 * A quote's state as read, and its writes. A `sent` quote whose
 * `validUntil` has passed is `expired`: storage keeps `sent` until the
 * expiry sweep (quoteExpiry.ts) stores `expired`, so every read and every
 * move looks at the state as of now. Every state but `sent` is final; the
 * engine closes a ticket's open quotes when a newer quote or a change of the
 * ticket supersedes them, or the ticket is cancelled (withdrawn). Every
 * write of a quote goes through `writeQuote`, which writes the event of the
 * move it makes.
 */
import { Effect } from "effect"
import type { EventType } from "../../domain/events/types.ts"
import { TicketQuote } from "../../domain/resources/orders.ts"
import { EngineError } from "../EngineError.ts"
import { recordEvent } from "../events/outbox.ts"
import type { OperationContext, Step } from "../Operation.ts"
import { asRecord, listRecords, type RecordOf, type StoredFields } from "../typedRecords.ts"
import { insertLocked, replaceLocked } from "../writes.ts"

export type Quote = RecordOf<typeof TicketQuote>
export type QuoteStateName = Quote["state"]

/** How messages name a quote: its number (Q-000042). */
export const quoteLabel = (quote: Quote) => `quote ${quote.number}`

/** The quote's state at `now` (ms): a sent quote past its validity is expired. */
export const stateAt = (quote: Pick<Quote, "state" | "validUntil">, now: number): QuoteStateName =>
  quote.state === "sent" && Date.parse(quote.validUntil) <= now ? "expired" : quote.state

/** Quotes stored before exchange rates carried the EUR figures whatever their currency: their rate is 1. */
const rateOf = (quote: { readonly exchangeRate?: number | undefined }) => quote.exchangeRate ?? 1

/** Where the quote's PDF is read: its own path, which answers the PDF to `Accept: application/pdf` (docs/workflows-orders.md). */
export const quotePdfPath = (id: string) => `/v1${TicketQuote.path}/${encodeURIComponent(id)}`

/** A stored quote as every read answers it: its state as of `now`, its exchange rate and where its PDF is. */
export const asRead = (quote: Quote, now = Date.now()): Quote => ({
  ...quote,
  state: stateAt(quote, now),
  exchangeRate: rateOf(quote),
  pdfUrl: quotePdfPath(quote.id)
})

/** What a quote stores: its fields but those every read derives (`pdfUrl`). */
export type QuoteFields = Omit<StoredFields<typeof TicketQuote>, "pdfUrl">

/**
 * The event of each state a quote is stored in. A withdrawn quote has none
 * of its own: its ticket's `ticket.cancelled` says it (docs/events.md).
 */
const STATE_EVENTS = {
  sent: "ticket_quote.sent",
  accepted: "ticket_quote.accepted",
  rejected: "ticket_quote.rejected",
  superseded: "ticket_quote.superseded",
  expired: "ticket_quote.expired"
} as const satisfies { readonly [S in QuoteStateName]?: EventType }

/**
 * Stores a quote of the app: a new one, numbered, when `previous` is
 * undefined, else `fields` as the new version of `previous` (as stored);
 * and, in the caller's transaction, the event of the state it reaches when
 * that is a move (a new quote is `sent`; a revision that stays `sent` is no
 * move). Answers the quote as read.
 */
export const writeQuote = Effect.fnUntraced(function*(appId: string, previous: Quote | undefined, fields: QuoteFields) {
  // A quote read and written back carries its derived pdfUrl: storage keeps none.
  const { pdfUrl: _derived, ...kept } = fields as QuoteFields & { readonly pdfUrl?: string }
  const stored = previous === undefined
    ? yield* insertLocked(TicketQuote.name, appId, kept, { numberPrefix: TicketQuote.storage.numberPrefix })
    : yield* replaceLocked(TicketQuote.name, appId, previous.id, kept)
  if (stored === undefined) return yield* EngineError.notFound(TicketQuote.name, previous?.id ?? "")
  const quote = asRead(asRecord(TicketQuote, stored))
  if (previous?.state === fields.state) return quote
  const type = fields.state === "withdrawn" ? undefined : STATE_EVENTS[fields.state]
  if (type !== undefined) {
    yield* recordEvent(appId, type, previous === undefined ? { object: quote } : { object: quote, previousState: previous.state })
  }
  return quote
})

/** The ticket's open quotes (sent and still valid), oldest first. */
export const openQuotes = (context: OperationContext, ticketId: string, now = Date.now()): Step<ReadonlyArray<Quote>> =>
  Effect.map(listRecords(TicketQuote, context.appId, { ticketId, state: "sent" }), (quotes) => quotes.filter((quote) => stateAt(quote, now) === "sent"))

/** Closes the ticket's open quotes: `superseded` (a newer quote, a change of the ticket) or `withdrawn` (the ticket cancelled). */
export const closeOpenQuotes = Effect.fnUntraced(function*(context: OperationContext, ticketId: string, state: "superseded" | "withdrawn") {
  for (const quote of yield* openQuotes(context, ticketId)) {
    yield* writeQuote(context.appId, quote, { ...quote, state })
  }
})
