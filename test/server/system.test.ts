/** Liveness, readiness, the derived OpenAPI document, and the admin API switched off. */
import { assert, layer } from "@effect/vitest"
import { Effect, Option } from "effect"
import { downstreamMode, TestApp, TestClient } from "../support/TestApp.ts"

layer(TestApp("pglite", { adminToken: Option.none() }), { timeout: 60_000, excludeTestServices: true })(
  "System surfaces",
  (it) => {
    it.effect("answers /health and /ready without authentication", () =>
      Effect.gen(function*() {
        const client = yield* TestClient
        const health = yield* client.call("GET", "/health")
        assert.deepStrictEqual([health.status, health.json()], [200, { status: "ok" }])
        const ready = yield* client.call("GET", "/ready")
        // Storage, and the engine when it is remote (DOWNSTREAM_MODE=http); no REDIS_URL here.
        const checks = downstreamMode === "http" ? { storage: "ok", engine: "ok" } : { storage: "ok" }
        assert.deepStrictEqual([ready.status, ready.json()], [200, { status: "ready", checks }])
      }))

    it.effect("keeps the admin API off when ADMIN_TOKEN is unset, whatever token is sent", () =>
      Effect.gen(function*() {
        const client = yield* TestClient
        for (const headers of [{}, { "x-admin-token": "anything-at-all-0123456789" }]) {
          const reply = yield* client.call("POST", "/api/v1/secret", { headers, body: { appId: "a", ipAddresses: ["0.0.0.0/0"] } })
          assert.strictEqual(reply.status, 404)
        }
        const usage = yield* client.call("GET", "/api/v1/usage", { headers: { "x-admin-token": "anything-at-all-0123456789" } })
        assert.strictEqual(usage.status, 404)
      }))

    it.effect("serves the OpenAPI document derived from the API, with the v1 customer paths", () =>
      Effect.gen(function*() {
        const client = yield* TestClient
        const document = (yield* client.call("GET", "/openapi.json")).json()
        assert.strictEqual(document.openapi.slice(0, 3), "3.1")
        assert.containsAllKeys(document.paths, ["/v1/customer", "/v1/customer/{id}"])
        assert.containsAllKeys(document.paths["/v1/customer/{id}"], ["get", "put"])
      }))
  }
)
