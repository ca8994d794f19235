/**
 * Section 5 of the spec through the HTTP surface: the one 401 for every
 * cause, IP ranges, revocation, regeneration, the release date and usedAt.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { Result } from "effect"
import { SqlClient } from "effect/sql"
import { parseIpRange } from "../../src/domain/IpAllowList.ts"
import { ADMIN_TOKEN, backends } from "../support/backends.ts"
import { mcpToolCall } from "../support/mcp.ts"
import { rawRequest } from "../support/rawHttp.ts"
import { TestApp, TestClient } from "../support/TestApp.ts"

const NOT_AUTHORIZED = "{\"code\":401,\"message\":\"Not Authorized\"}"
const admin = { "x-admin-token": ADMIN_TOKEN }
const portOf = (baseUrl: string) => Number(new URL(baseUrl).port)

for (const backend of backends) {
  layer(TestApp(backend), { timeout: 60_000, excludeTestServices: true })(`Incoming Secret authentication (${backend})`, (it) => {
    it.effect("answers every authentication failure with the same status, headers and body", () =>
      Effect.gen(function*() {
        const client = yield* TestClient
        const port = portOf(client.baseUrl)
        const good = yield* client.createSecret("auth-table")
        const [id, random] = good.value.split(".") as [string, string]
        const revoked = yield* client.createSecret("auth-table")
        yield* client.call("DELETE", `/api/v1/secret/${revoked.id}`, { headers: admin })
        const regenerated = yield* client.createSecret("auth-table")
        yield* client.call("POST", `/api/v1/secret/${regenerated.id}/regenerate`, { headers: admin })
        const blocked = yield* client.createSecret("auth-table", ["203.0.113.0/24"])
        const flipped = random[0] === "A" ? "B" + random.slice(1) : "A" + random.slice(1)

        const causes: ReadonlyArray<readonly [string, ReadonlyArray<string | Buffer>]> = [
          ["missing header", []],
          ["empty header", ["Authorization: "]],
          ["only the scheme", ["Authorization: Bearer"]],
          ["wrong scheme", [`Authorization: Basic ${good.value}`]],
          ["no dot", [`Authorization: ${id}${random}`]],
          ["extra dots", [`Authorization: ${good.value}.extra`]],
          ["id only", [`Authorization: ${id}.`]],
          ["oversized", [`Authorization: ${id}.${"a".repeat(5000)}`]],
          ["non-ASCII", [Buffer.concat([Buffer.from(`Authorization: ${id}.`), Buffer.from([0xe9, 0xe8]), Buffer.from(random.slice(2))])]],
          ["unknown id", [`Authorization: ${"0".repeat(24)}.${random}`]],
          ["wrong random part", [`Authorization: ${id}.${flipped}`]],
          ["revoked", [`Authorization: ${revoked.value}`]],
          ["regenerated away", [`Authorization: ${regenerated.value}`]],
          ["blocked IP", [`Authorization: ${blocked.value}`]],
          ["two Authorization headers", [`Authorization: ${good.value}`, `Authorization: ${good.value}`]],
          ["Bearer twice", [`Authorization: Bearer Bearer ${good.value}`]]
        ]
        const replies = yield* Effect.forEach(causes, ([cause, lines]) =>
          Effect.promise(() => rawRequest(port, "GET", "/v1/customer", lines)).pipe(Effect.map((reply) => [cause, reply] as const)))
        const [, reference] = replies[0]!
        assert.strictEqual(reference.status, 401)
        assert.strictEqual(reference.body, NOT_AUTHORIZED)
        assert.include(reference.headers, "www-authenticate:Bearer realm=\"v1\"")
        for (const [cause, reply] of replies) {
          assert.deepStrictEqual(reply, reference, cause)
        }

        // The same secret, presented well, works in both forms.
        for (const header of [good.value, `Bearer ${good.value}`, `bearer ${good.value}`]) {
          const reply = yield* Effect.promise(() =>
            rawRequest(port, "GET", "/v1/customer", [`Authorization: ${header}`])
          )
          assert.strictEqual(reply.status, 200, header)
        }
      }))

    it.effect("fails a deleted or regenerated secret on its very next call", () =>
      Effect.gen(function*() {
        const client = yield* TestClient
        const secret = yield* client.createSecret("auth-revoke")
        assert.strictEqual((yield* client.call("GET", "/v1/customer", { secret: secret.value })).status, 200)

        const regenerated = yield* client.call("POST", `/api/v1/secret/${secret.id}/regenerate`, { headers: admin })
        assert.strictEqual(regenerated.status, 200)
        const fresh = regenerated.json().value as string
        assert.isTrue(fresh.startsWith(`${secret.id}.`))
        assert.strictEqual((yield* client.call("GET", "/v1/customer", { secret: secret.value })).status, 401)
        assert.strictEqual((yield* client.call("GET", "/v1/customer", { secret: fresh })).status, 200)

        assert.strictEqual((yield* client.call("DELETE", `/api/v1/secret/${secret.id}`, { headers: admin })).status, 204)
        assert.strictEqual((yield* client.call("GET", "/v1/customer", { secret: fresh })).status, 401)
        assert.strictEqual((yield* client.call("DELETE", `/api/v1/secret/${secret.id}`, { headers: admin })).status, 404)
      }))

    it.effect("refuses a REST read by a secret revoked on another instance: 401, never the record", () =>
      Effect.gen(function*() {
        const client = yield* TestClient
        const sql = yield* SqlClient.SqlClient
        const secret = yield* client.createSecret("auth-elsewhere")
        const created = yield* client.call("POST", "/v1/customer", { secret: secret.value, body: { name: "Kept", email: "k@example.com" } })
        const id = created.json().id as string
        // This instance now remembers the secret; another one regenerates it, straight in storage.
        assert.strictEqual((yield* client.call("GET", `/v1/customer/${id}`, { secret: secret.value })).status, 200)
        yield* sql`UPDATE incoming_secret SET secret_hash = ${"0".repeat(64)} WHERE id = ${secret.id}`

        // A read runs while its meter row commits; the commit refuses the secret, and so does the answer.
        const read = yield* client.call("GET", `/v1/customer/${id}`, { secret: secret.value })
        assert.strictEqual(read.status, 401)
        assert.strictEqual(read.text, NOT_AUTHORIZED)
        const customers = yield* client.call("GET", "/v1/customer", { secret: secret.value })
        assert.strictEqual(customers.status, 401)
        const rows = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM meter_event WHERE secret_id = ${secret.id}`
        assert.strictEqual(rows[0]!.n, 2, "only the create and the first read are metered")
      }))

    it.effect("refuses an MCP read tool call by a secret revoked on another instance", () =>
      Effect.gen(function*() {
        const client = yield* TestClient
        const sql = yield* SqlClient.SqlClient
        const secret = yield* client.createSecret("auth-elsewhere-mcp")
        const lookup = () => Effect.promise(() => mcpToolCall(client.baseUrl, secret.value, "lookup_ticket", { identifier: "none" }))
        assert.strictEqual((yield* lookup()).status, 200)
        yield* sql`UPDATE incoming_secret SET secret_hash = ${"0".repeat(64)} WHERE id = ${secret.id}`
        const refused = yield* lookup()
        assert.strictEqual(refused.status, 401)
        assert.strictEqual(yield* Effect.promise(() => refused.text()), NOT_AUTHORIZED)
      }))

    it.effect("never shows a value again: list and regenerate of an unknown id", () =>
      Effect.gen(function*() {
        const client = yield* TestClient
        const secret = yield* client.createSecret("auth-list")
        const listed = yield* client.call("GET", "/api/v1/secret?appId=auth-list", { headers: admin })
        assert.strictEqual(listed.status, 200)
        assert.notInclude(listed.text, secret.value.split(".")[1]!)
        assert.deepStrictEqual(listed.json().map((s: { id: string }) => s.id), [secret.id])
        const unknown = yield* client.call("POST", `/api/v1/secret/${"f".repeat(24)}/regenerate`, { headers: admin })
        assert.strictEqual(unknown.status, 404)
      }))

    it.effect("moves usedAt forward on each successful call", () =>
      Effect.gen(function*() {
        const client = yield* TestClient
        const secret = yield* client.createSecret("auth-used")
        const usedAt = Effect.map(
          client.call("GET", "/api/v1/secret?appId=auth-used", { headers: admin }),
          (reply) => reply.json()[0].usedAt as string | null
        )
        assert.isNull(yield* usedAt)
        yield* client.call("GET", "/v1/customer", { secret: secret.value })
        const first = yield* usedAt
        assert.isString(first)
        yield* Effect.sleep("5 millis")
        yield* client.call("GET", "/v1/customer", { secret: secret.value })
        const second = yield* usedAt
        assert.isTrue(Date.parse(second!) > Date.parse(first!))
        yield* client.call("GET", "/v1/customer", { secret: "nope" })
        assert.strictEqual(yield* usedAt, second, "a failed call does not count")
      }))

    it.effect("validates the admin API's input and token", () =>
      Effect.gen(function*() {
        const client = yield* TestClient
        const noRanges = yield* client.call("POST", "/api/v1/secret", { headers: admin, body: { appId: "a", ipAddresses: [] } })
        assert.strictEqual(noRanges.status, 400)
        const badRange = yield* client.call("POST", "/api/v1/secret", { headers: admin, body: { appId: "a", ipAddresses: ["10.0.0.1/99"] } })
        assert.strictEqual(badRange.status, 400)
        const wrongToken = yield* client.call("GET", "/api/v1/secret", { headers: { "x-admin-token": "wrong-token-0123456789" } })
        assert.strictEqual(wrongToken.status, 401)
        const noToken = yield* client.call("GET", "/api/v1/secret")
        assert.strictEqual(noToken.status, 401)
      }))
  })
}

const proxy = parseIpRange("127.0.0.1/32")
if (Result.isFailure(proxy)) throw new Error(proxy.failure)

layer(TestApp("pglite", { trustedProxies: [proxy.success] }), { timeout: 60_000, excludeTestServices: true })("IP ranges behind a trusted proxy", (it) => {
  const table: ReadonlyArray<readonly [ReadonlyArray<string>, string, number]> = [
    [["10.0.0.0/8"], "10.1.2.3", 200],
    [["10.0.0.0/8"], "11.1.2.3", 401],
    [["10.0.0.0/8"], "::ffff:10.1.2.3", 200],
    [["10.0.0.0/8"], "2001:db8::1", 401],
    [["0.0.0.0/0"], "2001:db8::1", 200],
    [["0.0.0.0/0"], "198.51.100.4", 200],
    [["198.51.100.4/32"], "198.51.100.4", 200],
    [["198.51.100.4/32"], "198.51.100.5", 401],
    [["2001:db8::/32"], "2001:db8:5::1", 200],
    [["2001:db8::/32"], "2001:db9::1", 401],
    [["2001:db8::7/128"], "2001:db8::7", 200],
    [["2001:db8::7/128"], "2001:db8::8", 401]
  ]
  it.effect("admits exactly the addresses in a secret's ranges (IPv4, IPv6, mapped, /0, /32, /128)", () =>
    Effect.gen(function*() {
      const client = yield* TestClient
      for (const [ranges, address, expected] of table) {
        const secret = yield* client.createSecret("ip-table", ranges)
        const reply = yield* client.call("GET", "/v1/customer", {
          secret: secret.value,
          headers: { "x-forwarded-for": `203.0.113.99, ${address}` }
        })
        assert.strictEqual(reply.status, expected, `${ranges.join(",")} from ${address}`)
      }
    }))
})

layer(TestApp("pglite"), { timeout: 60_000, excludeTestServices: true })("X-Forwarded-For from an untrusted peer", (it) => {
  it.effect("is ignored: the socket's address decides", () =>
    Effect.gen(function*() {
      const client = yield* TestClient
      const secret = yield* client.createSecret("xff", ["10.0.0.0/8"])
      const reply = yield* client.call("GET", "/v1/customer", { secret: secret.value, headers: { "x-forwarded-for": "10.1.2.3" } })
      assert.strictEqual(reply.status, 401)
      const local = yield* client.createSecret("xff", ["127.0.0.0/8"])
      const spoofed = yield* client.call("GET", "/v1/customer", { secret: local.value, headers: { "x-forwarded-for": "198.51.100.1" } })
      assert.strictEqual(spoofed.status, 200)
    }))
})
