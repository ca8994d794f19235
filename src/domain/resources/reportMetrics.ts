/**
 * `GET /report-metrics`: quoting and production figures over the records
 * created in a period, the period given as the spec's date filter
 * (`createdAt`, or `createdAt[from]`/`createdAt[to]`). Values are reported
 * per currency and converted to the base currency (EUR) at the rate each
 * quote recorded.
 */
import { Schema } from "effect"
import { Int32 } from "../Integers.ts"
import { DateRangeQuery } from "../Resource.ts"
import { Money, NonNegative, Positive } from "./fields.ts"

export const ReportMetricsQuery = Schema.Struct({
  createdAt: DateRangeQuery.createdAt,
  "createdAt[from]": DateRangeQuery["createdAt[from]"],
  "createdAt[to]": DateRangeQuery["createdAt[to]"]
})

const BaseValue = Money.annotate({ description: "In the base currency (EUR)" })

export const CurrencyFigures = Schema.Struct({
  currencyId: Schema.String,
  quotesSent: Int32,
  quotedValue: Money.annotate({ description: "Sum of the quotes' totals, in this currency" }),
  baseValue: BaseValue.annotate({ description: "The same quotes in EUR: each total divided by its quote's exchangeRate, rounded to the cent, summed" }),
  exchangeRates: Schema.Array(Positive).annotate({ description: "The rates these quotes used (units per 1 EUR), ascending; usually one" })
})

export const ReportMetrics = Schema.Struct({
  from: Schema.NullOr(Schema.String).annotate({ description: "Start of the period as asked (`createdAt[from]`, or `createdAt`), null when open" }),
  to: Schema.NullOr(Schema.String).annotate({ description: "End of the period as asked (`createdAt[to]`, or `createdAt`), null when open" }),
  baseCurrencyId: Schema.String.annotate({ description: "The currency of every converted value", examples: ["EUR"] }),
  quotesSent: Int32,
  acceptedShare: Schema.Finite,
  quotedValue: BaseValue,
  byCurrency: Schema.Array(CurrencyFigures),
  productionHours: NonNegative,
  byTechnology: Schema.Array(Schema.Struct({
    technologyId: Schema.String,
    quotesSent: Int32,
    quotedValue: BaseValue,
    productionHours: NonNegative
  }))
}).annotate({ title: "Report metrics" })
