/**
 * The OpenAPI document's `webhooks` (OpenAPI 3.1): one entry per event type,
 * the POST a webhook endpoint receives, its body the type's event schema
 * (`Event.<type>`, a component the event feed shares) and its Standard
 * Webhooks headers, so that a generated client or a receiver's stub knows
 * every payload.
 */
import { EVENT_TYPES } from "../domain/events/types.ts"

const HEADERS = [
  {
    name: "webhook-id",
    description: "The event's `id`: the same in every delivery of the event; deduplicate on it",
    example: "0193f4c2-7a5e-7c1d-9a3b-5f0e2d4c6b8a"
  },
  { name: "webhook-timestamp", description: "The attempt's time, in Unix seconds", example: "1795510323" },
  {
    name: "webhook-signature",
    description: "`v1,<base64 HMAC-SHA256 of \"<webhook-id>.<webhook-timestamp>.<body>\">` per signing secret, space-separated " +
      "(two for 24 h after a rotation); verify with a Standard Webhooks library and the endpoint's `whsec_…` secret",
    example: "v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4="
  }
].map(({ description, example, name }) => ({ name, in: "header", required: true, description, schema: { type: "string" }, example }))

/** Adds `webhooks` to the document: what each endpoint subscribed to a type receives. */
export const withWebhooks = (spec: Record<string, unknown>): void => {
  spec.webhooks = Object.fromEntries(EVENT_TYPES.map((type) => [type, {
    post: {
      operationId: `webhook.${type}`,
      summary: `The ${type} event`,
      description: "Sent to each enabled webhook endpoint subscribed to the type (or `*`), at least once, retried for about " +
        "3 days until a 2xx within WEBHOOK_TIMEOUT (docs/webhooks.md).",
      parameters: HEADERS,
      requestBody: { required: true, content: { "application/json": { schema: { $ref: `#/components/schemas/Event.${type}` } } } },
      responses: { "2XX": { description: "Received: any 2xx acknowledges the delivery" } }
    }
  }]))
}
