/**
 * Money without drift. Amounts are decimals in a currency's major unit
 * (`12.5` EUR) rounded to its minor unit (the cent), and every product and
 * sum is computed in whole minor units, so `unitPrice × quantity =
 * totalPrice` and Σ line totals = total hold exactly (docs/pricing.md).
 */

/** The base currency: part and item prices, material prices and machine rates are in it; exchange rates are per 1 of it. */
export const BASE_CURRENCY = "EUR"
/** The minor unit of the base currency: cents. */
export const BASE_MINOR_UNITS = 2

const scale = (minorUnits: number) => 10 ** minorUnits

/**
 * `amount` in whole minor units, rounded half up. The product is read at 15
 * significant digits first, so a decimal such as 1.005 (stored as
 * 1.00499999…) rounds as the decimal it stands for.
 */
export const toMinor = (amount: number, minorUnits: number): number => Math.round(Number((amount * scale(minorUnits)).toPrecision(15)))

export const fromMinor = (minor: number, minorUnits: number): number => minor / scale(minorUnits)

/** `amount` rounded half up to the minor unit. */
export const round = (amount: number, minorUnits: number): number => fromMinor(toMinor(amount, minorUnits), minorUnits)

/** Whether `amount` is a whole number of minor units (no finer than a cent for EUR). */
export const isWholeMinor = (amount: number, minorUnits: number): boolean => {
  const scaled = amount * scale(minorUnits)
  return Math.abs(scaled - Math.round(scaled)) <= 1e-9 * Math.max(1, Math.abs(scaled))
}

/** `quantity` × `unitPrice`, exactly (in minor units). */
export const times = (unitPrice: number, quantity: number, minorUnits: number): number => fromMinor(toMinor(unitPrice, minorUnits) * quantity, minorUnits)

/** The sum of `amounts`, exactly (in minor units). */
export const sum = (amounts: ReadonlyArray<number>, minorUnits: number): number =>
  fromMinor(amounts.reduce((total, amount) => total + toMinor(amount, minorUnits), 0), minorUnits)

/**
 * The prices of `quantity` units that cost `cost` together (batch costs
 * included): the unit price is cost / quantity rounded half up to the minor
 * unit, and the total is that unit price × quantity, so the two always
 * agree; the total differs from the cost by at most half a minor unit per unit.
 */
export const unitAndTotal = (cost: number, quantity: number, minorUnits: number) => {
  const unit = toMinor(cost / quantity, minorUnits)
  return { unitPrice: fromMinor(unit, minorUnits), totalPrice: fromMinor(unit * quantity, minorUnits) }
}

/** A base-currency amount in a currency `rate` units per 1 of the base, rounded half up to that currency's minor unit. */
export const fromBase = (amount: number, rate: number, minorUnits: number): number => round(amount * rate, minorUnits)

/** An amount of a currency `rate` units per 1 of the base, in the base currency, rounded half up to the cent. */
export const toBase = (amount: number, rate: number): number => round(amount / rate, BASE_MINOR_UNITS)
