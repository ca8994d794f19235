/**
 * Metering through the HTTP surface: one durable row per authenticated call,
 * under its operation; none for a refused call; totals by app and period;
 * and a storage outage answering 503, never 401.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { DownstreamEmbedded } from "../../src/adapters/downstream/DownstreamEmbedded.ts"
import { SecretStoreSql } from "../../src/adapters/sql/SecretStoreSql.ts"
import { ServiceUnavailable } from "../../src/domain/Errors.ts"
import { ReadinessChecksLive } from "../../src/platform/Readiness.ts"
import { Meter } from "../../src/services/Meter.ts"
import { RateLimitingNoOp } from "../../src/services/RateLimiting.ts"
import { ADMIN_TOKEN, backends } from "../support/backends.ts"
import { TestApp, TestClient } from "../support/TestApp.ts"

const admin = { "x-admin-token": ADMIN_TOKEN }

for (const backend of backends) {
  layer(TestApp(backend), { timeout: 60_000, excludeTestServices: true })(`Metering (${backend})`, (it) => {
    it.effect("records exactly the calls made, each under its operation, and none that were refused", () =>
      Effect.gen(function*() {
        const client = yield* TestClient
        const { value: secret } = yield* client.createSecret("metered")
        const created = (yield* client.call("POST", "/v1/customer", { secret, body: { name: "M", email: "m@example.com" } })).json()
        // Concurrent calls share flushes; every one must still be a row.
        yield* Effect.forEach(Array.from({ length: 40 }, (_, i) => i), (i) =>
          i % 2 === 0
            ? client.call("GET", `/v1/customer/${created.id}`, { secret })
            : client.call("GET", "/v1/customer", { secret }), { concurrency: 20 })
        yield* client.call("PUT", `/v1/customer/${created.id}`, { secret, body: { name: "M2", email: "m@example.com" } })
        yield* client.call("GET", "/v1/customer?limit=0", { secret })
        yield* client.call("GET", "/v1/customer", { secret: `${secret}x` })
        yield* client.call("GET", "/v1/customer")

        const usage = (yield* client.call("GET", "/api/v1/usage?appId=metered", { headers: admin })).json()
        assert.deepStrictEqual(usage, {
          total: 43,
          outcomeUnknown: 0,
          byOperation: [
            { operation: "customer.create", calls: 1, outcomeUnknown: 0 },
            { operation: "customer.get", calls: 20, outcomeUnknown: 0 },
            { operation: "customer.list", calls: 21, outcomeUnknown: 0 },
            { operation: "customer.replace", calls: 1, outcomeUnknown: 0 }
          ]
        })
      }))

    it.effect("totals by app and by period", () =>
      Effect.gen(function*() {
        const client = yield* TestClient
        const { value: one } = yield* client.createSecret("period-one")
        const { value: two } = yield* client.createSecret("period-two")
        yield* client.call("GET", "/v1/customer", { secret: one })
        yield* client.call("GET", "/v1/customer", { secret: two })
        yield* client.call("GET", "/v1/customer", { secret: two })
        const total = (query: string) =>
          client.call("GET", `/api/v1/usage?${query}`, { headers: admin }).pipe(Effect.map((reply) => reply.json().total as number))
        assert.strictEqual(yield* total("appId=period-one"), 1)
        assert.strictEqual(yield* total("appId=period-two"), 2)
        assert.strictEqual(yield* total("appId=period-two&to=2001-01-01"), 0)
        const today = new Date().toISOString().slice(0, 10)
        assert.strictEqual(yield* total(`appId=period-two&from=${today}`), 2)
        // A date as `to` is the end of that day, as in every list filter: today's calls count.
        assert.strictEqual(yield* total(`appId=period-two&from=${today}&to=${today}`), 2)
        assert.strictEqual((yield* client.call("GET", "/api/v1/usage?from=soon", { headers: admin })).status, 400)
      }))
  })
}

/** A Meter whose storage is down: calls must be refused with 503, not run, not 401. */
const MeterDown = Layer.succeed(
  Meter,
  Meter.of({
    submit: () => Effect.succeed(Effect.fail(ServiceUnavailable.storage())),
    complete: () => {},
    usage: () => Effect.fail(ServiceUnavailable.storage()),
    requestLog: () => Effect.fail(ServiceUnavailable.storage())
  })
)

layer(
  TestApp("pglite", {}, { services: Layer.mergeAll(SecretStoreSql, MeterDown, DownstreamEmbedded, RateLimitingNoOp, ReadinessChecksLive) }),
  { timeout: 60_000, excludeTestServices: true }
)("A storage outage", (it) => {
  it.effect("answers 503 and says so; it is not an authentication failure and the handler does not run", () =>
    Effect.gen(function*() {
      const client = yield* TestClient
      const { value: secret } = yield* client.createSecret("outage")
      const reply = yield* client.call("POST", "/v1/customer", { secret, body: { name: "Lost", email: "l@example.com" } })
      assert.strictEqual(reply.status, 503)
      assert.deepStrictEqual(reply.json(), { code: 503, message: "Storage is unavailable", type: "StorageUnavailable" })
      const refused = yield* client.call("GET", "/v1/customer", { secret: "x.y" })
      assert.strictEqual(refused.status, 401)
    }))

  it.effect("answers a read 503 too: a read runs while its call is metered, but is not answered unmetered", () =>
    Effect.gen(function*() {
      const client = yield* TestClient
      const { value: secret } = yield* client.createSecret("outage-read")
      const reply = yield* client.call("GET", "/v1/customer", { secret })
      assert.strictEqual(reply.status, 503)
      assert.deepStrictEqual(reply.json(), { code: 503, message: "Storage is unavailable", type: "StorageUnavailable" })
    }))
})

for (const backend of backends) {
  layer(TestApp(backend), { timeout: 60_000, excludeTestServices: true })(`The release date (${backend})`, (it) => {
    it.effect("refuses a secret issued before the release until it is regenerated", () =>
      Effect.gen(function*() {
        const client = yield* TestClient
        const sql = yield* SqlClient.SqlClient
        const secret = yield* client.createSecret("early")
        // As a secret from the console's earlier days would be.
        yield* sql`UPDATE incoming_secret SET created_at = '2020-01-01', issued_at = '2020-01-01' WHERE id = ${secret.id}`
        assert.strictEqual((yield* client.call("GET", "/v1/customer", { secret: secret.value })).status, 401)
        const regenerated = (yield* client.call("POST", `/api/v1/secret/${secret.id}/regenerate`, { headers: admin })).json()
        assert.strictEqual((yield* client.call("GET", "/v1/customer", { secret: regenerated.value })).status, 200)
      }))
  })
}

layer(TestApp("pglite", { releasedAt: new Date(Date.now() + 3_600_000) }), { timeout: 60_000, excludeTestServices: true })(
  "RELEASED_AT in the future",
  (it) => {
    it.effect("refuses every secret issued before it", () =>
      Effect.gen(function*() {
        const client = yield* TestClient
        const secret = yield* client.createSecret("not-yet")
        assert.strictEqual((yield* client.call("GET", "/v1/customer", { secret: secret.value })).status, 401)
      }))
  }
)
