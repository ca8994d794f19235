/**
 * Events and webhooks: the app's event feed, the endpoints its events are
 * pushed to (Standard Webhooks signatures) and their deliveries. See
 * docs/webhooks.md.
 */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { NotFound } from "../../domain/Errors.ts"
import { Event } from "../../domain/events/Event.ts"
import {
  EventQuery,
  WebhookDelivery,
  WebhookDeliveryQuery,
  WebhookEndpoint,
  WebhookEndpointWithSecret,
  WebhookTestResult
} from "../../domain/resources/webhooks.ts"
import { COMMON_ERRORS, get, IdParam, list, pagedList, PAGING, remove, replace, tag } from "../endpoints.ts"

const SECRET_ONCE = "The answer carries the signing secret (`whsec_…`): it is shown only in this answer, keep it."

const withSecret = WebhookEndpointWithSecret.annotate({ identifier: "WebhookEndpointWithSecret" })

export const WebhookEndpointGroup = HttpApiGroup.make("webhookEndpoint")
  .add(
    list(WebhookEndpoint),
    HttpApiEndpoint.post("create", "/webhook-endpoint", {
      payload: WebhookEndpoint.input,
      success: withSecret,
      error: COMMON_ERRORS
    }).annotate(OpenApi.Summary, "Create a webhook endpoint").annotate(
      OpenApi.Description,
      `The app's events of the types in \`events\` are POSTed to \`url\`, signed (Standard Webhooks). ${SECRET_ONCE} ` +
        "A URL on a private, loopback or link-local address is a 400 unless MODEL_FETCH_ALLOW_PRIVATE is set."
    ),
    get(WebhookEndpoint),
    replace(WebhookEndpoint),
    remove(WebhookEndpoint),
    HttpApiEndpoint.post("test", "/webhook-endpoint/:id/test", {
      params: IdParam,
      success: WebhookTestResult,
      error: [...COMMON_ERRORS, NotFound]
    }).annotate(OpenApi.Summary, "Send a test event to a webhook endpoint").annotate(
      OpenApi.Description,
      "Writes an `endpoint.test` event for this endpoint only and makes one delivery attempt at once (not retried): the answer " +
        "is that delivery, and `succeeded` says whether the endpoint answered a 2xx within WEBHOOK_TIMEOUT."
    ),
    HttpApiEndpoint.post("rotateSecret", "/webhook-endpoint/:id/rotate-secret", {
      params: IdParam,
      success: withSecret,
      error: [...COMMON_ERRORS, NotFound]
    }).annotate(OpenApi.Summary, "Rotate a webhook endpoint's signing secret").annotate(
      OpenApi.Description,
      `A new secret signs every delivery from now on; for 24 hours each delivery is signed with the previous one too ` +
        `(two \`v1,\` signatures in \`webhook-signature\`), so the receiver can switch without losing one. ${SECRET_ONCE}`
    )
  )
  .annotateMerge(tag("Webhook endpoint", "Where the app's events are pushed, signed with Standard Webhooks signatures."))

export const EventGroup = HttpApiGroup.make("event")
  .add(
    HttpApiEndpoint.get("list", "/event", {
      query: EventQuery,
      success: Schema.Array(Event),
      error: COMMON_ERRORS
    }).annotate(OpenApi.Summary, "List the app's events").annotate(
      OpenApi.Description,
      "Every change the engine announced, in the order written, for consumers that poll; `type` filters by event type " +
        `(repeatable) and \`createdAt\` by date or range. ${PAGING}`
    ).annotate(OpenApi.Transform, pagedList)
  )
  .annotateMerge(tag("Event", "The changes the engine made: the same events webhooks deliver (docs/events.md)."))

const delivery = WebhookDelivery.annotate({ identifier: "WebhookDelivery" })

export const WebhookDeliveryGroup = HttpApiGroup.make("webhookDelivery")
  .add(
    HttpApiEndpoint.get("list", "/webhook-delivery", {
      query: WebhookDeliveryQuery,
      success: Schema.Array(delivery),
      error: COMMON_ERRORS
    }).annotate(OpenApi.Summary, "List webhook deliveries").annotate(
      OpenApi.Description,
      `Each event sent to each endpoint, with its attempts (status, latency, the start of the answer). ${PAGING}`
    ).annotate(OpenApi.Transform, pagedList),
    HttpApiEndpoint.post("redeliver", "/webhook-delivery/:id/redeliver", {
      params: IdParam,
      success: delivery,
      error: [...COMMON_ERRORS, NotFound]
    }).annotate(OpenApi.Summary, "Deliver an event again").annotate(
      OpenApi.Description,
      "A new delivery of the same event (same `webhook-id`) to the same endpoint, with its own attempts and retries; " +
        "the endpoint must still exist and be enabled (a 409 otherwise)."
    )
  )
  .annotateMerge(tag("Webhook delivery", "The attempts to push each event to each endpoint."))
