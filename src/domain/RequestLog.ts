/**
 * The request log an app reads (GET /v1/request-log, MCP `mfg://request-log`):
 * its own calls, as the meter recorded them. A row says who called what and
 * how it ended; never a secret's value, a header or a body.
 */
import { Schema } from "effect"
import { Int32 } from "./Integers.ts"
import { DateRangeQuery, FilterText, PageLimit, PageOffset, repeatable } from "./Resource.ts"

const RequestId = Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(100))

export const RequestLogEntry = Schema.Struct({
  requestId: Schema.String.annotate({ description: "The call's `X-Request-Id`" }),
  createdAt: Schema.String.annotate({ format: "date-time", description: "When the call was authenticated and metered (UTC)" }),
  method: Schema.String.annotate({ description: "The HTTP method" }),
  route: Schema.String.annotate({ description: "The route template (`/v1/customer/:id`, `/v1/mcp`): never the ids or the query" }),
  operation: Schema.String.annotate({ description: "The operation metered: `<group>.<endpoint>` (`customer.get`), `mcp.<tool>` or `mcp.<method>`" }),
  status: Schema.NullOr(Int32).annotate({
    description: "The HTTP status answered; null for a moment after the call, until its outcome is written"
  }),
  errorType: Schema.NullOr(Schema.String).annotate({ description: "The `type` of an error answer's body (`InsufficientScope`, `NotFound`…); null otherwise" }),
  durationMs: Schema.NullOr(Schema.Number).annotate({ description: "How long the call took in the service, in milliseconds; null until written" }),
  secretId: Schema.String.annotate({ description: "The id of the secret that called (never its value)" }),
  clientAddress: Schema.NullOr(Schema.String).annotate({ description: "The client's address, as the secret's IP ranges were checked against" })
}).annotate({ identifier: "RequestLogEntry", title: "Request log entry" })
export type RequestLogEntry = typeof RequestLogEntry.Type

/** A filter of the log: one value or several (`?status=403&status=404`), bounded like every list filter. */
const filter = (value: Schema.Codec<string, string>, description: string) => Schema.optional(repeatable(value).annotate({ description }))

export const RequestLogQuery = Schema.Struct({
  requestId: filter(RequestId, "Only the calls with these `X-Request-Id`s (repeatable)"),
  operation: filter(FilterText, "Only these operations, e.g. `ticketQuote.replace` (repeatable)"),
  status: filter(
    Schema.String.check(Schema.isMaxLength(3), Schema.isPattern(/^[1-5][0-9]{2}$/, { message: "an HTTP status, 100 to 599" })).annotate({
      examples: ["403"]
    }),
    "Only the calls answered with these statuses (repeatable)"
  ),
  secretId: filter(RequestId, "Only the calls of these secrets, by the secret's id (the part of its value before the dot; never the value) (repeatable)"),
  createdAt: DateRangeQuery.createdAt,
  "createdAt[from]": DateRangeQuery["createdAt[from]"],
  "createdAt[to]": DateRangeQuery["createdAt[to]"],
  limit: Schema.optional(PageLimit),
  offset: Schema.optional(PageOffset)
})
export type RequestLogQuery = typeof RequestLogQuery.Type
