/**
 * Exchange rates as an app reads them: each currency's reference rate
 * (referenceData.ts), replaced by the app's own where it set one with
 * `PUT /currency/{id}/exchange-rate`, kept per app and currency in
 * `engine_exchange_rate` (migration 0009). Every read of a currency and the
 * rate of every new quote go through here; a quote records the rate it
 * used, so a later change of the rate leaves it as it was made.
 */
import { Effect } from "effect"
import { Currency } from "../../domain/resources/reference.ts"
import { recordHandlers } from "../crud.ts"
import { EngineError } from "../EngineError.ts"
import type { GroupHandlers, OperationContext } from "../Operation.ts"
import { findRecord, type RecordOf } from "../typedRecords.ts"
import { appRateRows, removeAppRate, setAppRate } from "./ExchangeRateRepository.ts"
import { BASE_CURRENCY } from "./money.ts"

type CurrencyRecord = RecordOf<typeof Currency>
type CurrencyHandlers = GroupHandlers<"currency">

/** An app's own rate of a currency, and when it set it. */
interface AppRate {
  readonly exchangeRate: number
  readonly updatedAt: string
}

/** The app's own rates, by currency id (those of `currencyIds` only, when given). */
const appRates = Effect.fnUntraced(function*(appId: string, currencyIds?: ReadonlyArray<string>) {
  const rows = yield* appRateRows(appId, currencyIds)
  return new Map(rows.map((row) => [row.currency_id, {
    exchangeRate: Number(row.exchange_rate),
    updatedAt: new Date(Math.round(Number(row.updated_ms))).toISOString()
  }]))
})

/** The currency as the app reads it: with the app's own rate, when it set one. */
const asRead = (currency: CurrencyRecord, rates: ReadonlyMap<string, AppRate>): CurrencyRecord => {
  const own = rates.get(currency.id)
  return own === undefined ? currency : { ...currency, exchangeRate: own.exchangeRate, updatedAt: own.updatedAt }
}

/** The currency with this id as the app reads it; undefined when there is none. */
export const findCurrency = Effect.fnUntraced(function*(context: OperationContext, id: string) {
  const currency = yield* findRecord(Currency, context.appId, id)
  if (currency === undefined) return undefined
  return asRead(currency, yield* appRates(context.appId, [currency.id]))
})

/**
 * `PUT /currency/{id}/exchange-rate`: the app's own rate of the currency
 * (units per 1 EUR). EUR's is 1 (422 naming `exchangeRate` otherwise); a
 * rate equal to the reference rate drops the app's own, so the reference
 * rate applies again, as it is.
 */
const setExchangeRate: CurrencyHandlers["setExchangeRate"] = Effect.fnUntraced(function*(context, { params: { id }, payload: { exchangeRate } }) {
  const currency = yield* findRecord(Currency, context.appId, id)
  if (currency === undefined) return yield* EngineError.notFound("currency", id)
  if (currency.id === BASE_CURRENCY && exchangeRate !== 1) {
    return yield* EngineError.invalid(`exchangeRate: ${BASE_CURRENCY} is the base currency: its rate is 1, not ${exchangeRate}`)
  }
  if (exchangeRate === currency.exchangeRate) {
    yield* removeAppRate(context.appId, currency.id)
    return currency
  }
  const updatedAt = new Date().toISOString()
  yield* setAppRate(context.appId, currency.id, exchangeRate, updatedAt)
  return { ...currency, exchangeRate, updatedAt }
})

const currencies = recordHandlers(Currency)

/** The currency group: the reference data's reads with the app's own rates, and the write of one. */
export const currencyHandlers: CurrencyHandlers = {
  list: Effect.fnUntraced(function*(context, input) {
    const page = yield* currencies.list(context, input)
    if (page.items.length === 0) return page
    const rates = yield* appRates(context.appId)
    return { ...page, items: page.items.map((currency) => asRead(currency, rates)) }
  }),
  get: (context, { params: { id } }) => Effect.map(findCurrency(context, id), (found) => found ?? null),
  setExchangeRate
}
