import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { assert, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { HttpClient, HttpClientRequest, HttpRouter } from "effect/http"
import { HttpApiClient } from "effect/http-api"
import { DownstreamScripted, GatewayServicesInMemory } from "../src/adapters/memory/index.ts"
import { PublicApi } from "../src/contract/PublicApi.ts"
import { GatewayRoutes, ROUTER_CONFIG } from "../src/gateway/server/index.ts"
import { AppConfig } from "../src/services/AppConfig.ts"
import { SecretStore } from "../src/services/SecretStore.ts"

// A custom engine: customers in a map. Each handler has its endpoint's types; other operations answer 501.
const customers = new Map<string, { id: string; name: string; email: string; createdAt: string; updatedAt: string }>()
const CustomEngine = DownstreamScripted({
  "customer.create": ({ payload }) =>
    Effect.sync(() => {
      const now = new Date().toISOString()
      const customer = { id: `c-${customers.size + 1}`, name: payload.name, email: payload.email, createdAt: now, updatedAt: now }
      customers.set(customer.id, customer)
      return customer
    }),
  "customer.get": ({ params }) => Effect.succeed(customers.get(params.id) ?? null)
})

// The gateway's routes over the in-memory services and the custom engine, on a test server.
const Gateway = HttpRouter.serve(GatewayRoutes(undefined), { disableLogger: true, routerConfig: ROUTER_CONFIG }).pipe(
  Layer.provideMerge(Layer.mergeAll(GatewayServicesInMemory, CustomEngine)),
  Layer.provideMerge(NodeHttpServer.layerTest),
  Layer.provide(AppConfig.layer)
)

layer(Gateway)("A gateway over a custom engine", (it) => {
  it.effect("creates a customer and reads it back through the public API", () =>
    Effect.gen(function*() {
      const secret = yield* (yield* SecretStore).create({ appId: "acme", ipAddresses: ["0.0.0.0/0"] })
      const client = yield* HttpApiClient.make(PublicApi, {
        transformClient: HttpClient.mapRequest(HttpClientRequest.setHeader("authorization", secret.value))
      })
      const created = yield* client.customer.create({ payload: { name: "Acme", email: "buyer@acme.example" } })
      assert.deepStrictEqual(yield* client.customer.get({ params: { id: created.id } }), created)
    }))

  it.effect("answers an operation the engine does not script with its 501, and refuses an unknown secret", () =>
    Effect.gen(function*() {
      const secret = yield* (yield* SecretStore).create({ appId: "acme", ipAddresses: ["0.0.0.0/0"] })
      const call = (authorization: string) =>
        HttpClient.execute(HttpClientRequest.get("/v1/customer").pipe(HttpClientRequest.setHeader("authorization", authorization)))
      assert.strictEqual((yield* call(secret.value)).status, 501)
      assert.strictEqual((yield* call(`${secret.id}.${"A".repeat(43)}`)).status, 401)
    }))
})
