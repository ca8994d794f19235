/**
 * Idempotency-Key through HTTP (issue 16, item 3): a retry answers the
 * stored answer with `Idempotent-Replayed: true` and runs nothing again; the
 * same key for another request is a 422 naming it; a retry while the first
 * runs is a 409; answers that mean "try again" are not stored; keys are per
 * app, valid or a 400, kept 24 h, metered like any call, and shared by two
 * gateway instances on one database. The OpenAPI document lists the header.
 *
 * A Downstream in front of the real one holds a call at a gate (to have a
 * request still running) or fails it once with a 502 (an unreachable engine),
 * chosen by the customer name the test sends.
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { assert, layer } from "@effect/vitest"
import { Context, Deferred, Effect, Fiber, Layer } from "effect"
import { HttpRouter, HttpServer } from "effect/http"
import { SqlClient } from "effect/sql"
import { createServer } from "node:http"
import { DownstreamLive } from "../../src/adapters/downstream/DownstreamHttp.ts"
import { IdempotencySql } from "../../src/adapters/sql/IdempotencySql.ts"
import { MeterSql } from "../../src/adapters/sql/MeterSql.ts"
import { SecretStoreSql } from "../../src/adapters/sql/SecretStoreSql.ts"
import { StorageLive } from "../../src/adapters/storage/Storage.ts"
import { ServicesLive } from "../../src/app/AppLayers.ts"
import { PublicContract } from "../../src/contract/PublicApi.ts"
import { DownstreamError } from "../../src/domain/Errors.ts"
import { GatewayRoutes } from "../../src/gateway/server/Server.ts"
import { ROUTER_CONFIG } from "../../src/platform/http/RouteTable.ts"
import { ReadinessChecksLive } from "../../src/platform/Readiness.ts"
import { Downstream } from "../../src/services/Downstream.ts"
import { IdempotencyStore } from "../../src/services/IdempotencyStore.ts"
import { RateLimitingNoOp } from "../../src/services/RateLimiting.ts"
import { ADMIN_TOKEN, backends } from "../support/backends.ts"
import { type Reply, TestApp, TestClient } from "../support/TestApp.ts"

interface Gate {
  readonly entered: Deferred.Deferred<void>
  readonly open: Deferred.Deferred<void>
}

/** Calls whose `payload.name` is a key here: the first waits at its gate, the first of `flaky` fails with a 502. */
const gates = new Map<string, Gate>()
const flaky = new Set<string>()

const nameOf = (input: unknown): string | undefined => {
  const payload = (input as { payload?: { name?: unknown } }).payload
  return typeof payload?.name === "string" ? payload.name : undefined
}

const ControlledDownstream = Layer.effect(
  Downstream,
  Effect.gen(function*() {
    const real = yield* Downstream
    return Downstream.of({
      call: (endpoint) => (input, scope) => {
        const run = real.call(endpoint)(input, scope)
        const name = nameOf(input)
        const gate = name === undefined ? undefined : gates.get(name)
        if (gate !== undefined) {
          gates.delete(name!)
          return Deferred.succeed(gate.entered, undefined).pipe(Effect.andThen(Deferred.await(gate.open)), Effect.andThen(run))
        }
        if (name !== undefined && flaky.delete(name)) {
          return Effect.fail(
            new DownstreamError({
              status: 502,
              code: 502,
              message: "The engine is unreachable",
              type: "BadGateway",
              source: "engine",
              requestId: scope.requestId
            })
          )
        }
        return run
      },
      emptyTestData: real.emptyTestData
    })
  })
).pipe(Layer.provide(DownstreamLive))

const gateFor = (name: string) =>
  Effect.gen(function*() {
    const gate: Gate = { entered: yield* Deferred.make<void>(), open: yield* Deferred.make<void>() }
    gates.set(name, gate)
    return gate
  })

/** A second gateway on the same database: its own server, services and storage connections (TestApp's AppConfig). */
class SecondGateway extends Context.Service<SecondGateway, string>()("test/SecondGateway") {}

const SecondGatewayLive = Layer.effect(
  SecondGateway,
  Effect.gen(function*() {
    const address = (yield* HttpServer.HttpServer).address
    return address._tag === "UnixPathAddress" ? yield* Effect.die(new Error("expected a TCP address")) : `http://127.0.0.1:${address.port}`
  })
).pipe(
  Layer.provide(
    HttpRouter.serve(GatewayRoutes(undefined), { disableLogger: true, disableListenLog: true, routerConfig: ROUTER_CONFIG }).pipe(
      Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" }))
    )
  ),
  Layer.provide(ServicesLive),
  // `tool`: over PGlite, a connection to the first gateway's shared database; over PostgreSQL, pools of its own.
  Layer.provide(StorageLive("tool"))
)

const admin = { "x-admin-token": ADMIN_TOKEN }
const REPLAYED = "idempotent-replayed"
const newKey = () => crypto.randomUUID()

/** A refusal of the gateway's own: status, type and the header named. */
const refusal = (reply: Reply, status: number, type: string, key?: string) => {
  assert.strictEqual(reply.status, status, reply.text)
  const body = reply.json()
  assert.strictEqual(body.code, status, reply.text)
  assert.strictEqual(body.type, type, reply.text)
  assert.include(body.message, "Idempotency-Key", reply.text)
  if (key !== undefined) assert.include(body.message, `"${key}"`, reply.text)
  assert.isNull(reply.headers.get(REPLAYED))
}

for (const backend of backends) {
  const services = Layer.mergeAll(SecretStoreSql, MeterSql, ControlledDownstream, RateLimitingNoOp).pipe(Layer.provideMerge(ReadinessChecksLive))
  layer(SecondGatewayLive.pipe(Layer.provideMerge(TestApp(backend, {}, { services }))), { timeout: 90_000, excludeTestServices: true })(
    `Idempotency-Key (${backend})`,
    (it) => {
      const setup = Effect.gen(function*() {
        const client = yield* TestClient
        const sql = yield* SqlClient.SqlClient
        const appId = `idem-${Math.random().toString(36).slice(2)}`
        const { value: secret } = yield* client.createSecret(appId)
        const call = (method: string, path: string, body?: unknown, headers?: Record<string, string>) =>
          client.call(method, `/v1${path}`, { secret, body, headers })
        const keyed = (key: string, method: string, path: string, body?: unknown) => call(method, path, body, { "idempotency-key": key })
        // The records as stored, whatever the list operation answers.
        const customersNamed = (name: string) =>
          sql<{ id: string }>`
            SELECT id FROM engine_record WHERE resource = 'customer' AND app_id = ${appId} AND data->>'name' = ${name}`
        return { client, appId, secret, call, keyed, customersNamed }
      })

      it.effect("a retry with the same key and body answers the stored status and body, replayed; one record only", () =>
        Effect.gen(function*() {
          const { keyed, customersNamed } = yield* setup
          const key = newKey()
          const first = yield* keyed(key, "POST", "/customer", { name: "Once", email: "once@example.com" })
          assert.strictEqual(first.status, 200, first.text)
          assert.isNull(first.headers.get(REPLAYED))
          // The same request, its fields in another order: the decoded input is what is compared.
          const again = yield* keyed(key, "POST", "/customer", { email: "once@example.com", name: "Once" })
          assert.strictEqual(again.status, 200, again.text)
          assert.strictEqual(again.headers.get(REPLAYED), "true")
          assert.strictEqual(again.text, first.text)
          assert.strictEqual(again.headers.get("content-type"), first.headers.get("content-type"))
          assert.notStrictEqual(again.headers.get("x-request-id"), first.headers.get("x-request-id"))
          assert.lengthOf(yield* customersNamed("Once"), 1)
        }))

      it.effect("the same key with another body or another operation is a 422 naming the key; nothing runs", () =>
        Effect.gen(function*() {
          const { keyed, customersNamed } = yield* setup
          const key = newKey()
          const first = yield* keyed(key, "POST", "/customer", { name: "First", email: "first@example.com" })
          assert.strictEqual(first.status, 200, first.text)
          refusal(yield* keyed(key, "POST", "/customer", { name: "Second", email: "first@example.com" }), 422, "IdempotencyKeyReused", key)
          refusal(yield* keyed(key, "POST", "/project", { customerId: first.json().id, name: "P" }), 422, "IdempotencyKeyReused", key)
          assert.lengthOf(yield* customersNamed("Second"), 0)
          // The key still answers its own request.
          assert.strictEqual((yield* keyed(key, "POST", "/customer", { name: "First", email: "first@example.com" })).headers.get(REPLAYED), "true")
        }))

      it.effect("a retry while the first is still running is a 409; then the stored answer; exactly one record", () =>
        Effect.gen(function*() {
          const { keyed, customersNamed } = yield* setup
          const key = newKey()
          const body = { name: `Gated-${key}`, email: "gated@example.com" }
          const gate = yield* gateFor(body.name)
          const first = yield* Effect.forkChild(keyed(key, "POST", "/customer", body))
          yield* Deferred.await(gate.entered)
          const during = yield* keyed(key, "POST", "/customer", body)
          refusal(during, 409, "IdempotencyKeyInUse", key)
          assert.strictEqual(during.headers.get("retry-after"), "1")
          yield* Deferred.succeed(gate.open, undefined)
          const answered = yield* Fiber.join(first)
          assert.strictEqual(answered.status, 200, answered.text)
          const after = yield* keyed(key, "POST", "/customer", body)
          assert.strictEqual(after.headers.get(REPLAYED), "true")
          assert.strictEqual(after.text, answered.text)
          assert.lengthOf(yield* customersNamed(body.name), 1)
        }))

      it.effect("a call whose client gave up runs to its end, and the retry gets its answer", () =>
        Effect.gen(function*() {
          const { client, secret, keyed, customersNamed } = yield* setup
          const key = newKey()
          const body = { name: `Abandoned-${key}`, email: "gone@example.com" }
          const gate = yield* gateFor(body.name)
          const controller = new AbortController()
          const abandoned = yield* Effect.forkChild(Effect.promise(() =>
            fetch(`${client.baseUrl}/v1/customer`, {
              method: "POST",
              headers: { authorization: secret, "content-type": "application/json", "idempotency-key": key },
              body: JSON.stringify(body),
              signal: controller.signal
            }).then((response) => response.status, () => "aborted")
          ))
          yield* Deferred.await(gate.entered)
          controller.abort()
          assert.strictEqual(yield* Fiber.join(abandoned), "aborted")
          // Time for the server to see the connection closed (which interrupts the request's own fiber).
          yield* Effect.sleep("200 millis")
          yield* Deferred.succeed(gate.open, undefined)
          let retried = yield* keyed(key, "POST", "/customer", body)
          for (let attempt = 0; retried.status === 409 && attempt < 100; attempt++) {
            yield* Effect.sleep("20 millis")
            retried = yield* keyed(key, "POST", "/customer", body)
          }
          assert.strictEqual(retried.status, 200, retried.text)
          assert.strictEqual(retried.headers.get(REPLAYED), "true")
          assert.lengthOf(yield* customersNamed(body.name), 1)
        }))

      it.effect("concurrent calls with one key: one runs, the others are 409s or replays; one record", () =>
        Effect.gen(function*() {
          const { keyed, customersNamed } = yield* setup
          const key = newKey()
          const body = { name: `Burst-${key}`, email: "burst@example.com" }
          const replies = yield* Effect.forEach(Array.from({ length: 12 }), () => keyed(key, "POST", "/customer", body), { concurrency: 12 })
          const ran = replies.filter((reply) => reply.status === 200 && reply.headers.get(REPLAYED) === null)
          assert.lengthOf(ran, 1, replies.map((reply) => `${reply.status} ${reply.text}`).join("\n"))
          for (const reply of replies) {
            if (reply.status === 409) refusal(reply, 409, "IdempotencyKeyInUse", key)
            else {
              assert.strictEqual(reply.status, 200, reply.text)
              assert.strictEqual(reply.text, ran[0]!.text)
            }
          }
          assert.lengthOf(yield* customersNamed(body.name), 1)
        }))

      it.effect("a workflow PUT replays: a ticket cancelled once; an engine refusal is replayed as stored", () =>
        Effect.gen(function*() {
          const { call, keyed } = yield* setup
          const customer = (yield* call("POST", "/customer", { name: "W", email: "w@example.com" })).json()
          const project = (yield* call("POST", "/project", { customerId: customer.id, name: "Gearbox" })).json()
          const ticket = (yield* call("POST", "/ticket", { projectId: project.id, name: "Run" })).json()
          const key = newKey()
          const cancelled = yield* keyed(key, "PUT", `/ticket/${ticket.id}/cancel`)
          assert.strictEqual(cancelled.status, 200, cancelled.text)
          assert.strictEqual(cancelled.json().state, "cancelled")
          // Without the key a second cancel is refused (409); with it, the first answer comes back.
          const retried = yield* keyed(key, "PUT", `/ticket/${ticket.id}/cancel`)
          assert.strictEqual(retried.status, 200, retried.text)
          assert.strictEqual(retried.headers.get(REPLAYED), "true")
          assert.strictEqual(retried.text, cancelled.text)

          const other = newKey()
          const refused = yield* keyed(other, "PUT", `/ticket/${ticket.id}/cancel`)
          assert.strictEqual(refused.status, 409, refused.text)
          assert.strictEqual(refused.headers.get("x-error-source"), "engine")
          const replayed = yield* keyed(other, "PUT", `/ticket/${ticket.id}/cancel`)
          assert.strictEqual(replayed.status, 409)
          assert.strictEqual(replayed.text, refused.text)
          assert.strictEqual(replayed.headers.get(REPLAYED), "true")
          assert.strictEqual(replayed.headers.get("x-error-source"), "engine")
          assert.strictEqual(replayed.headers.get("x-error-source-request-id"), refused.headers.get("x-error-source-request-id"))
        }))

      it.effect("an answer that means \"try again\" (5xx, a malformed request) is not stored: the retry runs", () =>
        Effect.gen(function*() {
          const { keyed, customersNamed } = yield* setup
          const key = newKey()
          const body = { name: `Flaky-${key}`, email: "flaky@example.com" }
          flaky.add(body.name)
          const failed = yield* keyed(key, "POST", "/customer", body)
          assert.strictEqual(failed.status, 502, failed.text)
          const retried = yield* keyed(key, "POST", "/customer", body)
          assert.strictEqual(retried.status, 200, retried.text)
          assert.isNull(retried.headers.get(REPLAYED))
          assert.strictEqual((yield* keyed(key, "POST", "/customer", body)).headers.get(REPLAYED), "true")
          assert.lengthOf(yield* customersNamed(body.name), 1)

          // A 400 the handler answers (a query parameter the operation does not take): the corrected request may use the key.
          const other = newKey()
          const malformed = yield* keyed(other, "POST", "/customer?force=1", { name: "Fixed", email: "fixed@example.com" })
          assert.strictEqual(malformed.status, 400, malformed.text)
          const fixed = yield* keyed(other, "POST", "/customer", { name: "Fixed", email: "fixed@example.com" })
          assert.strictEqual(fixed.status, 200, fixed.text)
          assert.isNull(fixed.headers.get(REPLAYED))
        }))

      it.effect("an invalid key is a 400 naming the header, and nothing runs; a 255-character key is valid", () =>
        Effect.gen(function*() {
          const { keyed, customersNamed } = yield* setup
          const body = { name: "Invalid keys", email: "i@example.com" }
          for (const key of ["", "two words", "x".repeat(256), "caf\u00e9"]) {
            const reply = yield* keyed(key, "POST", "/customer", body)
            refusal(reply, 400, "ValidationError")
            assert.include(reply.json().message, "\"Idempotency-Key\"")
          }
          assert.lengthOf(yield* customersNamed(body.name), 0)
          const longest = "k".repeat(254) + Math.random().toString(36).slice(2, 3)
          assert.strictEqual((yield* keyed(longest, "POST", "/customer", body)).status, 200)
          assert.strictEqual((yield* keyed(longest, "POST", "/customer", body)).headers.get(REPLAYED), "true")
        }))

      it.effect("keys are per app: another app's call with the same key and body runs", () =>
        Effect.gen(function*() {
          const one = yield* setup
          const two = yield* setup
          const key = newKey()
          const body = { name: "Shared key", email: "s@example.com" }
          const first = yield* one.keyed(key, "POST", "/customer", body)
          const second = yield* two.keyed(key, "POST", "/customer", body)
          assert.strictEqual(second.status, 200, second.text)
          assert.isNull(second.headers.get(REPLAYED))
          assert.notStrictEqual(second.json().id, first.json().id)
          assert.lengthOf(yield* two.customersNamed(body.name), 1)
        }))

      it.effect("without a key, and on operations that take none (GET, whole-record PUT), nothing changes", () =>
        Effect.gen(function*() {
          const { call, customersNamed } = yield* setup
          const body = { name: "Unkeyed", email: "u@example.com" }
          yield* call("POST", "/customer", body)
          const created = (yield* call("POST", "/customer", body)).json()
          assert.lengthOf(yield* customersNamed(body.name), 2)
          // The header is not read there: even an invalid one is no 400.
          const invalid = { "idempotency-key": "not a key" }
          assert.strictEqual((yield* call("GET", `/customer/${created.id}`, undefined, invalid)).status, 200)
          const replaced = yield* call("PUT", `/customer/${created.id}`, { name: "Unkeyed", email: "v@example.com" }, invalid)
          assert.strictEqual(replaced.status, 200, replaced.text)
          assert.isNull(replaced.headers.get(REPLAYED))
        }))

      it.effect("retries are metered like any call, replays and refusals included", () =>
        Effect.gen(function*() {
          const { client, appId, keyed } = yield* setup
          const key = newKey()
          const body = { name: "Metered", email: "m@example.com" }
          yield* keyed(key, "POST", "/customer", body) // runs
          yield* keyed(key, "POST", "/customer", body) // replay
          yield* keyed(key, "POST", "/customer", { ...body, name: "Other" }) // 422
          yield* keyed("bad key", "POST", "/customer", body) // 400
          const usage = (yield* client.call("GET", `/api/v1/usage?appId=${appId}`, { headers: admin })).json()
          assert.deepStrictEqual(usage.byOperation, [{ operation: "customer.create", calls: 4, outcomeUnknown: 0 }])
        }))

      it.effect("two gateways on one database share the keys: a 409 while one runs, then the replay from either", () =>
        Effect.gen(function*() {
          const { client, secret, keyed, customersNamed } = yield* setup
          const second = yield* SecondGateway
          const onSecond = (key: string, body: unknown) =>
            Effect.promise(async () => {
              const response = await fetch(`${second}/v1/customer`, {
                method: "POST",
                headers: { authorization: secret, "content-type": "application/json", "idempotency-key": key },
                body: JSON.stringify(body),
                signal: AbortSignal.timeout(10_000)
              })
              const text = await response.text()
              return { status: response.status, headers: response.headers, text, json: () => JSON.parse(text) } satisfies Reply
            })
          const key = newKey()
          const body = { name: `Instances-${key}`, email: "two@example.com" }
          const gate = yield* gateFor(body.name)
          const first = yield* Effect.forkChild(keyed(key, "POST", "/customer", body))
          yield* Deferred.await(gate.entered)
          refusal(yield* onSecond(key, body), 409, "IdempotencyKeyInUse", key)
          refusal(yield* onSecond(key, { ...body, email: "other@example.com" }), 422, "IdempotencyKeyReused", key)
          yield* Deferred.succeed(gate.open, undefined)
          const answered = yield* Fiber.join(first)
          assert.strictEqual(answered.status, 200, answered.text)
          const replayed = yield* onSecond(key, body)
          assert.strictEqual(replayed.headers.get(REPLAYED), "true")
          assert.strictEqual(replayed.text, answered.text)

          // The other way round: a key first used on the second gateway replays on the first.
          const other = newKey()
          const made = yield* onSecond(other, { name: `Instances-${other}`, email: "two@example.com" })
          assert.strictEqual(made.status, 200, made.text)
          const back = yield* keyed(other, "POST", "/customer", { name: `Instances-${other}`, email: "two@example.com" })
          assert.strictEqual(back.headers.get(REPLAYED), "true")
          assert.strictEqual(back.text, made.text)
          assert.lengthOf(yield* customersNamed(body.name), 1)
          assert.lengthOf(yield* customersNamed(`Instances-${other}`), 1)
          assert.isString(client.baseUrl)
        }))

      it.effect("an answer is kept 24 h, then the key runs anew; a key held by a stopped instance is taken over after its lease", () =>
        Effect.gen(function*() {
          const { appId, keyed, customersNamed } = yield* setup
          const sql = yield* SqlClient.SqlClient
          const key = newKey()
          const body = { name: `Expiring-${key}`, email: "e@example.com" }
          const first = yield* keyed(key, "POST", "/customer", body)
          const [kept] = yield* sql<{ seconds: number }>`
            SELECT extract(epoch FROM expires_at - now())::float8 AS seconds FROM idempotency_key WHERE app_id = ${appId} AND key = ${key}`
          assert.approximately(kept!.seconds, 24 * 3600, 60)
          // 24 hours later, as far as the stored rows (the gateway's and the engine's) can tell.
          yield* sql`
            UPDATE idempotency_key SET created_at = created_at - interval '24 hours', expires_at = expires_at - interval '24 hours'
            WHERE app_id = ${appId} AND key = ${key}`
          yield* sql`
            UPDATE engine_idempotency SET created_at = created_at - interval '24 hours', expires_at = expires_at - interval '24 hours'
            WHERE app_id = ${appId} AND key = ${key}`
          const later = yield* keyed(key, "POST", "/customer", body)
          assert.strictEqual(later.status, 200, later.text)
          assert.isNull(later.headers.get(REPLAYED))
          assert.notStrictEqual(later.json().id, first.json().id)
          assert.lengthOf(yield* customersNamed(body.name), 2)

          // A call held at the gate stands for an instance that stopped while running it: its lease runs out.
          const held = newKey()
          const heldBody = { name: `Held-${held}`, email: "h@example.com" }
          const gate = yield* gateFor(heldBody.name)
          const stopped = yield* Effect.forkChild(keyed(held, "POST", "/customer", heldBody))
          yield* Deferred.await(gate.entered)
          refusal(yield* keyed(held, "POST", "/customer", heldBody), 409, "IdempotencyKeyInUse", held)
          yield* sql`UPDATE idempotency_key SET lease_until = now() - interval '1 second' WHERE app_id = ${appId} AND key = ${held}`
          const takenOver = yield* keyed(held, "POST", "/customer", heldBody)
          assert.strictEqual(takenOver.status, 200, takenOver.text)
          assert.isNull(takenOver.headers.get(REPLAYED))
          // The first call ends after all; the answer stored is the one of the call that holds the key.
          yield* Deferred.succeed(gate.open, undefined)
          yield* Fiber.join(stopped)
          const replayed = yield* keyed(held, "POST", "/customer", heldBody)
          assert.strictEqual(replayed.headers.get(REPLAYED), "true")
          assert.strictEqual(replayed.text, takenOver.text)
        }))

      it.effect("the engine commits the key's answer with the write: a retry whose gateway lost the key replays it, never writes twice", () =>
        Effect.gen(function*() {
          const { appId, keyed, customersNamed } = yield* setup
          const sql = yield* SqlClient.SqlClient
          const key = newKey()
          const body = { name: `Committed-${key}`, email: "c@example.com" }
          const first = yield* keyed(key, "POST", "/customer", body)
          assert.strictEqual(first.status, 200, first.text)
          const [engineRow] = yield* sql<{ fingerprint: string }>`
            SELECT fingerprint FROM engine_idempotency WHERE app_id = ${appId} AND key = ${key}`
          assert.isDefined(engineRow, "the engine's answer is stored with the write")

          // The instance died between the commit and storing the answer: the gateway's row is still `running`, its
          // lease run out (no instance renews it), or the row is gone altogether.
          yield* sql`
            UPDATE idempotency_key SET state = 'running', status = NULL, headers = NULL, body = NULL, owner = 'dead-instance',
              lease_until = now() - interval '1 second'
            WHERE app_id = ${appId} AND key = ${key}`
          const retried = yield* keyed(key, "POST", "/customer", body)
          assert.strictEqual(retried.status, 200, retried.text)
          assert.strictEqual(retried.headers.get(REPLAYED), "true")
          assert.strictEqual(retried.text, first.text)
          assert.strictEqual(retried.headers.get("location"), first.headers.get("location"))
          yield* sql`DELETE FROM idempotency_key WHERE app_id = ${appId} AND key = ${key}`
          const again = yield* keyed(key, "POST", "/customer", body)
          assert.strictEqual(again.headers.get(REPLAYED), "true")
          assert.strictEqual(again.text, first.text)
          assert.lengthOf(yield* customersNamed(body.name), 1)

          // Another request under the key is refused by the engine too.
          yield* sql`DELETE FROM idempotency_key WHERE app_id = ${appId} AND key = ${key}`
          refusal(yield* keyed(key, "POST", "/customer", { ...body, name: "Other" }), 422, "IdempotencyKeyReused", key)
          assert.lengthOf(yield* customersNamed("Other"), 0)

          // A refusal writes nothing and stores no answer of the engine: its retry runs again.
          const refusedKey = newKey()
          const refused = yield* keyed(refusedKey, "POST", "/project", { customerId: "no-such-customer", name: "P" })
          assert.strictEqual(refused.status, 422, refused.text)
          assert.lengthOf(yield* sql`SELECT 1 FROM engine_idempotency WHERE app_id = ${appId} AND key = ${refusedKey}`, 0)
        }))

      it.effect("two calls of one key reaching the engine at once: one writes, the other answers its answer", () =>
        Effect.gen(function*() {
          const { appId, customersNamed } = yield* setup
          const downstream = yield* Downstream
          const key = newKey()
          const name = `Raced-${key}`
          const replays: Array<string> = []
          const scope = (requestId: string) => ({
            appId,
            requestId,
            idempotency: { key, fingerprint: "same-request", onReplay: () => replays.push(requestId) }
          })
          const endpoint = PublicContract.groups.customer.endpoints.create
          const create = (requestId: string) => downstream.call(endpoint)({ payload: { name, email: "r@example.com" } } as never, scope(requestId))
          const answers = yield* Effect.all([create("a"), create("b"), create("c")], { concurrency: "unbounded" })
          const ids = new Set(answers.map((answer) => (answer as { id: string }).id))
          assert.strictEqual(ids.size, 1)
          assert.lengthOf(replays, 2)
          assert.lengthOf(yield* customersNamed(name), 1)
        }))

      it.effect("a running key's lease is seconds long and renewed while its call runs", () =>
        Effect.gen(function*() {
          const { appId, keyed } = yield* setup
          const sql = yield* SqlClient.SqlClient
          const key = newKey()
          const body = { name: `Leased-${key}`, email: "l@example.com" }
          const gate = yield* gateFor(body.name)
          const running = yield* Effect.forkChild(keyed(key, "POST", "/customer", body))
          yield* Deferred.await(gate.entered)
          const lease = sql<{ seconds: number }>`
            SELECT extract(epoch FROM lease_until - now())::float8 AS seconds FROM idempotency_key WHERE app_id = ${appId} AND key = ${key}`
          const [before] = yield* lease
          assert.isAtMost(before!.seconds, 10.5)
          yield* Effect.sleep("4 seconds")
          const [after] = yield* lease
          // Without renewal it would be down to about 6 s.
          assert.isAbove(after!.seconds, 7)
          yield* Deferred.succeed(gate.open, undefined)
          assert.strictEqual((yield* Fiber.join(running)).status, 200)
        }))

      it.effect("rows whose 24 h are over are purged", () =>
        Effect.gen(function*() {
          const { appId, keyed } = yield* setup
          const sql = yield* SqlClient.SqlClient
          yield* keyed(newKey(), "POST", "/customer", { name: "Purged", email: "p@example.com" })
          yield* keyed(newKey(), "POST", "/customer", { name: "Purged too", email: "p@example.com" })
          const count = () => sql<{ n: number }>`SELECT count(*)::int AS n FROM idempotency_key WHERE app_id = ${appId}`.pipe(Effect.map((rows) => rows[0]!.n))
          assert.strictEqual(yield* count(), 2)
          yield* sql`UPDATE idempotency_key SET expires_at = now() - interval '1 second' WHERE app_id = ${appId}`
          const purged = yield* Effect.gen(function*() {
            return yield* (yield* IdempotencyStore).purgeExpired
          }).pipe(Effect.provide(IdempotencySql))
          assert.isAtLeast(purged, 2)
          assert.strictEqual(yield* count(), 0)
        }))

      it.effect("the OpenAPI document lists the header on the operations that take it, and the replay header", () =>
        Effect.gen(function*() {
          const { client } = yield* setup
          const document = yield* client.call("GET", "/openapi.json")
          assert.strictEqual(document.status, 200, document.text.slice(0, 500))
          const spec = document.json()
          const headerOf = (path: string, method: string) =>
            (spec.paths[path][method].parameters ?? []).find((p: { name: string; in: string }) => p.in === "header" && p.name === "Idempotency-Key")
          for (const [path, method] of [["/v1/customer", "post"], ["/v1/ticket/{id}/cancel", "put"], ["/v1/service-job/merge", "put"]]) {
            const parameter = headerOf(path!, method!)
            assert.isDefined(parameter, `${method} ${path}`)
            assert.strictEqual(parameter.required, false)
            assert.strictEqual(parameter.schema.maxLength, 255)
            assert.isDefined(spec.paths[path!][method!].responses["200"].headers["Idempotent-Replayed"], `${method} ${path}`)
          }
          for (const [path, method] of [["/v1/customer", "get"], ["/v1/customer/{id}", "put"], ["/v1/machine/{id}", "delete"]]) {
            assert.isUndefined(headerOf(path!, method!), `${method} ${path}`)
          }
          assert.include(spec.info.description, "Idempotency-Key")
        }))
    }
  )
}
