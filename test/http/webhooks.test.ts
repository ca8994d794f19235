/**
 * Webhooks through HTTP, with a real receiver that verifies every delivery
 * with the `standardwebhooks` library: endpoints and their secret (shown
 * once, rotated), the test event, deliveries with retries on a 500 and on a
 * timeout, redelivery, the event feed, and the SSRF refusal of a private URL.
 * A call's events are attempted first by its own instance's dispatcher, at
 * once; events written outside a call (`emit` here, as quote expiry writes
 * them) and deliveries whose lease ran out are the relay's.
 */
import { assert, layer } from "@effect/vitest"
import { Duration, Effect, Fiber, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { Webhook } from "standardwebhooks"
import { EVENT_TYPES } from "../../src/domain/events/types.ts"
import { DEFAULT_MODEL_FETCH } from "../../src/domain/ModelSettings.ts"
import { DEFAULT_WEBHOOKS } from "../../src/domain/WebhookSettings.ts"
import { attemptDelivery, disableEndpointAfter, MAX_ATTEMPTS } from "../../src/engine/events/attempts.ts"
import { recordEvent } from "../../src/engine/events/outbox.ts"
import { FALLBACK_GRACE } from "../../src/engine/events/relay.ts"
import { PER_ENDPOINT_CONCURRENCY, webhookSenderLayer } from "../../src/engine/events/sender.ts"
import { RecordRepository } from "../../src/engine/RecordRepository.ts"
import { backends } from "../support/backends.ts"
import { TestApp, TestClient } from "../support/TestApp.ts"
import { type Received, WebhookReceiver, WebhookReceiverLive } from "../support/webhookReceiver.ts"

const TIMEOUT = Duration.seconds(1)

/** Verifies a delivery as a receiver would: the signature over the exact body, with the endpoint's secret. */
const verified = (secret: string, request: Received) => new Webhook(secret).verify(request.body, request.headers) as any

for (const backend of backends) {
  const app = TestApp(backend, {
    modelFetch: { ...DEFAULT_MODEL_FETCH, allowPrivate: true },
    webhooks: { ...DEFAULT_WEBHOOKS, timeout: TIMEOUT }
  })
  layer(Layer.merge(app, WebhookReceiverLive), { timeout: 120_000, excludeTestServices: true })(`Webhooks (${backend})`, (it) => {
    const setup = Effect.gen(function*() {
      const client = yield* TestClient
      const receiver = yield* WebhookReceiver
      const appId = `webhooks-${Math.random().toString(36).slice(2)}`
      const { value: secret } = yield* client.createSecret(appId)
      const call = (method: string, path: string, body?: unknown) => client.call(method, path, { secret, ...(body === undefined ? {} : { body }) })
      const ok = (method: string, path: string, body?: unknown) =>
        Effect.flatMap(
          call(method, path, body),
          (reply) => reply.status === 200 ? Effect.succeed(reply.json()) : Effect.die(new Error(`${method} ${path}: ${reply.status} ${reply.text}`))
        )
      const path = `/hooks/${appId}`
      /** A state change's event, written as the engine writes it (in its own transaction). */
      const emit = Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        return yield* sql.withTransaction(recordEvent(appId, "endpoint.test", { endpointId: "emitted-by-the-test" }))
      }).pipe(Effect.provide(RecordRepository.layer), Effect.orDie)
      /** A state change made through the API: a service job, whose `service_job.created` the call writes. */
      const change = Effect.gen(function*() {
        const job = yield* ok("POST", "/v1/service-job", { name: "Webhook test", technologyId: "fdm", ticketModelIds: [] })
        const events: ReadonlyArray<{ readonly id: string; readonly createdAt: string; readonly data: any }> = yield* ok(
          "GET",
          "/v1/event?type=service_job.created"
        )
        return events.find((event) => event.data.object.id === job.id)!
      })
      /** A delivery's columns the API does not answer. */
      const deliveryRow = (id: string) =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const [row] = yield* sql<{ started: boolean; leased: boolean }>`
            SELECT started, claimed_until IS NOT NULL AS leased FROM engine_webhook_delivery WHERE id = ${id}`
          return row!
        }).pipe(Effect.orDie)
      return { client, receiver, appId, secret, call, ok, path, emit, change, deliveryRow }
    })

    it.effect("a call's event is attempted first by its own instance at once, without a workflow; a retry is its workflow's", () =>
      Effect.gen(function*() {
        const { ok, receiver, path, change, deliveryRow } = yield* setup
        const failing = `${path}/first-fails`
        const endpoint = yield* ok("POST", "/v1/webhook-endpoint", { url: receiver.url(failing), events: ["service_job.created"] })
        const quick = yield* ok("POST", "/v1/webhook-endpoint", { url: receiver.url(path), events: ["service_job.created"] })
        receiver.plan(failing, [{ status: 500 }])

        const event = yield* change
        const [delivered] = yield* receiver.waitFor(path, 1)
        const [failed] = yield* receiver.waitFor(failing, 1)
        // The relay would fan the event out FALLBACK_GRACE after its write at the earliest.
        for (const request of [delivered!, failed!]) {
          assert.strictEqual(verified(request === delivered ? quick.secret : endpoint.secret, request).id, event.id)
          assert.isBelow(request.at - Date.parse(event.createdAt), Duration.toMillis(FALLBACK_GRACE))
        }
        yield* Effect.sleep("300 millis")
        const [done] = yield* ok("GET", `/v1/webhook-delivery?endpointId=${quick.id}`)
        assert.strictEqual(done.status, "succeeded")
        assert.deepStrictEqual(done.attempts.map((attempt: any) => attempt.statusCode), [204])
        // Delivered by the dispatcher's lease-holding attempt; no workflow was ever started for it.
        assert.deepStrictEqual(yield* deliveryRow(done.id), { started: false, leased: true })

        // The 500 is retried about 5 s later (±20 %) by the workflow the dispatcher handed the delivery to, as attempt 2.
        const [, retried] = yield* receiver.waitFor(failing, 2)
        assert.isAtLeast(retried!.at - failed!.at, 3_900)
        yield* Effect.sleep("300 millis")
        const [pendingThenDone] = yield* ok("GET", `/v1/webhook-delivery?endpointId=${endpoint.id}`)
        assert.strictEqual(pendingThenDone.status, "succeeded")
        assert.deepStrictEqual(pendingThenDone.attempts.map((attempt: any) => attempt.statusCode), [500, 204])
        assert.deepStrictEqual(yield* deliveryRow(pendingThenDone.id), { started: true, leased: true })
        // Past the relay's grace, still one delivery per endpoint: the relay did not fan the event out again.
        assert.strictEqual((yield* ok("GET", `/v1/webhook-delivery?eventId=${event.id}`)).length, 2)
        assert.strictEqual(receiver.received(path).length, 1)
      }))

    it.effect("a delivery whose lease ran out unattempted (its instance died) is started by the relay; one still leased is not", () =>
      Effect.gen(function*() {
        const { ok, receiver, path, appId, deliveryRow } = yield* setup
        const endpoint = yield* ok("POST", "/v1/webhook-endpoint", { url: receiver.url(path), events: ["*"] })
        const sql = yield* SqlClient.SqlClient
        // What a dispatcher leaves when its instance dies between fan-out and attempt: events relayed, deliveries leased.
        const leased = (lease: string) =>
          Effect.gen(function*() {
            const eventId = `lease-${lease}-${Math.random().toString(36).slice(2)}`
            const deliveryId = `delivery-${eventId}`
            yield* sql`
              INSERT INTO engine_event (id, app_id, type, created_at, data, relayed)
              VALUES (${eventId}, ${appId}, 'endpoint.test', now(), ${JSON.stringify({ endpointId: endpoint.id })}::jsonb, true)`
            yield* sql`
              INSERT INTO engine_webhook_delivery (id, app_id, endpoint_id, event_id, event_type, status, next_attempt_at, claimed_until, created_at, updated_at)
              VALUES (${deliveryId}, ${appId}, ${endpoint.id}, ${eventId}, 'endpoint.test', 'pending', now(),
                now() + ${lease}::interval, now(), now())`
            return { eventId, deliveryId }
          }).pipe(Effect.orDie)
        const expired = yield* leased("-1 second")
        const current = yield* leased("1 hour")

        const [request] = yield* receiver.waitFor(path, 1)
        assert.strictEqual(verified(endpoint.secret, request!).id, expired.eventId)
        yield* Effect.sleep("1500 millis")
        // The relay looks every 250 ms: the delivery still leased has had six looks and no attempt.
        assert.deepStrictEqual(receiver.received(path).map((each) => each.headers["webhook-id"]), [expired.eventId])
        const [taken] = yield* ok("GET", `/v1/webhook-delivery?eventId=${expired.eventId}`)
        assert.strictEqual(taken.status, "succeeded")
        assert.deepStrictEqual(taken.attempts.map((attempt: any) => attempt.statusCode), [204])
        assert.deepStrictEqual(yield* deliveryRow(expired.deliveryId), { started: true, leased: true })
        const [waiting] = yield* ok("GET", `/v1/webhook-delivery?eventId=${current.eventId}`)
        assert.deepStrictEqual([waiting.status, waiting.attempts], ["pending", []])
        assert.deepStrictEqual(yield* deliveryRow(current.deliveryId), { started: false, leased: true })
      }).pipe(Effect.orDie))

    it.effect("an endpoint's secret is answered on create only, and the test event arrives signed with it", () =>
      Effect.gen(function*() {
        const { ok, call, receiver, path } = yield* setup
        const created = yield* ok("POST", "/v1/webhook-endpoint", { url: receiver.url(path), events: ["*"] })
        assert.match(created.secret, /^whsec_[A-Za-z0-9+/=]{32}$/)
        assert.strictEqual(created.enabled, true)
        const read = yield* ok("GET", `/v1/webhook-endpoint/${created.id}`)
        assert.notProperty(read, "secret")
        assert.deepStrictEqual((yield* ok("GET", "/v1/webhook-endpoint")).map((each: any) => each.id), [created.id])

        const testCall = yield* call("POST", `/v1/webhook-endpoint/${created.id}/test`)
        assert.strictEqual(testCall.status, 200)
        const tested = testCall.json()
        assert.strictEqual(tested.succeeded, true)
        assert.strictEqual(tested.delivery.status, "succeeded")
        assert.strictEqual(tested.delivery.attempts[0].statusCode, 204)
        const [request] = receiver.received(path)
        const event = verified(created.secret, request!)
        assert.strictEqual(event.type, "endpoint.test")
        assert.strictEqual(event.id, request!.headers["webhook-id"])
        assert.deepStrictEqual(event.data, { endpointId: created.id })
        // Signed with another secret, the same delivery does not verify.
        assert.throws(() => verified(`whsec_${Buffer.alloc(24, 7).toString("base64")}`, request!))

        const feed = yield* ok("GET", "/v1/event?type=endpoint.test")
        assert.deepStrictEqual(feed.map((each: any) => each.id), [event.id])
        // The events a call wrote, by its X-Request-Id.
        const byCall = yield* ok("GET", `/v1/event?requestId=${testCall.headers.get("x-request-id")}`)
        assert.deepStrictEqual(byCall.map((each: any) => each.id), [event.id])
        assert.deepStrictEqual(yield* ok("GET", "/v1/event?requestId=another-call"), [])
        const missing = yield* call("POST", "/v1/webhook-endpoint/no-such-endpoint/test")
        assert.strictEqual(missing.status, 404)
      }))

    it.effect("a test with an Idempotency-Key holds no transaction while the receiver answers, and its retry answers its result", () =>
      Effect.gen(function*() {
        const { ok, receiver, path, client, secret } = yield* setup
        const slow = `${path}/keyed-test`
        const created = yield* ok("POST", "/v1/webhook-endpoint", { url: receiver.url(slow), events: ["*"] })
        receiver.plan(slow, [{ status: 200, delayMs: 800 }])
        const key = crypto.randomUUID()
        const keyedTest = client.call("POST", `/v1/webhook-endpoint/${created.id}/test`, { secret, headers: { "idempotency-key": key } })
        const running = yield* Effect.forkChild(Effect.zip(keyedTest, Effect.sync(() => performance.now())))
        yield* receiver.waitFor(slow, 1)
        // Meanwhile the app's other calls go on: on the embedded database a transaction held open would stop them.
        yield* ok("GET", "/v1/webhook-endpoint")
        const readAt = performance.now()
        const [tested, testedAt] = yield* Fiber.join(running)
        assert.strictEqual(tested.status, 200, tested.text)
        assert.isAbove(testedAt - readAt, 300, "the read waited for the test's delivery")
        const again = yield* client.call("POST", `/v1/webhook-endpoint/${created.id}/test`, { secret, headers: { "idempotency-key": key } })
        assert.strictEqual(again.headers.get("idempotent-replayed"), "true")
        assert.strictEqual(again.text, tested.text)
        assert.lengthOf(receiver.received(slow), 1)
      }))

    it.effect("an event is delivered to every subscribed endpoint, retried after a 500 and after a timeout", () =>
      Effect.gen(function*() {
        const { ok, receiver, path, emit } = yield* setup
        const failing = `${path}/failing`
        const slow = `${path}/slow`
        const other = `${path}/other-type`
        const first = yield* ok("POST", "/v1/webhook-endpoint", { url: receiver.url(failing), events: ["endpoint.test"] })
        const second = yield* ok("POST", "/v1/webhook-endpoint", { url: receiver.url(slow), events: ["*"] })
        yield* ok("POST", "/v1/webhook-endpoint", { url: receiver.url(other), events: ["ticket.quoted"] })
        receiver.plan(failing, [{ status: 500 }])
        receiver.plan(slow, [{ status: 200, delayMs: Duration.toMillis(TIMEOUT) * 3 }])

        const eventId = yield* emit
        const [failed, retried] = yield* receiver.waitFor(failing, 2)
        const [timedOut, answered] = yield* receiver.waitFor(slow, 2)
        for (const request of [failed!, retried!]) assert.strictEqual(verified(first.secret, request).id, eventId)
        for (const request of [timedOut!, answered!]) assert.strictEqual(verified(second.secret, request).id, eventId)
        // The first retry waits 5 s, give or take its jitter (20 %).
        assert.isAtLeast(retried!.at - failed!.at, 3_900)
        assert.deepStrictEqual(receiver.received(other), [])

        yield* Effect.sleep("300 millis")
        const deliveries = yield* ok("GET", `/v1/webhook-delivery?endpointId=${first.id}`)
        assert.strictEqual(deliveries.length, 1)
        assert.strictEqual(deliveries[0].status, "succeeded")
        assert.deepStrictEqual(deliveries[0].attempts.map((attempt: any) => attempt.statusCode), [500, 204])
        assert.strictEqual(deliveries[0].attempts[0].error, "the endpoint answered 500")
        assert.strictEqual(deliveries[0].attempts[0].responseSnippet, "answered 500")
        const slowDeliveries = yield* ok("GET", `/v1/webhook-delivery?endpointId=${second.id}`)
        assert.deepStrictEqual(slowDeliveries[0].attempts.map((attempt: any) => attempt.statusCode), [null, 204])
        assert.match(slowDeliveries[0].attempts[0].error, /no answer within 1s \(WEBHOOK_TIMEOUT\)/)
      }))

    it.effect("a slow endpoint gets at most 4 requests at a time and holds no other endpoint back", () =>
      Effect.gen(function*() {
        const { ok, receiver, path, change } = yield* setup
        const slow = `${path}/slow-receiver`
        const quick = `${path}/quick-receiver`
        const events = 12
        // Each answer in 800 ms, within WEBHOOK_TIMEOUT (1 s): nothing fails, it is only slow.
        receiver.plan(slow, Array.from({ length: events }, () => ({ status: 200, delayMs: 800 })))
        yield* ok("POST", "/v1/webhook-endpoint", { url: receiver.url(slow), events: ["*"] })
        yield* ok("POST", "/v1/webhook-endpoint", { url: receiver.url(quick), events: ["*"] })
        const started = Date.now()
        // Through calls: the first attempts are the dispatcher's, which waits for the slow endpoint's slots and not for the quick one's.
        for (let index = 0; index < events; index++) yield* change
        const quickOnes = yield* receiver.waitFor(quick, events)
        const slowOnes = yield* receiver.waitFor(slow, events)
        assert.strictEqual(receiver.maxInFlight(slow), PER_ENDPOINT_CONCURRENCY)
        // 12 answers of 800 ms, 4 at a time: about 2.4 s for the slow one; the quick one is not made to wait for it.
        const lastQuick = Math.max(...quickOnes.map((request) => request.at)) - started
        const lastSlow = Math.max(...slowOnes.map((request) => request.at)) - started
        assert.isAtLeast(lastSlow, 1_600)
        assert.isBelow(lastQuick, lastSlow)
      }))

    it.effect("a first attempt that gets no slot of its endpoint within SLOT_WAIT goes to its workflow unattempted, which delivers it", () =>
      Effect.gen(function*() {
        const { ok, receiver, path, change, deliveryRow } = yield* setup
        const slow = `${path}/queued`
        // 900 ms each, 4 at a time: the 30th request waits about 6.5 s for a slot, past SLOT_WAIT (5 s).
        const events = 30
        receiver.plan(slow, Array.from({ length: events }, () => ({ status: 200, delayMs: 900 })))
        const endpoint = yield* ok("POST", "/v1/webhook-endpoint", { url: receiver.url(slow), events: ["service_job.created"] })
        for (let index = 0; index < events; index++) yield* change
        yield* receiver.waitFor(slow, events, 30_000)
        // The last answers come 900 ms after their requests, then are recorded.
        const listed = ok("GET", `/v1/webhook-delivery?endpointId=${endpoint.id}&limit=100`)
        let deliveries: ReadonlyArray<any> = yield* listed
        for (let tries = 0; tries < 50 && deliveries.some((delivery) => delivery.status !== "succeeded"); tries++) {
          yield* Effect.sleep("100 millis")
          deliveries = yield* listed
        }
        assert.strictEqual(receiver.maxInFlight(slow), PER_ENDPOINT_CONCURRENCY)
        assert.strictEqual(deliveries.length, events)
        // Each delivered by one attempt: the dispatcher's, or for those that waited too long, the workflow's.
        for (const delivery of deliveries) assert.deepStrictEqual(delivery.attempts.map((attempt: any) => attempt.statusCode), [200])
        const rows = yield* Effect.forEach(deliveries, (delivery) => deliveryRow(delivery.id))
        const handedOn = rows.filter((row) => row.started).length
        assert.isAtLeast(handedOn, 1)
        assert.isBelow(handedOn, events)
        assert.strictEqual(new Set(receiver.received(slow).map((request) => request.headers["webhook-id"])).size, events)
      }))

    it.effect("a delivery is redelivered with the same webhook-id, and a rotated secret signs beside the old one", () =>
      Effect.gen(function*() {
        const { ok, call, receiver, path, emit } = yield* setup
        const endpoint = yield* ok("POST", "/v1/webhook-endpoint", { url: receiver.url(path), events: ["*"] })
        const eventId = yield* emit
        const [delivered] = yield* receiver.waitFor(path, 1)
        yield* Effect.sleep("300 millis")
        const [delivery] = yield* ok("GET", `/v1/webhook-delivery?eventId=${eventId}`)

        const rotated = yield* ok("POST", `/v1/webhook-endpoint/${endpoint.id}/rotate-secret`)
        assert.notStrictEqual(rotated.secret, endpoint.secret)
        const again = yield* ok("POST", `/v1/webhook-delivery/${delivery.id}/redeliver`)
        assert.notStrictEqual(again.id, delivery.id)
        assert.strictEqual(again.eventId, eventId)
        const [, redelivered] = yield* receiver.waitFor(path, 2)
        assert.strictEqual(redelivered!.headers["webhook-id"], delivered!.headers["webhook-id"])
        // Two signatures for 24 h: either secret verifies.
        assert.strictEqual(redelivered!.headers["webhook-signature"]!.split(" ").length, 2)
        assert.strictEqual(verified(rotated.secret, redelivered!).id, eventId)
        assert.strictEqual(verified(endpoint.secret, redelivered!).id, eventId)

        const unknown = yield* call("POST", "/v1/webhook-delivery/no-such-delivery/redeliver")
        assert.strictEqual(unknown.status, 404)
        yield* ok("PUT", `/v1/webhook-endpoint/${endpoint.id}`, { url: receiver.url(path), events: ["*"], enabled: false })
        const disabled = yield* call("POST", `/v1/webhook-delivery/${delivery.id}/redeliver`)
        assert.strictEqual(disabled.status, 409)
      }))

    it.effect("a delivery whose last attempt fails disables its endpoint and writes endpoint.disabled", () =>
      Effect.gen(function*() {
        const { ok, receiver, path, emit } = yield* setup
        const failing = `${path}/down`
        receiver.plan(failing, Array.from({ length: 20 }, () => ({ status: 503 })))
        const endpoint = yield* ok("POST", "/v1/webhook-endpoint", { url: receiver.url(failing), events: ["*"] })
        const eventId = yield* emit
        yield* receiver.waitFor(failing, 1)
        const [delivery] = yield* ok("GET", `/v1/webhook-delivery?eventId=${eventId}`)
        // The last attempt, as the workflow makes it after about 3 days of failed ones, and what follows it.
        const verdict = yield* attemptDelivery(delivery.id, MAX_ATTEMPTS)
        assert.strictEqual(verdict, "failed")
        yield* disableEndpointAfter(delivery.id)

        const disabled = yield* ok("GET", `/v1/webhook-endpoint/${endpoint.id}`)
        assert.strictEqual(disabled.enabled, false)
        assert.include(disabled.disabledReason, delivery.id)
        const [failedDelivery] = yield* ok("GET", `/v1/webhook-delivery?eventId=${eventId}`)
        assert.strictEqual(failedDelivery.status, "failed")
        assert.strictEqual(failedDelivery.nextAttemptAt, null)
        const [announced] = yield* ok("GET", "/v1/event?type=endpoint.disabled")
        assert.strictEqual(announced.data.object.id, endpoint.id)
        assert.strictEqual(announced.data.object.enabled, false)
        // Disabled already: nothing more is written.
        yield* disableEndpointAfter(delivery.id)
        assert.strictEqual((yield* ok("GET", "/v1/event?type=endpoint.disabled")).length, 1)
        // Enabled again by its app, the reason goes.
        const enabled = yield* ok("PUT", `/v1/webhook-endpoint/${endpoint.id}`, { url: receiver.url(failing), events: ["*"], enabled: true })
        assert.strictEqual(enabled.disabledReason, null)
      }).pipe(
        Effect.provide(Layer.merge(RecordRepository.layer, webhookSenderLayer({ timeout: TIMEOUT, allowPrivate: true }))),
        Effect.orDie
      ))

    it.effect("deleting an endpoint ends its pending deliveries", () =>
      Effect.gen(function*() {
        const { ok, receiver, path, emit } = yield* setup
        const failing = `${path}/gone`
        receiver.plan(failing, Array.from({ length: 5 }, () => ({ status: 500 })))
        const endpoint = yield* ok("POST", "/v1/webhook-endpoint", { url: receiver.url(failing), events: ["*"] })
        const eventId = yield* emit
        yield* receiver.waitFor(failing, 1)
        yield* Effect.sleep("300 millis")
        const [pending] = yield* ok("GET", `/v1/webhook-delivery?eventId=${eventId}`)
        assert.strictEqual(pending.status, "pending")
        assert.isNotNull(pending.nextAttemptAt)
        yield* ok("DELETE", `/v1/webhook-endpoint/${endpoint.id}`)
        const [ended] = yield* ok("GET", `/v1/webhook-delivery?eventId=${eventId}`)
        assert.strictEqual(ended.status, "failed")
        // Its retry, due 5 s after the first attempt, is not made.
        yield* Effect.sleep("6500 millis")
        assert.strictEqual(receiver.received(failing).length, 1)
      }))
  })
}

for (const backend of backends) {
  layer(TestApp(backend), { timeout: 60_000, excludeTestServices: true })(`Webhook URLs (${backend})`, (it) => {
    it.effect("the OpenAPI document describes each event type's delivery, its body the type's schema", () =>
      Effect.gen(function*() {
        const client = yield* TestClient
        const document = (yield* client.call("GET", "/openapi.json")).json()
        assert.sameMembers(Object.keys(document.webhooks), [...EVENT_TYPES])
        for (const type of EVENT_TYPES) {
          const post = document.webhooks[type].post
          const ref: string = post.requestBody.content["application/json"].schema.$ref
          const schema = document.components.schemas[ref.replace("#/components/schemas/", "")]
          assert.deepStrictEqual(schema.properties.type.enum, [type])
          assert.sameMembers(post.parameters.map((parameter: any) => parameter.name), ["webhook-id", "webhook-timestamp", "webhook-signature"])
        }
        const feed = document.paths["/v1/event"].get.responses["200"].content["application/json"].schema
        assert.strictEqual(feed.items.$ref, "#/components/schemas/Event")
      }))

    it.effect("a private or loopback URL is refused, naming the setting that allows it", () =>
      Effect.gen(function*() {
        const client = yield* TestClient
        const { value: secret } = yield* client.createSecret(`webhook-ssrf-${Math.random().toString(36).slice(2)}`)
        for (const url of ["http://127.0.0.1:9/hook", "http://10.1.2.3/hook", "http://[::1]/hook", "http://169.254.169.254/latest"]) {
          const reply = yield* client.call("POST", "/v1/webhook-endpoint", { secret, body: { url, events: ["*"] } })
          assert.strictEqual(reply.status, 422, url)
          assert.include(reply.json().message, "MODEL_FETCH_ALLOW_PRIVATE", url)
        }
        const ftp = yield* client.call("POST", "/v1/webhook-endpoint", { secret, body: { url: "ftp://example.com/hook", events: ["*"] } })
        assert.strictEqual(ftp.status, 400)
      }))
  })
}
