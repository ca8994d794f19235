/**
 * The real server, in-process on a random port, over real storage; and a
 * small client that calls it over HTTP like an integrator would.
 */
import { NodeHttpServer } from "@effect/platform-node"
import { Context, Effect, Layer } from "effect"
import { HttpRouter, HttpServer } from "effect/http"
import { createServer } from "node:http"
import { ServicesLive } from "../../src/layers/AppLayers.ts"
import { AllRoutes } from "../../src/layers/http/Server.ts"
import { StorageLive } from "../../src/layers/storage/Storage.ts"
import type { SqlClient } from "effect/sql"
import type { AppConfig, AppConfigShape } from "../../src/services/AppConfig.ts"
import type { Downstream } from "../../src/services/Downstream.ts"
import type { Meter } from "../../src/services/Meter.ts"
import type { SecretStore } from "../../src/services/SecretStore.ts"
import { ADMIN_TOKEN, type Backend, testConfig } from "./backends.ts"

export interface Reply {
  readonly status: number
  readonly headers: Headers
  readonly text: string
  readonly json: () => any
}

export interface CallOptions {
  readonly secret?: string | undefined
  readonly body?: unknown
  readonly headers?: Record<string, string> | undefined
}

export class TestClient extends Context.Service<TestClient, {
  readonly baseUrl: string
  readonly call: (method: string, path: string, options?: CallOptions) => Effect.Effect<Reply>
  /** Creates a secret through the admin API and returns its value and id. */
  readonly createSecret: (appId: string, ipAddresses?: ReadonlyArray<string>) => Effect.Effect<{ id: string; value: string }>
}>()("test/TestClient") {}

const clientLayer = Layer.effect(
  TestClient,
  Effect.gen(function*() {
    const server = yield* HttpServer.HttpServer
    const address = server.address
    if (address._tag === "UnixPathAddress") return yield* Effect.die(new Error("expected a TCP address"))
    const baseUrl = `http://127.0.0.1:${address.port}`

    const call = (method: string, path: string, options: CallOptions = {}) =>
      Effect.promise(async () => {
        const headers: Record<string, string> = { ...options.headers }
        if (options.secret !== undefined) headers.authorization = options.secret
        if (options.body !== undefined) headers["content-type"] = "application/json"
        const response = await fetch(`${baseUrl}${path}`, {
          method,
          headers,
          ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
          signal: AbortSignal.timeout(10_000)
        })
        const text = await response.text()
        return { status: response.status, headers: response.headers, text, json: () => JSON.parse(text) }
      })

    const createSecret = (appId: string, ipAddresses: ReadonlyArray<string> = ["0.0.0.0/0"]) =>
      Effect.flatMap(
        call("POST", "/api/v1/secret", { headers: { "x-admin-token": ADMIN_TOKEN }, body: { appId, ipAddresses } }),
        (reply) =>
          reply.status === 201
            ? Effect.succeed(reply.json() as { id: string; value: string })
            : Effect.die(new Error(`secret create failed: ${reply.status} ${reply.text}`))
      )

    return TestClient.of({ baseUrl, call, createSecret })
  })
)

/**
 * The whole service over `backend`, served on 127.0.0.1:<random>, plus the
 * TestClient. `services` swaps the service layers (SecretStore, Meter,
 * Downstream) for tests that need one of them to misbehave.
 */
export const TestApp = (
  backend: Backend,
  overrides: Partial<AppConfigShape> = {},
  services: Layer.Layer<SecretStore | Meter | Downstream, never, SqlClient.SqlClient | AppConfig> = ServicesLive
) =>
  clientLayer.pipe(
    Layer.provideMerge(HttpRouter.serve(AllRoutes, { disableLogger: true, disableListenLog: true })),
    Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })),
    Layer.provideMerge(services),
    Layer.provideMerge(StorageLive("serve")),
    Layer.provideMerge(testConfig(backend, overrides))
  )
