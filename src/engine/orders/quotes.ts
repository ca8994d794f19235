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
import { TicketQuote } from "../../domain/resources/orders.ts"
import { crudOperations, type RecordHooks } from "../crud.ts"
import { EngineError } from "../EngineError.ts"
import type { Operation, OperationContext, Operations } from "../Operation.ts"
import { RecordRepository, type StoredRecord } from "../RecordRepository.ts"
import { arrayOf, cents, listAll, numeric, objectOf, param, payloadOf, text } from "./common.ts"

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
const CLOSED_FOR_QUOTES = new Set(["in_production", "completed", "cancelled"])

const ticketName = (ticket: StoredRecord) => text(ticket, "number") ?? String(ticket.id)

const prepareTicket: NonNullable<RecordHooks["prepare"]> = (_context, input, previous) => Effect.succeed({ ...input, state: previous?.state ?? "draft" })

/** Moves a ticket to `state` (whole-record replace of the stored ticket). */
const moveTicket = (context: OperationContext, ticket: StoredRecord, state: string) =>
  Effect.gen(function*() {
    const records = yield* RecordRepository
    return yield* records.replace("ticket", context.appId, String(ticket.id), { ...ticket, state })
  })

/** Checks every line total against quantity × unit price and sets the quote's total. */
const prepareQuote: NonNullable<RecordHooks["prepare"]> = (context, input, previous) =>
  Effect.gen(function*() {
    let total = 0
    for (const [index, value] of arrayOf(input.lines).entries()) {
      const line = objectOf(value) ?? {}
      const quantity = numeric(line, "quantity") ?? 0
      const unitPrice = numeric(line, "unitPrice") ?? 0
      const lineTotal = numeric(line, "total") ?? 0
      if (Math.abs(quantity * unitPrice - lineTotal) > tolerance(quantity)) {
        return yield* EngineError.invalid(
          `lines.${index}.total: ${lineTotal} is not quantity × unitPrice (${quantity} × ${unitPrice} = ${cents(quantity * unitPrice)})`
        )
      }
      total += lineTotal
    }
    if (previous !== undefined && input.state === "accepted" && previous.state !== "accepted") {
      const records = yield* RecordRepository
      const ticketId = text(input, "ticketId") ?? ""
      const ticket = yield* records.find("ticket", context.appId, ticketId)
      if (ticket === undefined) return yield* EngineError.unknownReference("ticketId", "ticket", ticketId)
      if (ticket.state !== "quoted") {
        return yield* EngineError.conflict(
          `ticket ${ticketName(ticket)} is ${String(ticket.state)}: only a quoted ticket can accept a quote`
        )
      }
      yield* moveTicket(context, ticket, "accepted")
    }
    return { ...input, total: cents(total) }
  })

export const quoteHooks: Readonly<Record<string, RecordHooks>> = {
  ticket: { prepare: prepareTicket },
  ticketQuote: { prepare: prepareQuote }
}

const description = (value: string) => value.slice(0, 500)

/** The quote line of a priced part; a part without a price cannot be quoted. */
const partLine = (part: StoredRecord) =>
  Effect.gen(function*() {
    const unitPrice = numeric(part, "unitPrice")
    const totalPrice = numeric(part, "totalPrice")
    const name = text(part, "name") ?? String(part.id)
    if (unitPrice === undefined || totalPrice === undefined) {
      return yield* EngineError.conflict(`part ${name} has no price yet`)
    }
    return {
      description: description(text(part, "name") ?? text(part, "fileName") ?? name),
      ticketModelId: String(part.id),
      quantity: numeric(part, "quantity") ?? 1,
      unitPrice,
      total: totalPrice
    }
  })

const itemLine = (item: StoredRecord) => {
  const quantity = numeric(item, "quantity") ?? 1
  const unitPrice = numeric(item, "unitPrice") ?? 0
  return {
    description: description(text(item, "name") ?? String(item.id)),
    itemId: String(item.id),
    quantity,
    unitPrice,
    total: cents(quantity * unitPrice)
  }
}

/** `POST /ticket/{ticketId}/quote`: creates a sent quote from the ticket's parts and items; the ticket becomes quoted. */
const quote: Operation = (context, request) =>
  Effect.gen(function*() {
    const records = yield* RecordRepository
    const sql = yield* SqlClient.SqlClient
    const ticketId = param(request, "ticketId")
    const overrides = payloadOf(request)
    const ticket = yield* records.find("ticket", context.appId, ticketId)
    if (ticket === undefined) return yield* EngineError.notFound("ticket", ticketId)
    const state = String(ticket.state ?? "draft")
    if (CLOSED_FOR_QUOTES.has(state)) {
      return yield* EngineError.conflict(`ticket ${ticketName(ticket)} is ${state}: it cannot be quoted`)
    }
    const parts = yield* listAll("ticketModel", context.appId, { ticketId })
    const items = yield* listAll("item", context.appId, { ticketId })
    if (parts.length === 0 && items.length === 0) {
      return yield* EngineError.invalid(`ticket ${ticketName(ticket)} has no parts or items to quote`)
    }
    const lines = [...(yield* Effect.forEach(parts, partLine)), ...items.map(itemLine)]

    let currencyId = text(overrides, "currencyId")
    if (currencyId !== undefined) {
      if ((yield* records.find("currency", context.appId, currencyId)) === undefined) {
        return yield* EngineError.unknownReference("currencyId", "currency", currencyId)
      }
    } else {
      const project = yield* records.find("project", context.appId, text(ticket, "projectId") ?? "")
      currencyId = (project === undefined ? undefined : text(project, "currencyId")) ?? DEFAULT_CURRENCY
    }
    const validDays = numeric(overrides, "validDays") ?? DEFAULT_VALID_DAYS
    const notes = text(overrides, "notes")
    const input: StoredRecord = {
      ticketId,
      currencyId,
      state: "sent",
      validUntil: new Date(Date.now() + validDays * DAY_MS).toISOString(),
      lines,
      ...(notes === undefined ? {} : { notes })
    }
    return yield* sql.withTransaction(Effect.gen(function*() {
      const prepared = yield* prepareQuote(context, input, undefined)
      const created = yield* records.insert("ticketQuote", context.appId, prepared, { numberPrefix: "Q" })
      yield* moveTicket(context, ticket, "quoted")
      return created
    }))
  })

const genericQuotes = crudOperations(TicketQuote, { prepare: prepareQuote })

/**
 * `PUT /ticket-quote/{id}`: the generic replace in one transaction, since
 * accepting the quote (its prepare hook) also moves its ticket: both or neither.
 */
const replaceQuote: Operation = (context, request) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* sql.withTransaction(genericQuotes["ticketQuote.replace"]!(context, request))
  })

export const quoteWorkflows: Operations = { "ticket.quote": quote, "ticketQuote.replace": replaceQuote }
