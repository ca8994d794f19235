/** Field schemas the resource definitions share. */
import { Schema } from "effect"
import { Int32 } from "../Integers.ts"
import { CASE_INSENSITIVE, isDateOrDateTime } from "../Resource.ts"

export const Text = (max: number) => Schema.String.check(Schema.isMaxLength(max))
export const Name = Schema.NonEmptyString.check(Schema.isMaxLength(200))
/** The id of another record (the engine checks it exists for the app). */
export const Ref = (what: string) => Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(100)).annotate({ description: `The id of a ${what}` })
export const NonNegative = Schema.Finite.check(Schema.isGreaterThanOrEqualTo(0))
export const Positive = Schema.Finite.check(Schema.isGreaterThan(0))
/** The most pieces of one part or item: far above any order quoted here, so a larger number is a slip, refused at once. */
export const MAX_QUANTITY = 1_000_000
export const Quantity = Int32.check(Schema.isBetween({ minimum: 1, maximum: MAX_QUANTITY })).annotate({
  description: `How many: a whole number from 1 to ${MAX_QUANTITY}`,
  examples: [10]
})
export const Money = NonNegative.annotate({ description: "An amount in the record's currency" })
/**
 * A point in time a client writes: an RFC 3339 date-time, which is what the
 * engine writes and answers, or a date alone, which means 00:00 UTC of that
 * day; its JSON Schema says both (`format` `date-time` or `date`).
 */
export const IsoDateTime = Schema.String.annotate({
  description: "An ISO 8601 date-time with its offset, e.g. 2026-12-01T17:00:00Z (a date alone, 2026-12-01, is 00:00 UTC)",
  examples: ["2026-12-01T17:00:00Z"]
}).check(
  // The longest ISO 8601 date-time: nanoseconds and an offset.
  Schema.isMaxLength(40),
  isDateOrDateTime()
)
/** Millimetres along x, y and z. */
export const Dimensions = Schema.Struct({ x: NonNegative, y: NonNegative, z: NonNegative })
export const Location = Schema.Struct({
  latitude: Schema.Finite.check(Schema.isBetween({ minimum: -90, maximum: 90 })),
  longitude: Schema.Finite.check(Schema.isBetween({ minimum: -180, maximum: 180 }))
})
/** An e-mail address: stored as given, matched by list filters whatever its case (the mark is on the string, before its checks). */
export const Email = Schema.String.annotate({ [CASE_INSENSITIVE]: true }).check(
  Schema.isPattern(/^[^\s@]+@[^\s@]+\.[^\s@]+$/, { message: "expected an e-mail address" }),
  Schema.isMaxLength(320)
).annotate({ description: "An e-mail address; list filters on it ignore case", examples: ["buyer@example.com"] })
