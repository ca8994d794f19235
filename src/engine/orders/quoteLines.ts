/**
 * The lines of a quote. They are the engine's: one per part and one per
 * item of the ticket, each EUR unit price converted to the quote's currency
 * and rounded to its minor unit, each total exactly quantity × unit price,
 * the quote's total exactly their sum. A PUT of a sent quote may rename a
 * line or override its unit price; it cannot add, drop or re-point a line,
 * or change a part line's manufacturability status or options, or its
 * quantity, but for an acceptance that chooses another of the line's
 * options (quoteOptions.ts).
 */
import { Effect } from "effect"
import { Item, TicketModel } from "../../domain/resources/orders.ts"
import { EngineError } from "../EngineError.ts"
import type { OperationContext, Step } from "../Operation.ts"
import type { CurrencyTerms } from "../pricing/currencies.ts"
import { fromBase, fromMinor, isWholeMinor, sum, times } from "../pricing/money.ts"
import { findRecord, type RecordOf } from "../typedRecords.ts"
import { atLinePrice, chosenOption } from "./quoteOptions.ts"
import type { Replacement } from "./quoteReplacement.ts"
import type { Quote } from "./quoteState.ts"

export type QuoteLine = Quote["lines"][number]
type ManufacturabilityStatus = NonNullable<QuoteLine["manufacturability"]>

/** The terms a quote prices in: its currency's minor unit and the rate it converts EUR at. */
export type QuoteTerms = Pick<CurrencyTerms, "currencyId" | "minorUnits" | "exchangeRate">

const description = (value: string) => value.slice(0, 500)

/** A line with its total: quantity × unit price, exactly. */
const priced = (line: Omit<QuoteLine, "total">, minorUnits: number): QuoteLine => ({ ...line, total: times(line.unitPrice, line.quantity, minorUnits) })

/** The line of a priced part, with its manufacturability status; a part without a price cannot be quoted (409 naming it). */
export const partLine = (part: RecordOf<typeof TicketModel>, terms: QuoteTerms, status: ManufacturabilityStatus | undefined): Step<QuoteLine> =>
  part.unitPrice === null
    ? Effect.fail(EngineError.conflict(`part ${part.name ?? part.id} has no price yet`))
    : Effect.succeed(priced({
      description: description(part.name ?? part.fileName ?? part.id),
      ticketModelId: part.id,
      quantity: part.quantity,
      ...(status === undefined ? {} : { manufacturability: status }),
      unitPrice: fromBase(part.unitPrice, terms.exchangeRate, terms.minorUnits)
    }, terms.minorUnits))

export const itemLine = (item: RecordOf<typeof Item>, terms: QuoteTerms): QuoteLine =>
  priced({
    description: description(item.name),
    itemId: item.id,
    quantity: item.quantity,
    unitPrice: fromBase(item.unitPrice, terms.exchangeRate, terms.minorUnits)
  }, terms.minorUnits)

/** The quote's total: the sum of its line totals, exactly. */
export const totalOf = (lines: ReadonlyArray<QuoteLine>, minorUnits: number) => sum(lines.map((line) => line.total), minorUnits)

/** What a line prices, as written in messages and as a key. */
interface Priced {
  readonly kind: "part" | "item"
  readonly field: "ticketModelId" | "itemId"
  readonly id: string
}

const keyOf = ({ field, id }: Priced) => `${field}:${id}`

const pricedOf = (line: Pick<QuoteLine, "ticketModelId" | "itemId">): Priced | undefined =>
  line.ticketModelId !== undefined
    ? { kind: "part", field: "ticketModelId", id: line.ticketModelId }
    : line.itemId !== undefined
    ? { kind: "item", field: "itemId", id: line.itemId }
    : undefined

/** What line `index` of a PUT prices: one part or one item, never both or neither. */
const pricedBy = (line: Pick<QuoteLine, "ticketModelId" | "itemId">, index: number): Effect.Effect<Priced, EngineError> => {
  if (line.ticketModelId !== undefined && line.itemId !== undefined) {
    return Effect.fail(EngineError.invalid(`lines.${index}.itemId: a line prices one part (ticketModelId) or one item (itemId), not both`))
  }
  const found = pricedOf(line)
  return found === undefined
    ? Effect.fail(EngineError.invalid(`lines.${index}.ticketModelId: a line prices a part (ticketModelId) or an item (itemId) of the quote's ticket`))
    : Effect.succeed(found)
}

/** The ticket a part or item is on; undefined when the app has none with that id. */
const ticketOf = (context: OperationContext, { id, kind }: Priced): Step<string | undefined> =>
  kind === "part"
    ? Effect.map(findRecord(TicketModel, context.appId, id), (part) => part?.ticketId)
    : Effect.map(findRecord(Item, context.appId, id), (item) => item?.ticketId)

/**
 * The lines a PUT gives a sent quote, checked against the ones it was made
 * with (422 naming `lines.<i>.<field>`): each prices a part or item of the
 * quote's ticket that has a line on the quote, once, at its quantity (or,
 * when `accepting`, another of its options' quantities, at that option's
 * price), at a unit price in the currency's minor unit. Descriptions and
 * unit prices are the PUT's; the totals and options are the engine's (the
 * option at the line's quantity at the line's price), any sent being
 * checked against them (quoteReplacement.ts).
 */
export const reviseLines = Effect.fnUntraced(function*(
  context: OperationContext,
  quote: Quote,
  ticket: string,
  lines: ReadonlyArray<Replacement["lines"][number]>,
  minorUnits: number,
  accepting: boolean
) {
  if (lines.length === 0) {
    return yield* EngineError.invalid(`lines: the lines of quote ${quote.number} are ${ticket}'s parts and items; a quote has at least one`)
  }
  const made = new Map(quote.lines.flatMap((line) => {
    const what = pricedOf(line)
    return what === undefined ? [] : [[keyOf(what), line] as const]
  }))
  const seen = new Map<string, number>()
  const revised: Array<QuoteLine> = []
  for (const [index, line] of lines.entries()) {
    const what = yield* pricedBy(line, index)
    const at = `lines.${index}.${what.field}`
    const earlier = seen.get(keyOf(what))
    if (earlier !== undefined) return yield* EngineError.invalid(`${at}: ${what.kind} ${what.id} is priced by lines.${earlier} already`)
    seen.set(keyOf(what), index)
    if ((yield* ticketOf(context, what)) !== quote.ticketId) return yield* EngineError.invalid(`${at}: ${what.kind} ${what.id} is not on ${ticket}`)
    const original = made.get(keyOf(what))
    if (original === undefined) {
      return yield* EngineError.invalid(`${at}: ${what.kind} ${what.id} has no line on quote ${quote.number}: a quote keeps the lines it was made with`)
    }
    // A quantity other than the line's chooses one of its options, at that option's price.
    const chosen = line.quantity === original.quantity
      ? undefined
      : yield* chosenOption(original, line, { index, what: `${what.kind} ${what.id}`, quote: `quote ${quote.number}`, accepting, minorUnits })
    const unitPrice = chosen?.unitPrice ?? line.unitPrice
    if (!isWholeMinor(unitPrice, minorUnits)) {
      return yield* EngineError.invalid(
        `lines.${index}.unitPrice: ${line.unitPrice} is finer than the minor unit of ${quote.currencyId} (${fromMinor(1, minorUnits)})`
      )
    }
    revised.push(priced({
      description: line.description,
      [what.field]: what.id,
      quantity: line.quantity,
      // The engine's, as the quote was made (a value sent is checked against it: quoteReplacement.ts).
      ...(original.manufacturability === undefined ? {} : { manufacturability: original.manufacturability }),
      unitPrice,
      ...(original.options === undefined ? {} : { options: atLinePrice(original.options, { quantity: line.quantity, unitPrice }, minorUnits) })
    }, minorUnits))
  }
  for (const [key, line] of made) {
    if (!seen.has(key)) {
      const what = pricedOf(line)!
      return yield* EngineError.invalid(`lines: the line of ${what.kind} ${what.id} is missing: a quote keeps the lines it was made with`)
    }
  }
  return revised
})
