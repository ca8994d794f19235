/**
 * CORS for browser integrations (CORS_ORIGINS): the variable is checked at
 * start; a preflight from an allowed origin is answered before
 * authentication, on REST and MCP paths alike; every answer to an allowed
 * origin (the direct record read, a list, the 401, 404, 405, 403 of MCP)
 * carries the origin and the exposed headers; any other origin, the admin
 * API, and a server without CORS_ORIGINS send no CORS header at all.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import { ConfigProvider, Effect, Exit } from "effect"
import { CORS_ALLOWED_HEADERS, CORS_EXPOSED_HEADERS, CORS_MAX_AGE_SECONDS } from "../../src/gateway/request/Cors.ts"
import { loadAppConfig } from "../../src/services/AppConfig.ts"
import { ADMIN_TOKEN, backends } from "../support/backends.ts"
import { MCP_VERSION } from "../support/mcp.ts"
import { type Reply, TestApp, TestClient } from "../support/TestApp.ts"

const APP = "https://app.example.com"
const LOCAL = "http://localhost:5173"
const OTHER = "https://evil.example"

const load = (env: Record<string, string>) =>
  Effect.runSyncExit(loadAppConfig.pipe(Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromUnknown(env))))

describe("CORS_ORIGINS", () => {
  it("is empty unless set, keeps origins as browsers send them, and takes * alone", () => {
    const origins = (value: string | undefined) => {
      const exit = load(value === undefined ? {} : { CORS_ORIGINS: value })
      return Exit.isSuccess(exit) ? exit.value.corsOrigins : assert.fail(`${value} refused: ${String(exit.cause)}`)
    }
    assert.deepStrictEqual(origins(undefined), [])
    assert.deepStrictEqual(origins(""), [])
    assert.deepStrictEqual(origins(" https://App.Example.com , http://localhost:5173,https://x.example:443 "), [
      APP,
      LOCAL,
      "https://x.example"
    ])
    assert.deepStrictEqual(origins("http://[::1]:8080"), ["http://[::1]:8080"])
    assert.deepStrictEqual(origins("*"), ["*"])
  })

  it("stops the start on anything that is not an origin, naming CORS_ORIGINS", () => {
    for (
      const value of [
        "app.example.com",
        "https://app.example.com/",
        "https://app.example.com/path",
        "ftp://files.example",
        "null",
        "https://",
        "https://a.example?x",
        "https://user@a.example",
        "*, https://app.example.com",
        "https://a.example:99999"
      ]
    ) {
      const exit = load({ CORS_ORIGINS: value })
      assert.isTrue(Exit.isFailure(exit), value)
      if (Exit.isFailure(exit)) assert.include(String(exit.cause), "CORS_ORIGINS", value)
    }
  })
})

const corsHeaders = (reply: Reply) => [...reply.headers.keys()].filter((name) => name.startsWith("access-control-"))
const listed = (value: string | null) => (value ?? "").split(",").map((part) => part.trim().toLowerCase())

/** The headers an answer to an allowed origin carries. */
const assertDecorated = (reply: Reply, origin: string, what: string) => {
  assert.strictEqual(reply.headers.get("access-control-allow-origin"), origin, what)
  assert.include(listed(reply.headers.get("vary")), "origin", what)
  assert.includeMembers(listed(reply.headers.get("access-control-expose-headers")), [...CORS_EXPOSED_HEADERS], what)
  assert.isNull(reply.headers.get("access-control-allow-credentials"), what)
}

const MCP_HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": MCP_VERSION }
const PING = { jsonrpc: "2.0", id: 1, method: "ping" }

for (const backend of backends) {
  layer(TestApp(backend, { corsOrigins: [APP, LOCAL] }), { timeout: 60_000, excludeTestServices: true })(`CORS (${backend})`, (it) => {
    it.effect("answers a preflight from an allowed origin without authentication, on REST and MCP paths", () =>
      Effect.gen(function*() {
        const client = yield* TestClient
        for (const [path, method] of [["/v1/customer/x", "PUT"], ["/v1/customer", "POST"], ["/v1/mcp", "POST"], ["/v1/no-such-thing", "GET"]] as const) {
          const reply = yield* client.call("OPTIONS", path, {
            headers: { origin: LOCAL, "access-control-request-method": method, "access-control-request-headers": "authorization, content-type" }
          })
          assert.strictEqual(reply.status, 204, path)
          assert.strictEqual(reply.text, "", path)
          assert.strictEqual(reply.headers.get("access-control-allow-origin"), LOCAL, path)
          assert.include(listed(reply.headers.get("vary")), "origin", path)
          assert.includeMembers(listed(reply.headers.get("access-control-allow-methods")), ["get", "head", "post", "put", "delete"], path)
          assert.includeMembers(listed(reply.headers.get("access-control-allow-headers")), [
            "authorization",
            "content-type",
            "idempotency-key",
            "if-match",
            "if-none-match",
            "traceparent",
            ...CORS_ALLOWED_HEADERS
          ], path)
          assert.strictEqual(reply.headers.get("access-control-max-age"), String(CORS_MAX_AGE_SECONDS), path)
          // Not authenticated: no request id of a metered call, no challenge.
          assert.isNull(reply.headers.get("www-authenticate"), path)
        }
      }))

    it.effect("decorates every answer to an allowed origin: record read, list, 401, 404, 405, MCP's 403", () =>
      Effect.gen(function*() {
        const client = yield* TestClient
        const { value: secret } = yield* client.createSecret(`cors-${Math.random().toString(36).slice(2)}`)
        const headers = { origin: APP }
        const customer = yield* client.call("POST", "/v1/customer", { secret, headers, body: { name: "Acme", email: "a@acme.example" } })
        assert.strictEqual(customer.status, 200, customer.text)
        assertDecorated(customer, APP, "create")
        const id = customer.json().id as string

        // The direct record read (RecordReadDirect), and the same read through the router.
        const direct = yield* client.call("GET", `/v1/customer/${id}`, { secret, headers })
        assert.strictEqual(direct.json().id, id)
        assertDecorated(direct, APP, "direct read")
        const routed = yield* client.call("GET", `/v1/customer?ids=${id}`, { secret, headers })
        assert.strictEqual(routed.status, 200)
        assertDecorated(routed, APP, "list")

        const unauthorized = yield* client.call("GET", `/v1/customer/${id}`, { headers })
        assert.strictEqual(unauthorized.status, 401)
        assertDecorated(unauthorized, APP, "401")
        const missing = yield* client.call("GET", "/v1/no-such-thing", { secret, headers })
        assert.strictEqual(missing.status, 404)
        assertDecorated(missing, APP, "404")
        const wrongMethod = yield* client.call("PATCH", `/v1/customer/${id}`, { secret, headers, body: {} })
        assert.strictEqual(wrongMethod.status, 405)
        assertDecorated(wrongMethod, APP, "405")

        // MCP: the page reads MCP's own 403 (its origin is not in MCP_ALLOWED_ORIGINS).
        const mcp = yield* client.call("POST", "/v1/mcp", { secret, headers: { ...MCP_HEADERS, ...headers }, body: PING })
        assert.strictEqual(mcp.status, 403)
        assertDecorated(mcp, APP, "MCP 403")
      }))

    it.effect("sends no CORS header to another origin, to a request without Origin, or on the admin API", () =>
      Effect.gen(function*() {
        const client = yield* TestClient
        const { value: secret } = yield* client.createSecret(`cors-${Math.random().toString(36).slice(2)}`)

        const preflight = yield* client.call("OPTIONS", "/v1/customer", { headers: { origin: OTHER, "access-control-request-method": "POST" } })
        assert.deepStrictEqual(corsHeaders(preflight), [])
        // A plain OPTIONS to the browser, which refuses it.
        assert.strictEqual(preflight.status, 204)

        for (const headers of [{ origin: OTHER }, { origin: `${APP}:8443` }, { origin: "null" }, {}]) {
          const reply = yield* client.call("GET", "/v1/customer", { secret, headers })
          assert.strictEqual(reply.status, 200)
          assert.deepStrictEqual(corsHeaders(reply), [], JSON.stringify(headers))
          // Cached answers are kept apart by origin.
          assert.include(listed(reply.headers.get("vary")), "origin")
        }
        const unauthorized = yield* client.call("GET", "/v1/customer", { headers: { origin: OTHER } })
        assert.strictEqual(unauthorized.status, 401)
        assert.deepStrictEqual(corsHeaders(unauthorized), [])

        const admin = yield* client.call("GET", "/api/v1/secret", { headers: { origin: APP, "x-admin-token": ADMIN_TOKEN } })
        assert.strictEqual(admin.status, 200)
        assert.deepStrictEqual(corsHeaders(admin), [])
        const adminPreflight = yield* client.call("OPTIONS", "/api/v1/secret", {
          headers: { origin: APP, "access-control-request-method": "POST" }
        })
        assert.deepStrictEqual(corsHeaders(adminPreflight), [])
      }))
  })
}

layer(TestApp(backends[0]!, { corsOrigins: ["*"] }), { timeout: 60_000, excludeTestServices: true })("CORS_ORIGINS=*", (it) => {
  it.effect("allows every origin with Access-Control-Allow-Origin: *", () =>
    Effect.gen(function*() {
      const client = yield* TestClient
      const preflight = yield* client.call("OPTIONS", "/v1/customer", { headers: { origin: OTHER, "access-control-request-method": "POST" } })
      assert.strictEqual(preflight.status, 204)
      assert.strictEqual(preflight.headers.get("access-control-allow-origin"), "*")
      assert.include(listed(preflight.headers.get("access-control-allow-headers")), "authorization")
      const unauthorized = yield* client.call("GET", "/v1/customer", { headers: { origin: OTHER } })
      assert.strictEqual(unauthorized.status, 401)
      assert.strictEqual(unauthorized.headers.get("access-control-allow-origin"), "*")
      assert.includeMembers(listed(unauthorized.headers.get("access-control-expose-headers")), [...CORS_EXPOSED_HEADERS])
      const without = yield* client.call("GET", "/v1/customer")
      assert.deepStrictEqual(corsHeaders(without), [])
    }))
})

layer(TestApp(backends[0]!), { timeout: 60_000, excludeTestServices: true })("CORS_ORIGINS unset", (it) => {
  it.effect("sends no CORS header at all, and a preflight is a plain OPTIONS", () =>
    Effect.gen(function*() {
      const client = yield* TestClient
      const preflight = yield* client.call("OPTIONS", "/v1/customer", { headers: { origin: APP, "access-control-request-method": "POST" } })
      assert.strictEqual(preflight.status, 204)
      assert.deepStrictEqual(corsHeaders(preflight), [])
      assert.strictEqual(preflight.headers.get("allow"), "GET, HEAD, POST, OPTIONS")
      const reply = yield* client.call("GET", "/v1/customer", { headers: { origin: APP } })
      assert.strictEqual(reply.status, 401)
      assert.deepStrictEqual(corsHeaders(reply), [])
      assert.isNull(reply.headers.get("vary"))
    }))
})
