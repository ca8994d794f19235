/**
 * Tickets and their quotes. A ticket moves
 *   draft → quoted (a quote is sent) → accepted (its quote is accepted)
 *         → in_production (sent to production) → completed; or cancelled.
 * `POST /ticket/{ticketId}/quote` prices the ticket's parts and items into a
 * sent quote; accepting the quote (`PUT /ticket-quote/{id}` with state
 * `accepted`) accepts the ticket.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { Item, Project, Ticket, TicketModel, TicketQuote, type TicketState } from "../../domain/resources/orders.ts"
import { Currency } from "../../domain/resources/reference.ts"
import {
  asRecord,
  findRecord,
  getRecord,
  listRecords,
  type PrepareInput,
  recordHandlers,
  type RecordHooks,
  type RecordOf,
  type StoredFields,
  transactional
} from "../crud.ts"
import { EngineError } from "../EngineError.ts"
import type { GroupHandlers, OperationContext, Step } from "../Operation.ts"
import { RecordRepository } from "../RecordRepository.ts"
import { cents } from "./common.ts"

type TicketRecord = RecordOf<typeof Ticket>
type Quote = RecordOf<typeof TicketQuote>
type QuoteLine = Quote["lines"][number]

const DAY_MS = 86_400_000
const DEFAULT_VALID_DAYS = 30
const DEFAULT_CURRENCY = "EUR"
/**
 * A line total may differ from quantity × unit price by the rounding of the
 * unit price to cents only: half a cent per unit (a part's total carries its
 * batch costs, its unit price is that total over the quantity, rounded).
 */
const tolerance = (quantity: number) => 0.005 * Math.max(1, quantity) + 1e-9

/** States from which a ticket can no longer be quoted. */
const CLOSED_FOR_QUOTES: ReadonlySet<TicketRecord["state"]> = new Set(["in_production", "completed", "cancelled"])

const ticketName = (ticket: TicketRecord) => ticket.number

const prepareTicket = (_context: OperationContext, input: PrepareInput<typeof Ticket>, previous: TicketRecord | undefined) =>
  Effect.succeed({ ...input, state: previous?.state ?? "draft" })

/** Moves a ticket to `state` (whole-record replace of the stored ticket). */
const moveTicket = (context: OperationContext, ticket: TicketRecord, state: typeof TicketState.Type) =>
  Effect.gen(function*() {
    const records = yield* RecordRepository
    return yield* records.replace(Ticket.name, context.appId, ticket.id, { ...ticket, state })
  })

/** Checks every line total against quantity × unit price and sets the quote's total. */
const prepareQuote = (
  context: OperationContext,
  input: PrepareInput<typeof TicketQuote>,
  previous: Quote | undefined
): Step<StoredFields<typeof TicketQuote>> =>
  Effect.gen(function*() {
    let total = 0
    for (const [index, { quantity, total: lineTotal, unitPrice }] of input.lines.entries()) {
      if (Math.abs(quantity * unitPrice - lineTotal) > tolerance(quantity)) {
        return yield* EngineError.invalid(
          `lines.${index}.total: ${lineTotal} is not quantity × unitPrice (${quantity} × ${unitPrice} = ${cents(quantity * unitPrice)})`
        )
      }
      total += lineTotal
    }
    if (previous !== undefined && input.state === "accepted" && previous.state !== "accepted") {
      const ticket = yield* findRecord(Ticket, context.appId, input.ticketId)
      if (ticket === undefined) return yield* EngineError.unknownReference("ticketId", "ticket", input.ticketId)
      if (ticket.state !== "quoted") {
        return yield* EngineError.conflict(`ticket ${ticketName(ticket)} is ${ticket.state}: only a quoted ticket can accept a quote`)
      }
      yield* moveTicket(context, ticket, "accepted")
    }
    return { ...input, total: cents(total) }
  })

const ticketHooks: RecordHooks<typeof Ticket> = { prepare: prepareTicket }
const quoteHooks: RecordHooks<typeof TicketQuote> = { prepare: prepareQuote }

const description = (value: string) => value.slice(0, 500)

/** The quote line of a priced part; a part without a price cannot be quoted. */
const partLine = (part: RecordOf<typeof TicketModel>) =>
  Effect.gen(function*() {
    const { totalPrice, unitPrice } = part
    const name = part.name ?? part.id
    if (unitPrice === null || totalPrice === null) {
      return yield* EngineError.conflict(`part ${name} has no price yet`)
    }
    return {
      description: description(part.name ?? part.fileName ?? name),
      ticketModelId: part.id,
      quantity: part.quantity,
      unitPrice,
      total: totalPrice
    } satisfies QuoteLine
  })

const itemLine = (item: RecordOf<typeof Item>): QuoteLine => ({
  description: description(item.name),
  itemId: item.id,
  quantity: item.quantity,
  unitPrice: item.unitPrice,
  total: cents(item.quantity * item.unitPrice)
})

/**
 * The quote's currency: the one asked for (it must exist for the app), else
 * the ticket's project's, else the default.
 */
const currencyOf = (context: OperationContext, ticket: TicketRecord, requested: string | undefined) =>
  Effect.gen(function*() {
    if (requested !== undefined) {
      if ((yield* findRecord(Currency, context.appId, requested)) === undefined) {
        return yield* EngineError.unknownReference("currencyId", "currency", requested)
      }
      return requested
    }
    const project = yield* findRecord(Project, context.appId, ticket.projectId)
    return project?.currencyId ?? DEFAULT_CURRENCY
  })

/** `POST /ticket/{ticketId}/quote`: creates a sent quote from the ticket's parts and items; the ticket becomes quoted. */
const quote: GroupHandlers<"ticket">["quote"] = (context, { params: { ticketId }, payload }) =>
  Effect.gen(function*() {
    const records = yield* RecordRepository
    const sql = yield* SqlClient.SqlClient
    const ticket = yield* getRecord(Ticket, context.appId, ticketId)
    if (CLOSED_FOR_QUOTES.has(ticket.state)) {
      return yield* EngineError.conflict(`ticket ${ticketName(ticket)} is ${ticket.state}: it cannot be quoted`)
    }
    const parts = yield* listRecords(TicketModel, context.appId, { ticketId })
    const items = yield* listRecords(Item, context.appId, { ticketId })
    if (parts.length === 0 && items.length === 0) {
      return yield* EngineError.invalid(`ticket ${ticketName(ticket)} has no parts or items to quote`)
    }
    const lines = [...(yield* Effect.forEach(parts, partLine)), ...items.map(itemLine)]
    const currencyId = yield* currencyOf(context, ticket, payload.currencyId)
    const validDays = payload.validDays ?? DEFAULT_VALID_DAYS
    const input: PrepareInput<typeof TicketQuote> = {
      ticketId,
      currencyId,
      state: "sent",
      validUntil: new Date(Date.now() + validDays * DAY_MS).toISOString(),
      lines,
      ...(payload.notes === undefined ? {} : { notes: payload.notes })
    }
    return yield* sql.withTransaction(Effect.gen(function*() {
      const prepared = yield* prepareQuote(context, input, undefined)
      const created = yield* records.insert(TicketQuote.name, context.appId, prepared, { numberPrefix: TicketQuote.storage.numberPrefix })
      yield* moveTicket(context, ticket, "quoted")
      return asRecord(TicketQuote, created)
    }))
  })

const tickets = recordHandlers(Ticket, ticketHooks)
const quotes = recordHandlers(TicketQuote, quoteHooks)

/** The ticket group's handlers, but for `sendToProduction` (production's). */
export const ticketHandlers: Omit<GroupHandlers<"ticket">, "sendToProduction"> = {
  lookup: tickets.lookup,
  create: tickets.create,
  replace: tickets.replace,
  quote
}

/**
 * The quote group's handlers. `PUT /ticket-quote/{id}` is the record replace
 * in one transaction, since accepting the quote (its prepare hook) also moves
 * its ticket: both or neither.
 */
export const ticketQuoteHandlers: GroupHandlers<"ticketQuote"> = {
  list: quotes.list,
  get: quotes.get,
  replace: transactional(quotes.replace)
}
