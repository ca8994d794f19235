/**
 * `GET /ticket-quote`: the generic list, but that the `state` filter finds a
 * quote by its state as read (a sent quote past its validity is expired),
 * which storage does not hold; so a list filtered by state runs its own
 * statement, with the state as of now computed in SQL, and pages there.
 */
import { Effect } from "effect"
import { toRecordFilter } from "../../domain/Resource.ts"
import { TicketQuote } from "../../domain/resources/orders.ts"
import type { OperationContext } from "../Operation.ts"
import { RecordRepository, type StoredRecord } from "../RecordRepository.ts"
import { asRecord } from "../typedRecords.ts"
import { asRead } from "./quoteState.ts"

type ListQuery = typeof TicketQuote.listQuery.Type

export const listQuotes = Effect.fnUntraced(function*(context: OperationContext, query: ListQuery) {
  const now = new Date()
  const filter = toRecordFilter(TicketQuote.filters, query)
  const states = filter.equals.find(({ field }) => field === "state")?.values
  const read = (rows: ReadonlyArray<StoredRecord>) => rows.map((row) => asRead(asRecord(TicketQuote, row), now.getTime()))
  const records = yield* RecordRepository
  if (states === undefined) {
    const { records: page, total } = yield* records.page(TicketQuote.name, context.appId, filter)
    return { items: read(page), total }
  }
  const { records: page, total } = yield* records.pageQuotesByState(context.appId, { filter, ticketIds: query.ticketId, states, now })
  return { items: read(page), total }
})
