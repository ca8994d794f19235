/**
 * The spec's conventions on the first resource, through HTTP: empty 200 for
 * a missing id, filters and date ranges, whole-record PUT, 400s naming the
 * field or parameter, and tenancy between apps.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { backends } from "../support/backends.ts"
import { TestApp, TestClient } from "../support/TestApp.ts"

for (const backend of backends) {
  layer(TestApp(backend), { timeout: 60_000, excludeTestServices: true })(`Customer over HTTP (${backend})`, (it) => {
    const setup = Effect.gen(function*() {
      const client = yield* TestClient
      const { value } = yield* client.createSecret(`customers-${Math.random().toString(36).slice(2)}`)
      return { client, secret: value }
    })

    it.effect("creates, reads back and lists a customer from the minimal payload (typed client)", () =>
      Effect.gen(function*() {
        const { client, secret } = yield* setup
        const api = yield* client.api(secret)
        const customer = yield* api.customer.create({ payload: { name: "Acme", email: "buyer@acme.example" } })
        assert.match(customer.id, /^[0-9a-f-]{36}$/)
        assert.strictEqual(customer.name, "Acme")
        assert.isString(customer.createdAt)

        assert.deepStrictEqual(yield* api.customer.get({ params: { id: customer.id } }), customer)
        assert.deepStrictEqual(yield* api.customer.list({ query: {} }), [customer])
      }))

    it.effect("answers a missing id with 200 and an empty body", () =>
      Effect.gen(function*() {
        const { client, secret } = yield* setup
        const reply = yield* client.call("GET", "/v1/customer/does-not-exist", { secret })
        assert.strictEqual(reply.status, 200)
        assert.strictEqual(reply.text, "")
        // An empty text, never JSON; the typed client (HttpApiClient) reads it as null, not as a record.
        assert.strictEqual(reply.headers.get("content-type"), "text/plain")
        const api = yield* client.api(secret)
        assert.isNull(yield* api.customer.get({ params: { id: "does-not-exist" } }))
      }))

    it.effect("filters by repeatable ids, by field and by one date or a range", () =>
      Effect.gen(function*() {
        const { client, secret } = yield* setup
        const make = (name: string) =>
          client.call("POST", "/v1/customer", { secret, body: { name, email: `${name}@example.com` } }).pipe(
            Effect.map((reply) => reply.json().id as string)
          )
        const [a, b, c] = [yield* make("a"), yield* make("b"), yield* make("c")]
        const ids = (path: string) =>
          client.call("GET", path, { secret }).pipe(
            Effect.map((reply) => (reply.json() as Array<{ id: string }>).map((r) => r.id).sort())
          )
        assert.deepStrictEqual(yield* ids(`/v1/customer?ids=${a}&ids=${c}`), [a, c].sort())
        assert.deepStrictEqual(yield* ids(`/v1/customer?ids=${b}`), [b])
        assert.deepStrictEqual(yield* ids("/v1/customer?name=b&name=c"), [b, c].sort())

        const today = new Date().toISOString().slice(0, 10)
        assert.deepStrictEqual(yield* ids(`/v1/customer?createdAt=${today}`), [a, b, c].sort())
        assert.deepStrictEqual(yield* ids("/v1/customer?createdAt=2001-01-01"), [])
        assert.deepStrictEqual(
          yield* ids(`/v1/customer?createdAt%5Bfrom%5D=${today}&createdAt%5Bto%5D=${today}`),
          [a, b, c].sort()
        )
        assert.deepStrictEqual(yield* ids("/v1/customer?createdAt%5Bto%5D=2001-01-01"), [])
        assert.strictEqual((yield* ids("/v1/customer?limit=2")).length, 2)
      }))

    it.effect("rejects an invalid filter value with a 400 naming the parameter", () =>
      Effect.gen(function*() {
        const { client, secret } = yield* setup
        for (
          const [query, parameter] of [
            ["createdAt%5Bfrom%5D=yesterday", "createdAt[from]"],
            ["createdAt=2026-13-45", "createdAt"],
            ["updatedAt%5Bto%5D=x", "updatedAt[to]"],
            ["limit=0", "limit"],
            ["offset=-1", "offset"]
          ] as const
        ) {
          const reply = yield* client.call("GET", `/v1/customer?${query}`, { secret })
          assert.strictEqual(reply.status, 400, query)
          const body = reply.json()
          assert.strictEqual(body.code, 400)
          assert.include(body.message, `"${parameter}"`)
          assert.isString(body.type)
        }
      }))

    it.effect("names an unknown query parameter or body field instead of ignoring it", () =>
      Effect.gen(function*() {
        const { client, secret } = yield* setup
        const query = yield* client.call("GET", "/v1/customer?emial=a@b.co", { secret })
        assert.deepStrictEqual(query.json(), {
          code: 400,
          message: "Unknown query parameter \"emial\"",
          type: "UnknownField",
          errors: [{ path: "emial", message: "Unknown query parameter \"emial\"" }]
        })
        const body = yield* client.call("POST", "/v1/customer", { secret, body: { name: "A", email: "a@b.co", compnay: "Typo" } })
        assert.deepStrictEqual(body.json(), {
          code: 400,
          message: "Unknown field \"compnay\"",
          type: "UnknownField",
          errors: [{ path: "compnay", message: "Unknown field \"compnay\"" }]
        })
      }))

    it.effect("replaces the whole record on PUT and names a missing required field", () =>
      Effect.gen(function*() {
        const { client, secret } = yield* setup
        const created = (yield* client.call("POST", "/v1/customer", {
          secret,
          body: { name: "Full", email: "full@example.com", phone: "+49 1", company: "Full GmbH" }
        })).json()

        const missing = yield* client.call("PUT", `/v1/customer/${created.id}`, { secret, body: { name: "Only name" } })
        assert.strictEqual(missing.status, 400)
        assert.deepStrictEqual(missing.json(), {
          code: 400,
          message: "Missing required field \"email\"",
          type: "MissingField",
          errors: [{ path: "email", message: "Missing required field \"email\"" }]
        })

        const invalid = yield* client.call("PUT", `/v1/customer/${created.id}`, { secret, body: { name: "X", email: "not-an-email" } })
        assert.strictEqual(invalid.status, 400)
        assert.include(invalid.json().message, "\"email\"")

        const replaced = yield* client.call("PUT", `/v1/customer/${created.id}`, { secret, body: { name: "Renamed", email: "new@example.com" } })
        assert.strictEqual(replaced.status, 200)
        const record = replaced.json()
        assert.strictEqual(record.id, created.id)
        assert.strictEqual(record.createdAt, created.createdAt)
        assert.strictEqual(record.name, "Renamed")
        assert.isUndefined(record.phone, "omitted optional fields are cleared")
        assert.isUndefined(record.company)
        assert.deepStrictEqual((yield* client.call("GET", `/v1/customer/${created.id}`, { secret })).json(), record)
      }))

    it.effect("answers PUT of a missing id with the engine's 404, passed through with its source", () =>
      Effect.gen(function*() {
        const { client, secret } = yield* setup
        const reply = yield* client.call("PUT", "/v1/customer/nope", { secret, body: { name: "N", email: "n@example.com" } })
        assert.strictEqual(reply.status, 404)
        assert.deepStrictEqual(reply.json(), { code: 404, message: "customer nope not found", type: "NotFound" })
        assert.strictEqual(reply.headers.get("x-error-source"), "engine")
        assert.strictEqual(reply.headers.get("x-error-source-request-id"), reply.headers.get("x-request-id"))
      }))

    it.effect("rejects an invalid create body with a 400 naming the field", () =>
      Effect.gen(function*() {
        const { client, secret } = yield* setup
        const noName = yield* client.call("POST", "/v1/customer", { secret, body: { email: "a@b.co" } })
        assert.deepStrictEqual(noName.json(), {
          code: 400,
          message: "Missing required field \"name\"",
          type: "MissingField",
          errors: [{ path: "name", message: "Missing required field \"name\"" }]
        })
        const badNested = yield* client.call("POST", "/v1/customer", { secret, body: { name: "A", email: "a@b.co", address: { city: 7 } } })
        assert.strictEqual(badNested.status, 400)
        assert.include(badNested.json().message, "\"address.city\"")
      }))

    it.effect("keeps each app's records to itself", () =>
      Effect.gen(function*() {
        const client = yield* TestClient
        const mine = (yield* client.createSecret("tenant-a")).value
        const theirs = (yield* client.createSecret("tenant-b")).value
        const created = (yield* client.call("POST", "/v1/customer", { secret: mine, body: { name: "Private", email: "p@a.example" } })).json()

        const read = yield* client.call("GET", `/v1/customer/${created.id}`, { secret: theirs })
        assert.strictEqual(read.status, 200)
        assert.strictEqual(read.text, "", "another app's id reads as missing")
        const listed = yield* client.call("GET", `/v1/customer?ids=${created.id}`, { secret: theirs })
        assert.deepStrictEqual(listed.json(), [])
        const write = yield* client.call("PUT", `/v1/customer/${created.id}`, { secret: theirs, body: { name: "Hijack", email: "h@b.example" } })
        assert.strictEqual(write.status, 404)
        assert.strictEqual((yield* client.call("GET", `/v1/customer/${created.id}`, { secret: mine })).json().name, "Private")
      }))
  })
}
