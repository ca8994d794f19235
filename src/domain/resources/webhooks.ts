/**
 * Webhook endpoints and their deliveries: where an app's events are pushed
 * (docs/webhooks.md). An endpoint's signing secret is never part of its
 * record: it is answered once, when made or rotated.
 */
import { Schema } from "effect"
import { EVENT_TYPES, EventTypeSchema } from "../events/types.ts"
import { Int32 } from "../Integers.ts"
import { NonEmptyList } from "../NonEmptyList.ts"
import { DateRangeQuery, defineResource, PageLimit, PageOffset, repeatable } from "../Resource.ts"
import { Ref, Text } from "./fields.ts"

const WebhookUrl = Schema.String.check(
  Schema.isPattern(/^https?:\/\/\S+$/u, { message: "an http(s) URL" }),
  Schema.isMaxLength(2000)
).annotate({
  description: "Where the events are POSTed: an http(s) URL on a public address (a private one is refused unless MODEL_FETCH_ALLOW_PRIVATE is set)",
  examples: ["https://erp.example.com/hooks/manufacturing"]
})

const Subscribed = Schema.Union([EventTypeSchema, Schema.Literal("*")])

export const WebhookEndpoint = defineResource({
  name: "webhookEndpoint",
  path: "/webhook-endpoint",
  title: "Webhook endpoint",
  fields: {
    url: WebhookUrl,
    events: NonEmptyList(Subscribed, EVENT_TYPES.length + 1).annotate({
      description: "The event types delivered to the endpoint; `*` is every type"
    }),
    enabled: Schema.optional(Schema.Boolean).annotate({
      description: "Whether events are delivered (default true); an endpoint whose delivery fails for 3 days is disabled"
    }),
    description: Schema.optional(Text(500))
  },
  computed: {
    disabledReason: Schema.optional(
      Schema.NullOr(Schema.String).annotate({
        description: "Why the service disabled the endpoint, while it is disabled; null once enabled again"
      })
    )
  },
  filters: ["enabled"]
})

/** What a create and a secret rotation answer: the endpoint and its signing secret, shown this once. */
export const WebhookEndpointWithSecret = Schema.Struct({
  ...WebhookEndpoint.record.fields,
  secret: Schema.String.annotate({
    description: "The signing secret (`whsec_…`, Standard Webhooks): shown only here; verify each delivery's `webhook-signature` with it"
  })
}).annotate({ title: "Webhook endpoint with its secret" })

export const DeliveryStatus = Schema.Literals(["pending", "succeeded", "failed"]).annotate({
  description: "pending: not yet answered with a 2xx and still retried; succeeded: a 2xx; failed: every attempt failed (or the endpoint was removed)"
})

export const DeliveryAttempt = Schema.Struct({
  at: Schema.String.annotate({ description: "When the request was sent" }),
  statusCode: Schema.NullOr(Int32).annotate({ description: "The receiver's status; null when it did not answer" }),
  latencyMs: Int32,
  error: Schema.optional(Schema.String.annotate({ description: "Why it failed: a non-2xx status, a timeout, a refused connection" })),
  responseSnippet: Schema.optional(Schema.String.annotate({ description: "The first 500 characters of the receiver's answer" }))
})

export const WebhookDelivery = Schema.Struct({
  id: Schema.String,
  endpointId: Schema.String,
  eventId: Schema.String,
  eventType: EventTypeSchema,
  status: DeliveryStatus,
  attempts: Schema.Array(DeliveryAttempt).annotate({ description: "Every attempt, oldest first (the last 50)" }),
  nextAttemptAt: Schema.NullOr(Schema.String).annotate({ description: "When the next attempt is due, while pending" }),
  createdAt: Schema.String,
  updatedAt: Schema.String
}).annotate({ title: "Webhook delivery" })

export const WebhookDeliveryQuery = Schema.Struct({
  endpointId: Schema.optional(Ref("webhook endpoint")),
  eventId: Schema.optional(Ref("event")),
  status: Schema.optional(DeliveryStatus),
  ...DateRangeQuery,
  limit: Schema.optional(PageLimit),
  offset: Schema.optional(PageOffset)
})

export const EventQuery = Schema.Struct({
  type: Schema.optional(repeatable(EventTypeSchema).annotate({ description: "Only these types (repeatable)" })),
  requestId: Schema.optional(
    Schema.String.check(Schema.isMaxLength(200)).annotate({
      description: "Only the events written by the call with this `X-Request-Id` (the answer of every call carries its own)"
    })
  ),
  createdAt: DateRangeQuery.createdAt,
  "createdAt[from]": DateRangeQuery["createdAt[from]"],
  "createdAt[to]": DateRangeQuery["createdAt[to]"],
  limit: Schema.optional(PageLimit),
  offset: Schema.optional(PageOffset)
})

/** The answer of POST /webhook-endpoint/{id}/test: one attempt, made at once. */
export const WebhookTestResult = Schema.Struct({
  delivery: WebhookDelivery,
  succeeded: Schema.Boolean
}).annotate({ title: "Webhook test result" })
