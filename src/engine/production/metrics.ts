/**
 * GET /report-metrics?createdAt[from]=&createdAt[to]=: figures over the
 * app's quotes and service jobs created in the period (the spec's date
 * filter: one date, or a range with both ends optional and inclusive, a
 * date-only `to` meaning the end of that day). Quote values are summed per
 * currency in its minor unit and converted to the base currency, EUR, at
 * the rate each quote recorded (docs/pricing.md); figures across currencies
 * are in EUR only. See docs/workflows-production.md for the model.
 */
import { Effect } from "effect"
import { toDateFilters } from "../../domain/Resource.ts"
import { TicketModel, TicketQuote } from "../../domain/resources/orders.ts"
import { ServiceJob } from "../../domain/resources/production.ts"
import { Currency } from "../../domain/resources/reference.ts"
import type { CurrencyFigures } from "../../domain/resources/reportMetrics.ts"
import type { GroupHandlers } from "../Operation.ts"
import { asRead } from "../orders/quoteState.ts"
import { BASE_CURRENCY, BASE_MINOR_UNITS, fromMinor, toMinor } from "../pricing/money.ts"
import { listRecords } from "../typedRecords.ts"
import { listAll } from "./store.ts"

const hours = (secondsTotal: number) => Math.round((secondsTotal / 3600) * 1e6) / 1e6

/** Cents of EUR of `amount` in a currency at `rate` per EUR, rounded half up. */
const baseCents = (amount: number, rate: number) => toMinor(amount / rate, BASE_MINOR_UNITS)
const euros = (cents: number) => fromMinor(cents, BASE_MINOR_UNITS)

interface TechnologyFigures {
  quotesSent: number
  baseCents: number
  productionSeconds: number
}

interface CurrencyTotals {
  quotesSent: number
  /** In the currency's minor unit. */
  minor: number
  baseCents: number
  readonly rates: Set<number>
}

const getReportMetrics: GroupHandlers<"reportMetrics">["get"] = Effect.fnUntraced(function*(context, { query }) {
  const dates = toDateFilters(query)
  const now = Date.now()
  const quotes = (yield* listAll(TicketQuote, context.appId, { dates })).map((quote) => asRead(quote, now))
  const jobs = yield* listAll(ServiceJob, context.appId, { dates })
  const minorUnits = new Map((yield* listRecords(Currency, context.appId)).map((currency) => [currency.id, currency.minorUnits]))
  const minorOf = (currencyId: string) => minorUnits.get(currencyId) ?? BASE_MINOR_UNITS

  // The technology of each quoted part, read once.
  const partIds = [...new Set(quotes.flatMap((quote) => quote.lines.flatMap((line) => line.ticketModelId ?? [])))]
  const parts = partIds.length === 0 ? [] : yield* listAll(TicketModel, context.appId, { ids: partIds })
  const technologyOf = new Map(parts.map((part) => [part.id, part.technologyId]))

  const byTechnology = new Map<string, TechnologyFigures>()
  const technology = (technologyId: string) => {
    let found = byTechnology.get(technologyId)
    if (found === undefined) {
      found = { quotesSent: 0, baseCents: 0, productionSeconds: 0 }
      byTechnology.set(technologyId, found)
    }
    return found
  }
  const byCurrency = new Map<string, CurrencyTotals>()
  const currency = (currencyId: string) => {
    let found = byCurrency.get(currencyId)
    if (found === undefined) {
      found = { quotesSent: 0, minor: 0, baseCents: 0, rates: new Set() }
      byCurrency.set(currencyId, found)
    }
    return found
  }

  let quotedCents = 0
  let accepted = 0
  for (const quote of quotes) {
    const rate = quote.exchangeRate
    const inBase = baseCents(quote.total, rate)
    quotedCents += inBase
    if (quote.state === "accepted") accepted += 1
    const totals = currency(quote.currencyId)
    totals.quotesSent += 1
    totals.minor += toMinor(quote.total, minorOf(quote.currencyId))
    totals.baseCents += inBase
    totals.rates.add(rate)
    const technologies = new Set<string>()
    for (const line of quote.lines) {
      const technologyId = line.ticketModelId === undefined ? undefined : technologyOf.get(line.ticketModelId)
      if (technologyId === undefined) continue
      technologies.add(technologyId)
      technology(technologyId).baseCents += baseCents(line.total, rate)
    }
    for (const technologyId of technologies) technology(technologyId).quotesSent += 1
  }
  let productionSeconds = 0
  for (const job of jobs) {
    productionSeconds += job.totalTime
    technology(job.technologyId).productionSeconds += job.totalTime
  }

  const currencies = [...byCurrency.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([currencyId, totals]): typeof CurrencyFigures.Type => ({
    currencyId,
    quotesSent: totals.quotesSent,
    quotedValue: fromMinor(totals.minor, minorOf(currencyId)),
    baseValue: euros(totals.baseCents),
    exchangeRates: [...totals.rates].sort((a, b) => a - b)
  }))
  return {
    from: query["createdAt[from]"] ?? query.createdAt ?? null,
    to: query["createdAt[to]"] ?? query.createdAt ?? null,
    baseCurrencyId: BASE_CURRENCY,
    quotesSent: quotes.length,
    acceptedShare: quotes.length === 0 ? 0 : accepted / quotes.length,
    quotedValue: euros(quotedCents),
    byCurrency: currencies,
    productionHours: hours(productionSeconds),
    byTechnology: [...byTechnology.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([technologyId, figures]) => ({
        technologyId,
        quotesSent: figures.quotesSent,
        quotedValue: euros(figures.baseCents),
        productionHours: hours(figures.productionSeconds)
      }))
  }
})

export const reportMetricsHandlers: GroupHandlers<"reportMetrics"> = { get: getReportMetrics }
