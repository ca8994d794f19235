/**
 * `POST /ticket-model/{id}/price-breaks`: the part priced at each quantity
 * asked for, with the calculation a write of the part runs (pricePart.ts),
 * so a break's price is the part's price at that quantity; each with its
 * lead time from the app's capacity and an expedite option (leadTime.ts).
 * It reads only: the part, its events and its ticket stay as they are.
 */
import { Effect } from "effect"
import { TicketModel } from "../../domain/resources/orders.ts"
import type { LeadTimeBasis, PriceBreak } from "../../domain/resources/priceBreaks.ts"
import { getRecord } from "../crud.ts"
import { EngineError } from "../EngineError.ts"
import type { GroupHandlers } from "../Operation.ts"
import type { PriceCalculation } from "../pricing/calculate.ts"
import { batchHours, expeditedUnitPrice, leadTimes, type Schedule, scheduleOf } from "../pricing/leadTime.ts"
import { BASE_CURRENCY, BASE_MINOR_UNITS, times } from "../pricing/money.ts"
import { partPricing } from "../pricing/pricePart.ts"

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

export const priceBreaks: GroupHandlers<"ticketModel">["priceBreaks"] = (context, { params: { id }, payload: { quantities } }) =>
  Effect.gen(function*() {
    const part = yield* getRecord(TicketModel, context.appId, id)
    const [priceAt, schedule] = yield* Effect.all([partPricing(context, part), scheduleOf(context, part.technologyId)])
    const prices = quantities.map((quantity) => priceAt?.(quantity))
    if (!prices.every((price) => price !== undefined)) {
      // As quoting: a part whose model is not analysed yet has no price at any quantity.
      return yield* EngineError.conflict(`part ${part.name ?? part.id} has no price yet`)
    }
    return {
      ticketModelId: part.id,
      technologyId: part.technologyId,
      currencyId: BASE_CURRENCY,
      breaks: quantities.map((quantity, index) => breakOf(quantity, prices[index]!, schedule)),
      leadTimeBasis: schedule === undefined ? null : basisOf(schedule)
    }
  })
