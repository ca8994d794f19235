/**
 * `GET /ticket-quote`: the generic list, but that the `state` filter finds a
 * quote by its state as read (a sent quote past its validity is expired),
 * which storage does not hold; so a list filtered by state runs its own
 * statement, with the state as of now computed in SQL, and pages there.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { toRecordFilter } from "../../domain/Resource.ts"
import { TicketQuote } from "../../domain/resources/orders.ts"
import { asRecord } from "../crud.ts"
import type { OperationContext } from "../Operation.ts"
import { GLOBAL_APP, RecordRepository, type StoredRecord } from "../RecordRepository.ts"
import { asRead } from "./quoteState.ts"

/** A `validUntil` SQL can compare (the engine writes them so); any other reads as still valid there. */
export const ISO_INSTANT = "^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}(:\\d{2}(\\.\\d+)?)?(Z|[+-]\\d{2}:?\\d{2})$"

const DATE_COLUMNS = { createdAt: "created_at", updatedAt: "updated_at" } as const

type ListQuery = typeof TicketQuote.listQuery.Type

export const listQuotes = Effect.fnUntraced(function*(context: OperationContext, query: ListQuery) {
  const now = new Date()
  const filter = toRecordFilter(TicketQuote.filters, query)
  const states = filter.equals.find(({ field }) => field === "state")?.values
  const read = (rows: ReadonlyArray<StoredRecord>) => rows.map((row) => asRead(asRecord(TicketQuote, row), now.getTime()))
  if (states === undefined) {
    const records = yield* RecordRepository
    const { records: page, total } = yield* records.page(TicketQuote.name, context.appId, filter)
    return { items: read(page), total }
  }
  const sql = yield* SqlClient.SqlClient
  // CASE evaluates in order: only a sent quote with a well-formed validUntil is cast.
  const stateAsRead = sql`(CASE
    WHEN data->>'state' <> 'sent' THEN data->>'state'
    WHEN data->>'validUntil' !~ ${ISO_INSTANT} THEN 'sent'
    WHEN (data->>'validUntil')::timestamptz <= ${now.toISOString()}::timestamptz THEN 'expired'
    ELSE 'sent' END)`
  const conditions = [sql`resource = ${TicketQuote.name}`, sql`app_id IN (${context.appId}, ${GLOBAL_APP})`]
  if (filter.ids !== undefined) conditions.push(sql`id = ANY(${filter.ids}::text[])`)
  if (query.ticketId !== undefined) conditions.push(sql`data->>'ticketId' = ANY(${query.ticketId}::text[])`)
  conditions.push(sql`${stateAsRead} = ANY(${states}::text[])`)
  for (const { field, from, to } of filter.dates) {
    const column = sql.literal(DATE_COLUMNS[field])
    if (from !== undefined) conditions.push(sql`${column} >= ${from.toISOString()}::timestamptz`)
    if (to !== undefined) conditions.push(sql`${column} <= ${to.toISOString()}::timestamptz`)
  }
  const rows = yield* sql<{ data: StoredRecord; total: string | number }>`
    SELECT data, count(*) OVER () AS total FROM engine_record WHERE ${sql.and(conditions)}
    ORDER BY created_at, id LIMIT ${filter.limit} OFFSET ${filter.offset}`
  if (rows.length > 0 || filter.offset === 0) return { items: read(rows.map((row) => row.data)), total: Number(rows[0]?.total ?? 0) }
  // A page past the end has no row to carry the count.
  const [counted] = yield* sql<{ total: string | number }>`SELECT count(*) AS total FROM engine_record WHERE ${sql.and(conditions)}`
  return { items: [], total: Number(counted?.total ?? 0) }
})
