/**
 * Quotes: `POST /ticket/{ticketId}/quote` prices a draft or quoted ticket's
 * parts and items into a sent quote (superseding its open one), and
 * `PUT /ticket-quote/{id}` revises a sent quote or moves it to accepted
 * (which accepts the ticket) or rejected. Every state but sent is final. A
 * part's line may offer several quantities (quoteOptions.ts); accepting the
 * quote with another of them sets the part to it (chosenQuantities.ts). See
 * docs/workflows-orders.md for the state table.
 */
import { Effect } from "effect"
import { SCOPE_TO_ACCEPT } from "../../contract/Scopes.ts"
import { spendLimitMessage } from "../../domain/Grants.ts"
import { Item, Project, TicketModel, TicketQuote } from "../../domain/resources/orders.ts"
import { transactional } from "../crud.ts"
import { EngineError } from "../EngineError.ts"
import type { GroupHandlers, OperationContext, Step } from "../Operation.ts"
import { currencyTerms } from "../pricing/currencies.ts"
import { BASE_CURRENCY, BASE_MINOR_UNITS, toBase, toMinor } from "../pricing/money.ts"
import { findRecord, getRecord, listRecords } from "../typedRecords.ts"
import { takeChosenQuantities } from "./chosenQuantities.ts"
import { manufacturabilityOf } from "./manufacturability.ts"
import { itemLine, partLine, type QuoteLine, reviseLines, totalOf } from "./quoteLines.ts"
import { listQuotes } from "./quoteList.ts"
import { askedQuantities, lineOptions, samePriceAsLine, schedulesOf } from "./quoteOptions.ts"
import { checkDisagreements, checkValidUntil, type Replacement } from "./quoteReplacement.ts"
import { asRead, closeOpenQuotes, openQuotes, type Quote, type QuoteFields, quoteLabel, writeQuote } from "./quoteState.ts"
import { getLockedTicket, moveTicket, ticketLabel, type TicketRecord } from "./ticketState.ts"

const DAY_MS = 86_400_000
const DEFAULT_VALID_DAYS = 30
const DEFAULT_MINOR_UNITS = 2
const MAX_MINOR_UNITS = 4

/** States in which a ticket can be quoted: it holds parts and items that no accepted quote has priced. */
const QUOTABLE: ReadonlyArray<TicketRecord["state"]> = ["draft", "quoted"]

/** Dates as the engine writes them, so that SQL can compare them (quoteList.ts). */
const instant = (date: string) => new Date(Date.parse(date)).toISOString()

/**
 * The currency a new quote prices in and its rate: the one asked for (it
 * must exist), else the project's, else EUR; the rate given, else the
 * currency's reference rate. The base currency's rate is 1.
 */
const termsOf = Effect.fnUntraced(function*(
  context: OperationContext,
  ticket: TicketRecord,
  payload: { readonly currencyId?: string | undefined; readonly exchangeRate?: number | undefined }
) {
  const project = payload.currencyId === undefined ? yield* findRecord(Project, context.appId, ticket.projectId) : undefined
  const currencyId = payload.currencyId ?? project?.currencyId ?? BASE_CURRENCY
  const terms = yield* currencyTerms(context, currencyId)
  if (terms === undefined) return yield* EngineError.unknownReference("currencyId", "currency", currencyId)
  if (payload.exchangeRate === undefined) return terms
  if (currencyId === BASE_CURRENCY && payload.exchangeRate !== 1) {
    return yield* EngineError.invalid(`exchangeRate: ${BASE_CURRENCY} is the base currency: its rate is 1, not ${payload.exchangeRate}`)
  }
  return { ...terms, exchangeRate: payload.exchangeRate }
})

type Part = (typeof TicketModel)["record"]["Type"]

/**
 * A ticket whose part is blocked (it cannot be made as drawn: no machine
 * holds it, walls too thin) is not quoted without `override: true`: a 409
 * naming each such part and its blocking checks.
 */
const checkManufacturable = (parts: ReadonlyArray<Part>, verdicts: ReadonlyArray<Part["manufacturability"]>): Step<void> => {
  const blocked = parts.flatMap((part, index) => {
    const checks = verdicts[index]?.checks.filter((check) => check.status === "blocked") ?? []
    return checks.length === 0
      ? []
      : [`part ${part.name ?? part.id} (${part.id}) is blocked by ${checks.map((check) => `${check.id} (${check.message})`).join(", ")}`]
  })
  return blocked.length === 0
    ? Effect.void
    : Effect.fail(EngineError.conflict(`${blocked.join("; ")}: it cannot be made as it is; quote with "override": true to quote it anyway`))
}

/** `POST /ticket/{ticketId}/quote`: a sent quote of the ticket's parts and items; it supersedes the open one, and the ticket is quoted. */
const createQuote: GroupHandlers<"ticket">["quote"] = Effect.fnUntraced(function*(context, { params: { ticketId }, payload }) {
  const ticket = yield* getLockedTicket(context, ticketId)
  if (!QUOTABLE.includes(ticket.state)) {
    return yield* EngineError.conflict(`${ticketLabel(ticket)} is ${ticket.state}: only a draft or quoted ticket can be quoted`)
  }
  const parts = yield* listRecords(TicketModel, context.appId, { ticketId })
  const items = yield* listRecords(Item, context.appId, { ticketId })
  if (parts.length === 0 && items.length === 0) {
    return yield* EngineError.invalid(`${ticketLabel(ticket)} has no parts or items to quote`)
  }
  const terms = yield* termsOf(context, ticket, payload)
  const asked = yield* askedQuantities(payload.quantityOptions, parts, ticketLabel(ticket))
  // A part written before the checks existed has none stored: its verdict is made now.
  const verdicts = yield* Effect.forEach(
    parts,
    (part) => part.manufacturability !== undefined ? Effect.succeed(part.manufacturability) : manufacturabilityOf(context, part.technologyId, part.geometry)
  )
  if (payload.override !== true) {
    yield* checkManufacturable(parts, verdicts)
  }
  const schedules = yield* schedulesOf(context, parts, asked)
  /** A part's line, with its options when they are asked for. */
  const lineOfPart = (part: Part, index: number) =>
    Effect.flatMap(partLine(part, terms, verdicts[index]?.status), (line) => {
      const quantities = asked.get(part.id)
      return quantities === undefined
        ? Effect.succeed(line)
        : Effect.map(lineOptions(context, part, line, quantities, terms, schedules.get(part.technologyId)), (options) => ({ ...line, options }))
    })
  const lines: ReadonlyArray<QuoteLine> = [
    ...(yield* Effect.forEach(parts, lineOfPart)),
    ...items.map((item) => itemLine(item, terms))
  ]
  const quote: QuoteFields = {
    ticketId,
    currencyId: terms.currencyId,
    exchangeRate: terms.exchangeRate,
    state: "sent",
    validUntil: new Date(Date.now() + (payload.validDays ?? DEFAULT_VALID_DAYS) * DAY_MS).toISOString(),
    lines,
    total: totalOf(lines, terms.minorUnits),
    ...(payload.notes === undefined ? {} : { notes: payload.notes })
  }
  yield* closeOpenQuotes(context, ticketId, "superseded")
  const created = yield* writeQuote(context.appId, undefined, quote)
  if (ticket.state !== "quoted") yield* moveTicket(context, ticket, "quoted")
  return created
})

/**
 * Whether a PUT asks for the quote as it is: a retried acceptance, say, which answers the quote and changes nothing (on a line with
 * options, the price the line had before its quantity was chosen is taken too: quoteOptions.ts). The engine's fields it carries are
 * not compared: nothing is written, and the answer shows the quote's.
 */
const asItIs = (quote: Quote, input: Replacement) =>
  input.state === quote.state && input.ticketId === quote.ticketId && input.currencyId === quote.currencyId &&
  Date.parse(input.validUntil) === Date.parse(quote.validUntil) && input.notes === quote.notes &&
  input.lines.length === quote.lines.length &&
  input.lines.every((line, index) => {
    const same = quote.lines[index]!
    return line.description === same.description && line.ticketModelId === same.ticketModelId && line.itemId === same.itemId &&
      // Compared at four decimals, the finest minor unit a currency has, so 13.5 and 13.50000000001 are one price.
      line.quantity === same.quantity && samePriceAsLine(line, same, MAX_MINOR_UNITS)
  })

/** Only the newest open quote of a ticket can be accepted: an older one no longer prices what the customer last saw. */
const checkNewest = Effect.fnUntraced(function*(context: OperationContext, quote: Quote, ticket: TicketRecord) {
  const newest = (yield* openQuotes(context, quote.ticketId)).at(-1)
  if (newest !== undefined && newest.id !== quote.id) {
    return yield* EngineError.conflict(
      `${quoteLabel(quote)} is not the newest sent quote of ${ticketLabel(ticket)} (${quoteLabel(newest)} is): only the newest can be accepted`
    )
  }
})

/**
 * Whether the quote's total, in EUR at the quote's own rate, is within the
 * caller's `maxAcceptTotal` (none: any total). A refusal is a 403 and, in the
 * acceptance's transaction, leaves the quote sent.
 */
const checkSpendLimit = (context: OperationContext, quote: Quote, revised: QuoteFields): Step<void> => {
  const limit = context.grants?.maxAcceptTotal ?? null
  if (limit === null) return Effect.void
  const totalInBase = toBase(revised.total, revised.exchangeRate)
  if (toMinor(totalInBase, BASE_MINOR_UNITS) <= toMinor(limit, BASE_MINOR_UNITS)) return Effect.void
  return Effect.fail(EngineError.spendLimitExceeded(spendLimitMessage(quoteLabel(quote), limit, totalInBase, {
    amount: revised.total,
    currencyId: revised.currencyId,
    exchangeRate: revised.exchangeRate
  })))
}

/**
 * `PUT /ticket-quote/{id}` on a sent quote (its state as stored, as of
 * now: an expired one is final): the moves a PUT makes (sent, accepted,
 * rejected), the fields that cannot change (ticket, currency), a new
 * validity only in the future, the lines revised, the engine's fields sent
 * back as they are (quoteReplacement.ts); accepting it accepts its ticket. The ticket is locked
 * first, so that the quote is read as the last move of its ticket left it.
 */
const replaceQuote: GroupHandlers<"ticketQuote">["replace"] = Effect.fnUntraced(function*(context, { params: { id }, payload }) {
  const ticket = yield* getLockedTicket(context, (yield* getRecord(TicketQuote, context.appId, id)).ticketId)
  const quote = asRead(yield* getRecord(TicketQuote, context.appId, id))
  if (quote.state !== "sent") {
    if (asItIs(quote, payload)) return quote
    return yield* EngineError.conflict(`${quoteLabel(quote)} is ${quote.state}: only a sent quote can change (every other state is final)`)
  }
  // Accepting needs the `order` scope (src/contract/Scopes.ts), whatever else the PUT gets wrong.
  if (payload.state === "accepted" && context.grants !== undefined && !context.grants.scopes.has(SCOPE_TO_ACCEPT)) {
    return yield* EngineError.insufficientScope("ticketQuote.replace", SCOPE_TO_ACCEPT)
  }
  if (payload.state !== "sent" && payload.state !== "accepted" && payload.state !== "rejected") {
    return yield* EngineError.conflict(
      `${quoteLabel(quote)} is sent: a PUT moves it to accepted or rejected; ${payload.state} is the engine's to set`
    )
  }
  if (payload.ticketId !== quote.ticketId) {
    return yield* EngineError.invalid(`ticketId: ${quoteLabel(quote)} is a quote of ${ticketLabel(ticket)}; a quote cannot move to another ticket`)
  }
  if (payload.currencyId !== quote.currencyId) {
    return yield* EngineError.invalid(
      `currencyId: ${quoteLabel(quote)} is in ${quote.currencyId} at ${quote.exchangeRate} per ${BASE_CURRENCY}; ` +
        "its currency cannot change (quote the ticket again in another)"
    )
  }
  const now = Date.now()
  yield* checkValidUntil(quote, payload.validUntil, now)
  const minorUnits = (yield* currencyTerms(context, quote.currencyId))?.minorUnits ?? DEFAULT_MINOR_UNITS
  const lines = yield* reviseLines(context, quote, ticketLabel(ticket), payload.lines, minorUnits, payload.state === "accepted")
  const total = totalOf(lines, minorUnits)
  yield* checkDisagreements(quote, payload, { lines, total })
  if (payload.state === "accepted") {
    yield* checkNewest(context, quote, ticket)
    if (ticket.state !== "quoted") {
      return yield* EngineError.conflict(`${ticketLabel(ticket)} is ${ticket.state}: only a quoted ticket can accept a quote`)
    }
  }
  const revised: QuoteFields = {
    ticketId: quote.ticketId,
    currencyId: quote.currencyId,
    exchangeRate: quote.exchangeRate,
    state: payload.state,
    validUntil: instant(payload.validUntil),
    lines,
    total,
    ...(payload.notes === undefined ? {} : { notes: payload.notes })
  }
  if (payload.state === "accepted") yield* checkSpendLimit(context, quote, revised)
  // The parts take the quantities chosen first, so that their events come before the acceptance's; this write supersedes no quote.
  if (payload.state === "accepted") yield* takeChosenQuantities(context, quote.lines, lines)
  const replaced = yield* writeQuote(context.appId, quote, revised)
  if (payload.state === "accepted") yield* moveTicket(context, ticket, "accepted")
  return replaced
})

/** `POST /ticket/{ticketId}/quote`, in one transaction with the ticket locked: the quote, the superseded one and the ticket's move, or none. */
export const quote = transactional(createQuote)

/** The quote group's handlers: reads answer the state as of now; a PUT and the ticket's move it makes are one transaction. */
export const ticketQuoteHandlers: GroupHandlers<"ticketQuote"> = {
  list: (context, { query }) => listQuotes(context, query),
  get: (context, { params: { id } }) => Effect.map(findRecord(TicketQuote, context.appId, id), (found) => found === undefined ? null : asRead(found)),
  replace: transactional(replaceQuote)
}
