/** Metering: one event per authenticated call, and totals over them. */
import { Schema } from "effect"

export interface MeterEvent {
  readonly requestId: string
  readonly appId: string
  readonly secretId: string
  readonly secretHash: string
  /** The version of the secret's grants the call was decided with: the row is written only while it is current. */
  readonly grantsVersion: number
  /** The secret's mode: the test space's usage and request log are its own. */
  readonly mode: string
  /** The client's address, for the request log. */
  readonly clientAddress: string
  readonly operation: string
  readonly method: string
  readonly route: string
  readonly occurredAt: Date
}

export const UsageQuery = Schema.Struct({
  appId: Schema.optional(Schema.String),
  from: Schema.optional(Schema.String),
  to: Schema.optional(Schema.String)
})

export const UsageTotals = Schema.Struct({
  /** Every metered call in the range. */
  total: Schema.Int,
  /** Of them, the calls whose outcome (status, duration) was never recorded: their instance died first (docs/operations.md). */
  outcomeUnknown: Schema.Int,
  byOperation: Schema.Array(Schema.Struct({ operation: Schema.String, calls: Schema.Int, outcomeUnknown: Schema.Int }))
})
export type UsageTotals = typeof UsageTotals.Type
