/**
 * `POST /ticket-model/{id}/price-breaks`: the part priced at each quantity
 * asked for, with the calculation a write of the part runs (pricePart.ts),
 * so a break's price is the part's price at that quantity; each with its
 * lead time from the app's capacity and an expedite option (leadTime.ts).
 * It reads only: the part, its events and its ticket stay as they are.
 * A catalogue configuration is priced the same way, as a part made from it
 * (configurationPriceBreaks.ts).
 */
import { Effect } from "effect"
import { TicketModel } from "../../domain/resources/orders.ts"
import type { LeadTimeBasis, PriceBreak } from "../../domain/resources/priceBreaks.ts"
import { EngineError } from "../EngineError.ts"
import type { GroupHandlers, OperationContext } from "../Operation.ts"
import type { PriceCalculation } from "../pricing/calculate.ts"
import { batchHours, expeditedUnitPrice, leadTimes, type Schedule, scheduleOf } from "../pricing/leadTime.ts"
import { BASE_CURRENCY, BASE_MINOR_UNITS, times } from "../pricing/money.ts"
import { partPricing, type PricedPart } from "../pricing/pricePart.ts"
import { getRecord } from "../typedRecords.ts"

/** Hours as answered: to the hundredth. */
const hundredths = (hours: number) => Math.round(hours * 100) / 100

const basisOf = (schedule: Schedule): typeof LeadTimeBasis.Type => ({
  ...schedule,
  capacityHoursPerWorkingDay: hundredths(schedule.capacityHoursPerWorkingDay),
  backlogHours: hundredths(schedule.backlogHours)
})

/** One break: its price and times, and, with a schedule, its lead time and the expedite option when that is sooner. */
const breakOf = (quantity: number, price: PriceCalculation, schedule: Schedule | undefined): typeof PriceBreak.Type => {
  const priced = { quantity, unitPrice: price.unitPrice, totalPrice: price.totalPrice, productionTimes: price.productionTimes }
  if (schedule === undefined) return { ...priced, leadTimeDays: null }
  const days = leadTimes(batchHours(price.productionTimes, quantity), schedule)
  if (days.expedited >= days.normal) return { ...priced, leadTimeDays: days.normal }
  const unitPrice = expeditedUnitPrice(price.unitPrice, schedule)
  return {
    ...priced,
    leadTimeDays: days.normal,
    expedite: { leadTimeDays: days.expedited, unitPrice, totalPrice: times(unitPrice, quantity, BASE_MINOR_UNITS) }
  }
}

/** What every price-breaks answer holds, whatever it prices. */
export interface Breaks {
  readonly technologyId: string
  readonly currencyId: string
  readonly breaks: ReadonlyArray<typeof PriceBreak.Type>
  readonly leadTimeBasis: typeof LeadTimeBasis.Type | null
}

/**
 * The breaks of what is priced as a part is (a part, or a catalogue
 * configuration as a part made from it), at each quantity in the order
 * asked; undefined when it has no price (no geometry).
 */
export const breaksOf = Effect.fnUntraced(function*(context: OperationContext, priced: Omit<PricedPart, "quantity">, quantities: ReadonlyArray<number>) {
  const [priceAt, schedule] = yield* Effect.all([partPricing(context, priced), scheduleOf(context, priced.technologyId)])
  const prices = quantities.map((quantity) => priceAt?.(quantity))
  if (!prices.every((price) => price !== undefined)) return undefined
  return {
    technologyId: priced.technologyId,
    currencyId: BASE_CURRENCY,
    breaks: quantities.map((quantity, index) => breakOf(quantity, prices[index]!, schedule)),
    leadTimeBasis: schedule === undefined ? null : basisOf(schedule)
  }
})

export const priceBreaks: GroupHandlers<"ticketModel">["priceBreaks"] = Effect.fnUntraced(function*(context, { params: { id }, payload: { quantities } }) {
  const part = yield* getRecord(TicketModel, context.appId, id)
  const breaks = yield* breaksOf(context, part, quantities)
  // As quoting: a part whose model is not analysed yet has no price at any quantity.
  if (breaks === undefined) return yield* EngineError.conflict(`part ${part.name ?? part.id} has no price yet`)
  return { ticketModelId: part.id, ...breaks }
})
