/**
 * What pricing needs of a currency: its minor unit, from the global
 * reference data, and its rate to the base currency (units per 1 EUR) as the
 * app reads it: its own, else the reference rate (exchangeRates.ts).
 */
import { Effect } from "effect"
import type { OperationContext, Step } from "../Operation.ts"
import { findCurrency } from "./exchangeRates.ts"

export interface CurrencyTerms {
  readonly currencyId: string
  readonly minorUnits: number
  /** Units of the currency per 1 EUR. */
  readonly exchangeRate: number
}

/** The terms of a currency the app sees; undefined for one it does not. */
export const currencyTerms = (context: OperationContext, currencyId: string): Step<CurrencyTerms | undefined> =>
  Effect.map(
    findCurrency(context, currencyId),
    (currency) => currency === undefined ? undefined : { currencyId: currency.id, minorUnits: currency.minorUnits, exchangeRate: currency.exchangeRate }
  )
