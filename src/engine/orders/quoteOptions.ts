/**
 * A quote line offered at several quantities (`quantityOptions` of
 * `POST /ticket/{ticketId}/quote`): its `options` are the part priced at
 * each quantity with the part's own calculation, as its price breaks are
 * (pricePart.ts, priceBreaks.ts), converted to the quote's currency as the
 * line's unit price is, each with the break's lead time. The line itself
 * prices the part's own quantity, which is always among the options; the
 * buyer chooses another by accepting the quote with the line's quantity set
 * to it (quoteLines.ts, chosenQuantities.ts).
 */
import { Effect } from "effect"
import type { QuantityOptionsRequest, TicketModel } from "../../domain/resources/orders.ts"
import { EngineError } from "../EngineError.ts"
import type { OperationContext } from "../Operation.ts"
import type { CurrencyTerms } from "../pricing/currencies.ts"
import { batchHours, leadTimes, type Schedule, scheduleOf } from "../pricing/leadTime.ts"
import { fromBase, times, toMinor } from "../pricing/money.ts"
import { partPricing } from "../pricing/pricePart.ts"
import type { RecordOf } from "../typedRecords.ts"
import type { Quote } from "./quoteState.ts"

type QuoteLine = Quote["lines"][number]
export type QuoteOption = NonNullable<QuoteLine["options"]>[number]
type Part = RecordOf<typeof TicketModel>

/** The quantities asked for each part, by part id. */
export type AskedQuantities = ReadonlyMap<string, ReadonlyArray<number>>

/**
 * The quantities asked for the ticket's parts: each entry names a part of
 * the ticket, once (422 naming `quantityOptions.<i>.ticketModelId`). The
 * quantities themselves the request's schema has checked (1 to 20 distinct).
 */
export const askedQuantities = Effect.fnUntraced(function*(
  requested: ReadonlyArray<typeof QuantityOptionsRequest.Type> | undefined,
  parts: ReadonlyArray<Part>,
  ticket: string
) {
  const asked = new Map<string, ReadonlyArray<number>>()
  const given = new Map<string, number>()
  for (const [index, { quantities, ticketModelId }] of (requested ?? []).entries()) {
    const at = `quantityOptions.${index}.ticketModelId`
    if (!parts.some((part) => part.id === ticketModelId)) {
      return yield* EngineError.invalid(`${at}: part ${ticketModelId} is not on ${ticket}: options are offered for the ticket's own parts`)
    }
    const earlier = given.get(ticketModelId)
    if (earlier !== undefined) return yield* EngineError.invalid(`${at}: part ${ticketModelId} has its options in quantityOptions.${earlier} already`)
    given.set(ticketModelId, index)
    asked.set(ticketModelId, quantities)
  }
  return asked
})

/** The schedule of each technology of the parts asked for, read once per technology (leadTime.ts). */
export const schedulesOf = Effect.fnUntraced(function*(context: OperationContext, parts: ReadonlyArray<Part>, asked: AskedQuantities) {
  const schedules = new Map<string, Schedule | undefined>()
  for (const part of parts) {
    if (asked.has(part.id) && !schedules.has(part.technologyId)) schedules.set(part.technologyId, yield* scheduleOf(context, part.technologyId))
  }
  return schedules as ReadonlyMap<string, Schedule | undefined>
})

/**
 * The options of a part's line, in ascending quantity, the part's own
 * included: at the line's quantity the line's own price, at any other the
 * part's calculation at it, in the quote's currency; each with the lead
 * time of the part's price break at it (null without a machine of its
 * technology).
 */
export const lineOptions = Effect.fnUntraced(function*(
  context: OperationContext,
  part: Part,
  line: QuoteLine,
  quantities: ReadonlyArray<number>,
  terms: Pick<CurrencyTerms, "minorUnits" | "exchangeRate">,
  schedule: Schedule | undefined
) {
  const priceAt = yield* partPricing(context, part)
  const offered = [...new Set([...quantities, line.quantity])].sort((a, b) => a - b)
  const prices = offered.map((quantity) => priceAt?.(quantity))
  if (!prices.every((price) => price !== undefined)) return yield* EngineError.conflict(`part ${part.name ?? part.id} has no price yet`)
  return offered.map((quantity, index): QuoteOption => {
    const price = prices[index]!
    const unitPrice = quantity === line.quantity ? line.unitPrice : fromBase(price.unitPrice, terms.exchangeRate, terms.minorUnits)
    return {
      quantity,
      unitPrice,
      total: times(unitPrice, quantity, terms.minorUnits),
      leadTimeDays: schedule === undefined ? null : leadTimes(batchHours(price.productionTimes, quantity), schedule).normal
    }
  })
})

/** The options with the one at the line's quantity at the line's unit price: a revision that overrides the line's price moves its option with it. */
export const atLinePrice = (
  options: ReadonlyArray<QuoteOption>,
  line: Pick<QuoteLine, "quantity" | "unitPrice">,
  minorUnits: number
): ReadonlyArray<QuoteOption> =>
  options.map((option) =>
    option.quantity === line.quantity ? { ...option, unitPrice: line.unitPrice, total: times(line.unitPrice, option.quantity, minorUnits) } : option
  )

const samePrice = (a: number, b: number, minorUnits: number) => toMinor(a, minorUnits) === toMinor(b, minorUnits)

/** What a refusal names: the line's part and the quote. */
export interface OptionContext {
  readonly index: number
  readonly what: string
  readonly quote: string
  readonly accepting: boolean
  readonly minorUnits: number
}

/**
 * The option a revision of line `index` chooses by sending another quantity
 * than the line's (422 naming `lines.<i>.quantity` otherwise): only a line
 * with options, only when the revision accepts the quote, only a quantity
 * among them. The line then takes that option's unit price; the price sent
 * may be the line's as read (a client changing the quantity alone) or the
 * option's, anything else is a 422 naming `lines.<i>.unitPrice`.
 */
export const chosenOption = (
  original: QuoteLine,
  sent: Pick<QuoteLine, "quantity" | "unitPrice">,
  { accepting, index, minorUnits, quote, what }: OptionContext
): Effect.Effect<QuoteOption, EngineError> => {
  const at = `lines.${index}.quantity`
  const differs = `${at}: ${sent.quantity} is not ${original.quantity}, the quantity of ${what}`
  const options = original.options
  if (options === undefined) return Effect.fail(EngineError.invalid(differs))
  const offered = options.map((option) => option.quantity).join(", ")
  if (!accepting) {
    return Effect.fail(EngineError.invalid(`${differs}: one of the quantities the line offers (${offered}) is chosen by accepting the quote`))
  }
  const option = options.find((candidate) => candidate.quantity === sent.quantity)
  if (option === undefined) {
    return Effect.fail(EngineError.invalid(`${at}: ${sent.quantity} is not a quantity ${quote} offers for ${what}: choose one of ${offered}`))
  }
  if (!samePrice(sent.unitPrice, original.unitPrice, minorUnits) && !samePrice(sent.unitPrice, option.unitPrice, minorUnits)) {
    return Effect.fail(EngineError.invalid(
      `lines.${index}.unitPrice: ${sent.unitPrice} is neither the line's unit price (${original.unitPrice}) nor that of the quantity ` +
        `${option.quantity} chosen (${option.unitPrice}): a chosen quantity takes its option's price`
    ))
  }
  return Effect.succeed(option)
}

/**
 * Whether a line sent again to a final quote asks for it as it is: the same
 * quantity, and the line's unit price or, on a line with options, that of
 * one of them (an acceptance that chose a quantity may have sent the price
 * the line had before).
 */
export const samePriceAsLine = (sent: Pick<QuoteLine, "unitPrice">, stored: QuoteLine, minorUnits: number) =>
  samePrice(sent.unitPrice, stored.unitPrice, minorUnits) ||
  (stored.options ?? []).some((option) => samePrice(sent.unitPrice, option.unitPrice, minorUnits))
