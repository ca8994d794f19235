/**
 * Whole numbers as the API's schemas state them: every integer of a body,
 * parameter or answer fits 32 bits, and its JSON Schema says so
 * (`format: int32`), stated by the check that holds it.
 */
import { Schema } from "effect"

export const INT32_MIN = -2_147_483_648
export const INT32_MAX = 2_147_483_647

/** At most 32 bits: `format: int32` in JSON Schema. */
export const isInt32 = Schema.makeFilter(
  (n: number) => (n >= INT32_MIN && n <= INT32_MAX) || "expected a 32-bit integer",
  { toJsonSchema: () => ({ format: "int32" }) }
)

/**
 * A whole number with no bound of its own: JSON Schema `type: integer` and
 * nothing more (Schema.Int states the safe-integer range, ±9007199254740991,
 * as bounds, which no field of the API means). Add a check for a real bound.
 */
export const Integer = Schema.Number.check(Schema.isInt({ toJsonSchema: () => ({ type: "integer" }) }))

/** A whole number within 32 bits; narrower bounds are checks after it. */
export const Int32 = Integer.check(isInt32)
