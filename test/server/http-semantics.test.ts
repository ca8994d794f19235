/**
 * HTTP semantics of every path, from the route table the API definitions
 * give (RouteTable): a known path with a method it does not take is a 405
 * with `Allow` and the standard error body; a plain OPTIONS is a 204 with
 * `Allow`; HEAD answers wherever GET does, with the GET's status and
 * headers and no body, authenticated and metered like the GET; an unknown
 * path stays the 404.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import { Effect } from "effect"
import { AdminApi } from "../../src/contract/AdminApi.ts"
import { PublicApi } from "../../src/contract/PublicApi.ts"
import { GATEWAY_ROUTES } from "../../src/gateway/server/GatewayRoutes.ts"
import { routesOf } from "../../src/platform/http/RouteTable.ts"
import { ADMIN_TOKEN, backends } from "../support/backends.ts"
import { type Reply, TestApp, TestClient } from "../support/TestApp.ts"

/** A concrete URL of a route pattern: each parameter a plain value. */
const urlOf = (path: string) => path.replace(/:[^/]+/g, "x1")

const ENDPOINTS = [...routesOf(PublicApi), ...routesOf(AdminApi)]

/** Whether a route pattern matches `url` as the router does (a parameter takes any one segment). */
const matches = (path: string, url: string) => new RegExp(`^${path.replace(/:[^/]+/g, "[^/]+")}$`).test(url)

/**
 * Each distinct path (parameter names aside), with the methods of every
 * endpoint that matches it: `/v1/machine/by-proximity` (POST) is also
 * `/v1/machine/:id` (GET, PUT, DELETE) to the router.
 */
const PATHS = [...new Set(ENDPOINTS.map(({ path }) => urlOf(path)))].map((url) =>
  [url, ENDPOINTS.filter(({ path }) => matches(path, url)).map(({ method }) => method)] as const
)

const expectedAllow = (methods: ReadonlyArray<string>) =>
  ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"].filter((method) =>
    methods.includes(method) || (method === "HEAD" && methods.includes("GET")) || method === "OPTIONS"
  ).join(", ")

describe("RouteTable", () => {
  it("derives every path's methods from the API definitions", () => {
    assert.isAbove(PATHS.length, 60)
    for (const [url, methods] of PATHS) assert.strictEqual(GATEWAY_ROUTES.allowed(url)?.join(", "), expectedAllow(methods), url)
    // Parameter names do not matter: GET /item/:partItemId and PUT /item/:id are one path.
    assert.deepStrictEqual(GATEWAY_ROUTES.allowed("/v1/item/i-1"), ["GET", "HEAD", "PUT", "DELETE", "OPTIONS"])
    assert.deepStrictEqual(GATEWAY_ROUTES.allowed("/v1/customer?name=x"), ["GET", "HEAD", "POST", "OPTIONS"])
    assert.deepStrictEqual(GATEWAY_ROUTES.allowed("/health"), ["GET", "HEAD", "OPTIONS"])
    assert.deepStrictEqual(GATEWAY_ROUTES.allowed("/v1/mcp"), ["POST"])
    for (const unknown of ["/v1/no-such-thing", "/v1/customer/x/y", "/v1", "/"]) assert.isUndefined(GATEWAY_ROUTES.allowed(unknown), unknown)
    // PATCH: the admin API's change of a secret's grants.
    assert.deepStrictEqual(GATEWAY_ROUTES.methods, ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"])
  })
})

/**
 * The framing of a message, which Node chooses per response: it closes the
 * connection after a HEAD it answers with a Content-Length, and never sends
 * a HEAD's (empty) body in chunks.
 */
const FRAMING = new Set(["connection", "keep-alive", "transfer-encoding"])
/** Headers whose values differ per response. */
const PER_RESPONSE = new Set(["date", "x-request-id", "ratelimit"])

/** The headers of an answer but its framing: their names, and the values of those that do not differ per response. */
const headersOf = (reply: Reply) => ({
  names: [...reply.headers.keys()].filter((name) => !FRAMING.has(name)),
  values: [...reply.headers].filter(([name]) => !FRAMING.has(name) && !PER_RESPONSE.has(name))
})

for (const backend of backends) {
  layer(TestApp(backend), { timeout: 60_000, excludeTestServices: true })(`HTTP semantics (${backend})`, (it) => {
    it.effect("answers 405 with Allow and the standard body for a method a known path does not take, on every path", () =>
      Effect.gen(function*() {
        const client = yield* TestClient
        const { value: secret } = yield* client.createSecret(`semantics-${Math.random().toString(36).slice(2)}`)
        for (const [url, methods] of PATHS) {
          for (const method of ["PROPFIND", ...["GET", "POST", "PUT", "PATCH", "DELETE"].filter((m) => !methods.includes(m))]) {
            const reply = yield* client.call(method, url, { secret })
            assert.strictEqual(reply.status, 405, `${method} ${url}: ${reply.text}`)
            assert.strictEqual(reply.headers.get("allow"), expectedAllow(methods), `${method} ${url}`)
            assert.deepStrictEqual(reply.json(), {
              code: 405,
              message: `No operation ${method} ${url}: it takes ${expectedAllow(methods)}`,
              type: "MethodNotAllowed"
            })
          }
        }
        // A query string does not change the path.
        const withQuery = yield* client.call("DELETE", "/v1/customer?name=x", { secret })
        assert.strictEqual(withQuery.status, 405)
        assert.strictEqual(withQuery.json().message, "No operation DELETE /v1/customer: it takes GET, HEAD, POST, OPTIONS")
        // Not authenticated: the same 405 without a secret.
        const anonymous = yield* client.call("PATCH", "/v1/customer/x1")
        assert.strictEqual(anonymous.status, 405)
      }))

    it.effect("keeps the 404 for an unknown path, whatever the method", () =>
      Effect.gen(function*() {
        const client = yield* TestClient
        for (const method of ["GET", "PATCH", "OPTIONS", "DELETE"]) {
          const reply = yield* client.call(method, "/v1/no-such-thing?x=1")
          assert.strictEqual(reply.status, 404, method)
          assert.deepStrictEqual(reply.json(), { code: 404, message: `No operation ${method} /v1/no-such-thing`, type: "NotFound" })
          assert.isNull(reply.headers.get("allow"))
        }
        const head = yield* client.call("HEAD", "/v1/no-such-thing")
        assert.strictEqual(head.status, 404)
        assert.strictEqual(head.text, "")
      }))

    it.effect("answers a plain OPTIONS of a known path with 204 and Allow, without authentication", () =>
      Effect.gen(function*() {
        const client = yield* TestClient
        for (const [url, methods] of PATHS) {
          const reply = yield* client.call("OPTIONS", url)
          assert.strictEqual(reply.status, 204, url)
          assert.strictEqual(reply.text, "", url)
          assert.strictEqual(reply.headers.get("allow"), expectedAllow(methods), url)
        }
        const health = yield* client.call("OPTIONS", "/health")
        assert.strictEqual(health.headers.get("allow"), "GET, HEAD, OPTIONS")
      }))

    it.effect("answers HEAD wherever GET answers: same status and headers, no body, authenticated and metered like the GET", () =>
      Effect.gen(function*() {
        const client = yield* TestClient
        const appId = `head-${Math.random().toString(36).slice(2)}`
        const { value: secret } = yield* client.createSecret(appId)
        const created = yield* client.call("POST", "/v1/customer", { secret, body: { name: "Acme", email: "a@acme.example" } })
        const id = created.json().id as string
        const usage = () =>
          Effect.map(
            client.call("GET", `/api/v1/usage?appId=${appId}`, { headers: { "x-admin-token": ADMIN_TOKEN } }),
            (reply) => reply.json() as { total: number; byOperation: ReadonlyArray<{ operation: string; calls: number }> }
          )
        const reads = (totals: { byOperation: ReadonlyArray<{ operation: string; calls: number }> }, operation: string) =>
          totals.byOperation.find((row) => row.operation === operation)?.calls ?? 0
        const before = yield* usage()

        for (const path of [`/v1/customer/${id}`, `/v1/customer?ids=${id}`, "/v1/customer/no-such-id", "/v1/project/lookup?externalReference=x"]) {
          const get = yield* client.call("GET", path, { secret })
          const head = yield* client.call("HEAD", path, { secret })
          assert.strictEqual(head.status, get.status, path)
          assert.strictEqual(head.text, "", path)
          assert.deepStrictEqual(headersOf(head), headersOf(get), path)
          assert.isNotNull(head.headers.get("x-request-id"), path)
        }
        const after = yield* usage()
        assert.strictEqual(reads(after, "customer.get") - reads(before, "customer.get"), 4)
        assert.strictEqual(reads(after, "customer.list") - reads(before, "customer.list"), 2)

        const unauthorized = yield* client.call("HEAD", `/v1/customer/${id}`)
        assert.strictEqual(unauthorized.status, 401)
        assert.strictEqual(unauthorized.text, "")
        assert.strictEqual(unauthorized.headers.get("www-authenticate"), "Bearer realm=\"v1\"")

        for (const path of ["/health", "/openapi.json"]) {
          const head = yield* client.call("HEAD", path)
          assert.strictEqual(head.status, 200, path)
          assert.strictEqual(head.text, "", path)
        }
        // A path without GET: HEAD is a 405 like any other method it does not take.
        const [postOnly, methods] = PATHS.find(([, methods]) => !methods.includes("GET"))!
        const head = yield* client.call("HEAD", postOnly, { secret })
        assert.strictEqual(head.status, 405, postOnly)
        assert.strictEqual(head.headers.get("allow"), expectedAllow(methods))
      }))
  })
}
