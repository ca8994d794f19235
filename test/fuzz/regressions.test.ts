/**
 * What the schema fuzzer found in the REST API, pinned as plain cases (seed
 * 20261122 of test/fuzz/schema-fuzz.test.ts found both):
 *
 *   - a string PostgreSQL cannot store (NUL, an unpaired UTF-16 surrogate) is
 *     valid for the schemas, and reached the engine, whose storage refused it:
 *     503 StorageUnavailable. Now a 400 naming the field or parameter.
 *   - an optional field sent as `null` (what JSON clients send for "none") was
 *     stored, but the repository answered its in-memory record, holding
 *     `undefined`, which the answer's JSON schema refused: 502 "does not
 *     match its schema" for a record that was created. An insert now answers
 *     the record as stored (JSON), as every later read does.
 *   - a bad value among a repeated query parameter's values was named
 *     `"state.1"`, a parameter that does not exist (seed 7). Now `"state"`.
 *   - a path parameter over 100 characters matched no route (the router's
 *     default limit): an empty 404. Now the schema's 400 naming it; a path
 *     no route serves is a 404 with the standard body.
 *   - an MCP tool argument storage cannot hold reached the engine: a 503
 *     tool error. Now the tool error 400 naming the field, as over REST.
 *   - (by hand) a body in another media type: a plain-text 415. Now the
 *     standard body.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { backends } from "../support/backends.ts"
import { mcpToolCall } from "../support/mcp.ts"
import { TestApp, TestClient } from "../support/TestApp.ts"

const UNSTORABLE = "contains a NUL character or an unpaired UTF-16 surrogate, which cannot be stored"

for (const backend of backends) {
  layer(TestApp(backend), { timeout: 60_000, excludeTestServices: true })(`What the fuzzer found (${backend})`, (it) => {
    it.effect("a NUL or an unpaired surrogate is a 400 naming the field or parameter, not a storage outage", () =>
      Effect.gen(function*() {
        const client = yield* TestClient
        const { value: secret } = yield* client.createSecret("unstorable")
        const cases: ReadonlyArray<readonly [string, string, unknown, string]> = [
          ["POST", "/v1/customer", { name: "a\u0000b", email: "a@example.com" }, `Invalid value for field "name": ${UNSTORABLE}`],
          ["POST", "/v1/customer", { name: "a", email: "a@example.com", address: { city: "\ud800" } }, `Invalid value for field "address.city": ${UNSTORABLE}`],
          ["GET", "/v1/customer/%00", undefined, `Invalid value for path parameter "id": ${UNSTORABLE}`],
          ["GET", "/v1/customer?ids=a&ids=%00", undefined, `Invalid value for query parameter "ids": ${UNSTORABLE}`]
        ]
        for (const [method, path, body, message] of cases) {
          const reply = yield* client.call(method, path, { secret, body })
          assert.strictEqual(reply.status, 400, `${method} ${path}: ${reply.text}`)
          assert.isNull(reply.headers.get("x-error-source"))
          const name = /"([^"]+)"/.exec(message)![1]!
          assert.deepStrictEqual(reply.json(), { code: 400, message, type: "ValidationError", errors: [{ path: name, message }] })
        }
        // A surrogate pair (an emoji) is fine.
        const emoji = yield* client.call("POST", "/v1/customer", { secret, body: { name: "Acme 😀", email: "a@example.com" } })
        assert.strictEqual(emoji.status, 200, emoji.text)
        assert.strictEqual(emoji.json().name, "Acme 😀")
      }))

    it.effect("a long path parameter is the schema's 400; an unknown path and an unread media type have the standard body", () =>
      Effect.gen(function*() {
        const client = yield* TestClient
        const { value: secret } = yield* client.createSecret("routes")
        const long = yield* client.call("GET", `/v1/customer/${"x".repeat(150)}`, { secret })
        assert.strictEqual(long.status, 400, long.text)
        assert.match(long.json().message, /^Invalid value for path parameter "id": /)
        const unknown = yield* client.call("GET", "/v1/no-such-thing?token=secret-value", { secret })
        assert.deepStrictEqual([unknown.status, unknown.json()], [404, { code: 404, message: "No operation GET /v1/no-such-thing", type: "NotFound" }])
        const text = yield* client.call("POST", "/v1/customer", { secret, headers: { "content-type": "text/plain" }, body: "x" })
        assert.strictEqual(text.status, 415, text.text)
        assert.deepStrictEqual(text.json(), {
          code: 415,
          message: "Unsupported content-type: text/plain; send the body as application/json",
          type: "UnsupportedMediaType"
        })
        // Authentication still comes first: without a secret it is the one 401.
        assert.strictEqual((yield* client.call("POST", "/v1/customer", { headers: { "content-type": "text/plain" }, body: "x" })).status, 401)
      }))

    it.effect("an MCP tool argument storage cannot hold is the tool error 400 naming the field", () =>
      Effect.gen(function*() {
        const client = yield* TestClient
        const { value: secret } = yield* client.createSecret("mcp-unstorable")
        const reply = yield* Effect.promise(async () => {
          const response = await mcpToolCall(client.baseUrl, secret, "create_ticket", { projectId: "p\u0000", name: "x" })
          return { status: response.status, text: await response.text() }
        })
        assert.strictEqual(reply.status, 200, reply.text)
        const result = JSON.parse(reply.text).result
        assert.isTrue(result.isError)
        assert.deepStrictEqual(JSON.parse(result.content[0].text), {
          code: 400,
          message: `Invalid value for field "projectId": ${UNSTORABLE}`,
          type: "ValidationError",
          errors: [{ path: "projectId", message: `Invalid value for field "projectId": ${UNSTORABLE}` }]
        })
      }))

    it.effect("a bad value of a repeated query parameter names the parameter", () =>
      Effect.gen(function*() {
        const client = yield* TestClient
        const { value: secret } = yield* client.createSecret("repeated")
        const reply = yield* client.call("GET", "/v1/service-job-production?state=done&state=nope", { secret })
        assert.strictEqual(reply.status, 400, reply.text)
        assert.match(reply.json().message, /^Invalid value for query parameter "state": /)
      }))

    it.effect("an optional field sent as null is left out: the created record, not a 502", () =>
      Effect.gen(function*() {
        const client = yield* TestClient
        const { value: secret } = yield* client.createSecret("nulls")
        const created = yield* client.call("POST", "/v1/customer", { secret, body: { name: "Acme", email: "a@example.com", phone: null } })
        assert.strictEqual(created.status, 200, created.text)
        const record = created.json()
        assert.notProperty(record, "phone")
        const read = yield* client.call("GET", `/v1/customer/${record.id}`, { secret })
        assert.deepStrictEqual(read.json(), record)
        const replaced = yield* client.call("PUT", `/v1/customer/${record.id}`, { secret, body: { name: "Acme", email: "a@example.com", company: null } })
        assert.strictEqual(replaced.status, 200, replaced.text)
        assert.notProperty(replaced.json(), "company")
      }))
  })
}
