/**
 * Record reads answered without the router (RecordReadDirect): which
 * requests take that path, and, through HTTP, that each of them answers
 * exactly what the router's HttpApi route answers for the same request
 * (status, headers, body, metering), for records found, missing and
 * another app's, for the 401, and for an engine that fails or answers
 * something its schema refuses.
 */
import { assert, describe, expect, it, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { MeterSql } from "../../src/adapters/sql/MeterSql.ts"
import { SecretStoreSql } from "../../src/adapters/sql/SecretStoreSql.ts"
import { operationOf } from "../../src/contract/Operations.ts"
import { PublicApi } from "../../src/contract/PublicApi.ts"
import { DownstreamError } from "../../src/domain/Errors.ts"
import { recordReadOf, recordReadTable } from "../../src/gateway/rest/RecordReadDirect.ts"
import { ReadinessChecksLive } from "../../src/platform/Readiness.ts"
import { Downstream } from "../../src/services/Downstream.ts"
import { RateLimitingNoOp } from "../../src/services/RateLimiting.ts"
import { ADMIN_TOKEN, backends } from "../support/backends.ts"
import { type Reply, TestApp, TestClient } from "../support/TestApp.ts"

const table = recordReadTable(PublicApi)
const taken = (url: string, method = "GET") => recordReadOf(table, method, url)

describe("RecordReadDirect.recordReadOf", () => {
  it("derives the table from the API: GET endpoints whose one path parameter is the last segment", () => {
    expect(table.get("/v1/customer")?.call).toEqual({ operation: "customer.get", method: "GET", route: "/v1/customer/:id", scope: "read" })
    expect(table.get("/v1/item")?.call.route).toBe("/v1/item/:partItemId")
    expect([...table.get("/v1/project")!.staticSiblings]).toEqual(["lookup"])
    for (const [prefix, read] of table) {
      expect(read.endpoint.method).toBe("GET")
      expect(read.call.route.startsWith(`${prefix}/:`)).toBe(true)
      expect(read.endpoint.query).toBeUndefined()
    }
    // Not taken: two parameters, a segment after the parameter.
    expect([...table.values()].map((read) => read.call.operation)).not.toContain("ticketModel.getMachiningStrategy")
    expect([...table.values()].map((read) => read.call.operation)).not.toContain("serviceJob.production")
  })

  it("takes a GET of a plain id that the endpoint's params schema accepts", () => {
    expect(taken("/v1/customer/0190b7a2-3c4d-7e5f-8a9b-0c1d2e3f4a5b")).toEqual({
      read: table.get("/v1/customer"),
      params: { id: "0190b7a2-3c4d-7e5f-8a9b-0c1d2e3f4a5b" }
    })
    expect(taken("/v1/item/i-1")?.params).toEqual({ partItemId: "i-1" })
    expect(taken("/v1/customer/A.b_c~d-1")?.params).toEqual({ id: "A.b_c~d-1" })
    expect(taken(`/v1/customer/${"x".repeat(100)}`)).toBeDefined()
    expect(taken("/v1/customer/lookup")).toBeDefined()
  })

  it("leaves every other request to the router", () => {
    const variants: ReadonlyArray<readonly [string, string, string?]> = [
      ["HEAD", "/v1/customer/x", "HEAD"],
      ["PUT", "/v1/customer/x", "PUT"],
      ["DELETE", "/v1/customer/x", "DELETE"],
      ["a query string", "/v1/customer/x?expand=1"],
      ["an empty query string", "/v1/customer/x?"],
      ["a fragment", "/v1/customer/x#a"],
      ["a percent-encoded id", "/v1/customer/a%20b"],
      ["a dot segment", "/v1/customer/.."],
      ["a single dot", "/v1/customer/."],
      ["an id the params schema refuses (101 characters)", `/v1/customer/${"x".repeat(101)}`],
      ["no id", "/v1/customer/"],
      ["a trailing slash", "/v1/customer/x/"],
      ["a doubled slash", "/v1//customer/x"],
      ["the list", "/v1/customer"],
      ["a static sibling route", "/v1/project/lookup"],
      ["a segment after the id", "/v1/service-job/x/production"],
      ["an unknown resource", "/v1/nothing/x"],
      ["another case", "/V1/customer/x"],
      ["an absolute URL", "http://127.0.0.1/v1/customer/x"],
      ["a non-ASCII id", "/v1/customer/é"],
      ["the admin API", "/api/v1/secret/x"]
    ]
    for (const [what, url, method] of variants) expect(taken(url, method), what).toBeUndefined()
  })
})

const PER_RESPONSE: ReadonlySet<string> = new Set(["date", "x-request-id", "x-error-source-request-id"])

/** Everything a client sees of an answer, but for the values of the headers that differ per response. */
const seen = (reply: Reply) => ({
  status: reply.status,
  headers: [...reply.headers].filter(([name]) => !PER_RESPONSE.has(name)),
  ids: [...PER_RESPONSE].filter((name) => reply.headers.has(name)),
  body: reply.text
})

/** The same read twice: as it is (taken directly), and with an empty query string (the router's route). */
const bothWays = (path: string, secret: string | undefined) =>
  Effect.gen(function*() {
    const client = yield* TestClient
    expect(taken(path), path).toBeDefined()
    const direct = yield* client.call("GET", path, { secret })
    const routed = yield* client.call("GET", `${path}?`, { secret })
    assert.deepStrictEqual(seen(direct), seen(routed), path)
    return direct
  })

for (const backend of backends) {
  layer(TestApp(backend), { timeout: 60_000, excludeTestServices: true })(`Record reads, direct and routed (${backend})`, (it) => {
    it.effect("answer the same for every record read: found, missing, another app's, and the 401; metered the same", () =>
      Effect.gen(function*() {
        const client = yield* TestClient
        const appId = `direct-${Math.random().toString(36).slice(2)}`
        const { value: secret } = yield* client.createSecret(appId)
        const { value: otherSecret } = yield* client.createSecret(`${appId}-other`)
        const customer = (yield* client.call("POST", "/v1/customer", { secret, body: { name: "Acme", email: "a@acme.example" } })).json()
        const project = (yield* client.call("POST", "/v1/project", { secret, body: { name: "P", customerId: customer.id } })).json()
        const theirs = (yield* client.call("POST", "/v1/customer", { secret: otherSecret, body: { name: "Theirs", email: "t@example.com" } })).json()

        assert.deepStrictEqual(JSON.parse((yield* bothWays(`/v1/customer/${customer.id}`, secret)).text), customer)
        assert.strictEqual(JSON.parse((yield* bothWays(`/v1/project/${project.id}`, secret)).text).id, project.id)
        assert.strictEqual((yield* bothWays(`/v1/customer/${theirs.id}`, secret)).text, "")
        for (const prefix of table.keys()) {
          // Reel groups are numbered.
          const missing = yield* bothWays(`${prefix}/${taken(`${prefix}/no-such-record`) ? "no-such-record" : "999999"}`, secret)
          assert.strictEqual(missing.status, 200, prefix)
          assert.strictEqual(missing.text, "", prefix)
        }
        assert.strictEqual((yield* bothWays(`/v1/customer/${customer.id}`, undefined)).status, 401)
        assert.strictEqual((yield* bothWays(`/v1/customer/${customer.id}`, `${secret}x`)).status, 401)

        const usage = (yield* client.call("GET", `/api/v1/usage?appId=${appId}`, { headers: { "x-admin-token": ADMIN_TOKEN } })).json()
        const calls = (operation: string) => usage.byOperation.find((row: { operation: string }) => row.operation === operation)?.calls
        assert.strictEqual(calls("customer.get"), 2 * 3)
        assert.strictEqual(calls("project.get"), 2 * 2)
        assert.strictEqual(usage.total, 2 + 2 * (3 + table.size))
      }))
  })
}

/** An engine that fails for the id `fails` and answers a record its schema refuses for any other. */
const OddEngine = Layer.succeed(
  Downstream,
  Downstream.of({
    call: (endpoint) => (input, scope) =>
      (input as { readonly params?: { readonly id?: string } }).params?.id === "fails"
        ? Effect.fail(
          new DownstreamError({
            status: 409,
            code: 4091,
            message: `${operationOf(endpoint)} is busy`,
            type: "Conflict",
            source: "engine",
            requestId: scope.requestId
          })
        )
        // An answer its schema refuses: the gateway's 502, on both paths.
        : Effect.succeed({ id: 5 } as never),
    emptyTestData: () => Effect.die("not called")
  })
)

layer(TestApp("pglite", {}, { services: Layer.mergeAll(SecretStoreSql, MeterSql, OddEngine, RateLimitingNoOp, ReadinessChecksLive) }), {
  timeout: 60_000,
  excludeTestServices: true
})(
  "Record reads, direct and routed, over an engine that fails",
  (it) => {
    it.effect("pass the engine's error through, and name its malformed answer, the same way", () =>
      Effect.gen(function*() {
        const client = yield* TestClient
        const { value: secret } = yield* client.createSecret("direct-odd-engine")
        const failed = yield* bothWays("/v1/customer/fails", secret)
        assert.strictEqual(failed.status, 409)
        assert.strictEqual(failed.headers.get("x-error-source"), "engine")
        assert.deepInclude(failed.json(), { code: 4091, message: "customer.get is busy", type: "Conflict" })
        const malformed = yield* bothWays("/v1/customer/malformed", secret)
        assert.strictEqual(malformed.status, 502)
        assert.include(malformed.text, "does not match its schema")
      }))
  }
)
