/** Field schemas the resource definitions share. */
import { Schema } from "effect"

export const Text = (max: number) => Schema.String.check(Schema.isMaxLength(max))
export const Name = Schema.NonEmptyString.check(Schema.isMaxLength(200))
/** The id of another record (the engine checks it exists for the app). */
export const Ref = (what: string) => Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(100)).annotate({ description: `The id of a ${what}` })
export const NonNegative = Schema.Finite.check(Schema.isGreaterThanOrEqualTo(0))
export const Positive = Schema.Finite.check(Schema.isGreaterThan(0))
export const Quantity = Schema.Int.check(Schema.isGreaterThanOrEqualTo(1)).annotate({ description: "A whole number, at least 1" })
export const Money = NonNegative.annotate({ description: "An amount in the record's currency" })
export const IsoDateTime = Schema.String.check(
  Schema.makeFilter((text: string) => !Number.isNaN(Date.parse(text)) || "expected an ISO 8601 date or date-time")
)
/** Millimetres along x, y and z. */
export const Dimensions = Schema.Struct({ x: NonNegative, y: NonNegative, z: NonNegative })
export const Location = Schema.Struct({
  latitude: Schema.Finite.check(Schema.isBetween({ minimum: -90, maximum: 90 })),
  longitude: Schema.Finite.check(Schema.isBetween({ minimum: -180, maximum: 180 }))
})
export const Email = Schema.String.check(
  Schema.isPattern(/^[^\s@]+@[^\s@]+\.[^\s@]+$/, { message: "expected an e-mail address" }),
  Schema.isMaxLength(320)
).annotate({ description: "An e-mail address", examples: ["buyer@example.com"] })
