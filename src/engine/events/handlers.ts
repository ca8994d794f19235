/**
 * The operations of events and webhooks (src/contract/groups/webhooks.ts): the
 * endpoints, whose secret is answered only on create and rotation; the
 * event feed; the deliveries and redelivery; and a test event sent at once.
 */
import { Effect } from "effect"
import type { EventData } from "../../domain/events/catalogue.ts"
import { DEFAULT_PAGE_SIZE } from "../../domain/Resource.ts"
import { WebhookEndpoint } from "../../domain/resources/webhooks.ts"
import { recordHandlers, transactional } from "../crud.ts"
import { EngineError } from "../EngineError.ts"
import type { EngineHandlers, OperationContext } from "../Operation.ts"
import { getRecord, type RecordOf, type StoredFields } from "../typedRecords.ts"
import { sendEvent } from "./attempts.ts"
import {
  abandonDeliveriesTo,
  addSecret,
  asDelivery,
  findDelivery,
  insertDelivery,
  insertRelayedEvent,
  listDeliveries,
  listEvents,
  recordAttempt,
  removeSecrets,
  rotateSecret
} from "./EventRepository.ts"
import { WebhookSender } from "./sender.ts"
import { recordAttemptMetrics } from "./WebhookMetrics.ts"

type Endpoint = RecordOf<typeof WebhookEndpoint>

/**
 * An endpoint as stored: its URL refused as a model URL would be (scheme,
 * credentials, a private address), enabled unless said otherwise; enabling
 * it clears the reason the service disabled it for.
 */
const prepare = Effect.fnUntraced(function*(
  _context: OperationContext,
  input: StoredFields<typeof WebhookEndpoint>,
  previous: Endpoint | undefined
) {
  const sender = yield* WebhookSender
  const refused = sender.refusal(input.url)
  if (refused !== undefined) return yield* EngineError.invalid(refused)
  const enabled = input.enabled ?? true
  const disabledReason = enabled ? null : (previous?.enabled === false ? previous.disabledReason ?? null : null)
  return { ...input, enabled, disabledReason }
})

const records = recordHandlers(WebhookEndpoint, {
  prepare,
  // Its deliveries still due end with it, and its secrets go.
  removed: (_context, endpoint) => Effect.andThen(abandonDeliveriesTo(endpoint.id), removeSecrets(endpoint.id))
})

const create: EngineHandlers["webhookEndpoint"]["create"] = transactional((context, input) =>
  Effect.gen(function*() {
    const endpoint = yield* records.create(context, input)
    return { ...endpoint, secret: yield* addSecret(endpoint.id) }
  })
)

const rotate: EngineHandlers["webhookEndpoint"]["rotateSecret"] = transactional((context, { params }) =>
  Effect.gen(function*() {
    const endpoint = yield* getRecord(WebhookEndpoint, context.appId, params.id)
    return { ...endpoint, secret: yield* rotateSecret(endpoint.id) }
  })
)

/** The test event: written for this endpoint only (relayed already), and one attempt made now, not retried. */
const test: EngineHandlers["webhookEndpoint"]["test"] = Effect.fnUntraced(function*(context, { params }) {
  const endpoint = yield* getRecord(WebhookEndpoint, context.appId, params.id)
  const data: EventData<"endpoint.test"> = { endpointId: endpoint.id }
  const event = yield* insertRelayedEvent(context.appId, "endpoint.test", data, context.requestId)
  const delivery = yield* insertDelivery({ appId: context.appId, endpointId: endpoint.id, eventId: event.id, eventType: event.type }, true)
  const outcome = yield* sendEvent(endpoint, event)
  // A test measures the attempt, not a delivery's lag.
  yield* recordAttemptMetrics(outcome, undefined)
  const { succeeded, ...attempt } = outcome
  yield* recordAttempt(delivery.id, attempt, { status: succeeded ? "succeeded" : "failed", nextAttemptAt: null })
  const recorded = yield* findDelivery(delivery.id)
  return { delivery: asDelivery(recorded!), succeeded }
})

const redeliver: EngineHandlers["webhookDelivery"]["redeliver"] = Effect.fnUntraced(function*(context, { params }) {
  const delivery = yield* findDelivery(params.id, context.appId)
  if (delivery === undefined) return yield* EngineError.notFound("webhookDelivery", params.id)
  const endpoint = yield* getRecord(WebhookEndpoint, context.appId, delivery.endpointId).pipe(
    Effect.catchTag("RecordNotFound", () => EngineError.conflict(`webhook endpoint ${delivery.endpointId} was deleted: nothing to redeliver to`))
  )
  if (endpoint.enabled === false) {
    return yield* EngineError.conflict(`webhook endpoint ${endpoint.id} is disabled: enable it (PUT) before redelivering`)
  }
  return asDelivery(yield* insertDelivery(delivery))
})

export const webhookHandlers: Pick<EngineHandlers, "webhookEndpoint" | "event" | "webhookDelivery"> = {
  webhookEndpoint: {
    list: records.list,
    get: records.get,
    create,
    replace: records.replace,
    remove: records.remove,
    test,
    rotateSecret: rotate
  },
  event: {
    list: (context, { query }) => listEvents(context.appId, query, query.limit ?? DEFAULT_PAGE_SIZE, query.offset ?? 0)
  },
  webhookDelivery: {
    list: (context, { query }) => listDeliveries(context.appId, query, query.limit ?? DEFAULT_PAGE_SIZE, query.offset ?? 0),
    redeliver
  }
}
