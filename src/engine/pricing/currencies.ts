/**
 * What pricing needs of a currency: its minor unit and its reference rate to
 * the base currency (units per 1 EUR), from the global reference data.
 */
import { Effect } from "effect"
import { Currency } from "../../domain/resources/reference.ts"
import { findRecord } from "../crud.ts"
import type { OperationContext, Step } from "../Operation.ts"

export interface CurrencyTerms {
  readonly currencyId: string
  readonly minorUnits: number
  /** Units of the currency per 1 EUR. */
  readonly exchangeRate: number
}

/** The terms of a currency the app sees; undefined for one it does not. */
export const currencyTerms = (context: OperationContext, currencyId: string): Step<CurrencyTerms | undefined> =>
  Effect.map(
    findRecord(Currency, context.appId, currencyId),
    (currency) => currency === undefined ? undefined : { currencyId: currency.id, minorUnits: currency.minorUnits, exchangeRate: currency.exchangeRate }
  )
