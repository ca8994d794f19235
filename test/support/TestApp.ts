/**
 * The real server, in-process on a random port, over real storage; and a
 * small client that calls it over HTTP like an integrator would.
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Context, Effect, Layer, Option } from "effect"
import { FetchHttpClient, HttpClient, HttpClientRequest, HttpRouter, HttpServer } from "effect/http"
import { HttpApiClient } from "effect/http-api"
import type { SqlClient } from "effect/sql"
import { createServer } from "node:http"
import { AppRateLimitsSql } from "../../src/adapters/sql/AppRateLimitsSql.ts"
import { IdempotencySql } from "../../src/adapters/sql/IdempotencySql.ts"
import { MeterSqlClient, StorageLive } from "../../src/adapters/storage/Storage.ts"
import { ServicesLive } from "../../src/app/AppLayers.ts"
import { type EngineRoutesOptions, EngineRoutesWith } from "../../src/app/EngineServer.ts"
import { ModelAnalyserLive, ModelFetcherLive } from "../../src/app/ModelServices.ts"
import { WebhookDeliveryLive, WebhookDeliveryWithEmbeddedEngine, WebhookSenderLive } from "../../src/app/Webhooks.ts"
import { PublicApi } from "../../src/contract/PublicApi.ts"
import { Engine } from "../../src/engine/Engine.ts"
import { type EngineOutbound } from "../../src/engine/Engine.ts"
import { CommittedEvents } from "../../src/engine/events/CommittedEvents.ts"
import type { ModelAnalyser } from "../../src/engine/geometry/ModelAnalyser.ts"
import type { ModelFetcher } from "../../src/engine/geometry/ModelFetcher.ts"
import { GatewayRoutes } from "../../src/gateway/server/Server.ts"
import { ROUTER_CONFIG } from "../../src/platform/http/RouteTable.ts"
import { ReadinessChecksLive } from "../../src/platform/Readiness.ts"
import { type Instruments, InstrumentsNoOp } from "../../src/platform/telemetry/Instruments.ts"
import { AppConfig, type AppConfigShape } from "../../src/services/AppConfig.ts"
import type { Downstream } from "../../src/services/Downstream.ts"
import type { Meter } from "../../src/services/Meter.ts"
import type { RateLimiting } from "../../src/services/RateLimiting.ts"
import type { ReadinessChecks } from "../../src/services/Readiness.ts"
import type { SecretStore } from "../../src/services/SecretStore.ts"
import { ADMIN_TOKEN, type Backend, testConfig } from "./backends.ts"

export interface Reply {
  readonly status: number
  readonly headers: Headers
  readonly text: string
  readonly json: () => any
}

/** What a secret allows besides its ranges (POST /api/v1/secret): all scopes, live, no limit unless said. */
export interface SecretGrants {
  readonly scopes?: ReadonlyArray<string> | undefined
  readonly mode?: "live" | "test" | undefined
  readonly maxAcceptTotal?: number | null | undefined
}

export interface CallOptions {
  readonly secret?: string | undefined
  readonly body?: unknown
  readonly headers?: Record<string, string> | undefined
}

/** A typed client of PublicApi for one secret: requests and answers as the endpoints' schemas say. */
const publicApiClient = (baseUrl: string, secret: string) =>
  HttpApiClient.make(PublicApi, {
    baseUrl,
    transformClient: HttpClient.mapRequest(HttpClientRequest.setHeader("authorization", secret))
  }).pipe(Effect.provide(FetchHttpClient.layer))

export type PublicApiClient = Effect.Success<ReturnType<typeof publicApiClient>>

export class TestClient extends Context.Service<TestClient, {
  readonly baseUrl: string
  /** Raw HTTP, for what is checked byte for byte (status, headers, exact bodies). */
  readonly call: (method: string, path: string, options?: CallOptions) => Effect.Effect<Reply>
  /** The typed client of PublicApi (HttpApiClient), calling with `secret`. */
  readonly api: (secret: string) => Effect.Effect<PublicApiClient>
  /** Creates a secret through the admin API (with `grants`: scopes, mode, maxAcceptTotal) and returns its value and id. */
  readonly createSecret: (appId: string, ipAddresses?: ReadonlyArray<string>, grants?: SecretGrants) => Effect.Effect<{ id: string; value: string }>
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
        if (options.body !== undefined) headers["content-type"] ??= "application/json"
        const response = await fetch(`${baseUrl}${path}`, {
          method,
          headers,
          ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
          signal: AbortSignal.timeout(10_000)
        })
        const text = await response.text()
        return { status: response.status, headers: response.headers, text, json: () => JSON.parse(text) }
      })

    const createSecret = (appId: string, ipAddresses: ReadonlyArray<string> = ["0.0.0.0/0"], grants: SecretGrants = {}) =>
      Effect.flatMap(
        call("POST", "/api/v1/secret", { headers: { "x-admin-token": ADMIN_TOKEN }, body: { appId, ipAddresses, ...grants } }),
        (reply) =>
          reply.status === 201
            ? Effect.succeed(reply.json() as { id: string; value: string })
            : Effect.die(new Error(`secret create failed: ${reply.status} ${reply.text}`))
      )

    return TestClient.of({ baseUrl, call, createSecret, api: (secret) => publicApiClient(baseUrl, secret) })
  })
)

/**
 * How the gateway reaches the engine in TestApp: `embedded` (the default), or
 * `http` with DOWNSTREAM_MODE=http: an engine served in-process on its own
 * random port over the same storage, and the gateway pointed at it
 * (DOWNSTREAM_URL), so every HTTP suite also runs over the engine's API.
 */
export const downstreamMode: "embedded" | "http" = process.env.DOWNSTREAM_MODE === "http" ? "http" : "embedded"

/** The base URL of the in-process engine (`http://127.0.0.1:<port>`). */
export class EngineUrl extends Context.Service<EngineUrl, string>()("test/EngineUrl") {}

const urlOf = Effect.gen(function*() {
  const address = (yield* HttpServer.HttpServer).address
  if (address._tag === "UnixPathAddress") return yield* Effect.die(new Error("expected a TCP address"))
  return `http://127.0.0.1:${address.port}`
})

/**
 * The engine service (src/app/EngineServer.ts routes + Engine) served in-process
 * on 127.0.0.1:<random> over the SqlClient in context; provides its URL only.
 */
export const EngineOnRandomPort = (options: EngineRoutesOptions = { token: Option.none() }) => {
  const server = HttpRouter.serve(EngineRoutesWith(options), { disableLogger: true, disableListenLog: true }).pipe(
    // Its own readiness list: the gateway's (ServicesLive) holds the check of this engine, which is not the engine's to run.
    Layer.provide([Engine.layer, Layer.fresh(ReadinessChecksLive)]),
    Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })),
    Layer.merge(WebhookDeliveryLive)
  )
  // Only EngineUrl leaves: the engine's HttpServer must not shadow the gateway's.
  return Layer.effect(EngineUrl, urlOf).pipe(Layer.provide(server))
}

/** The service layers a suite may swap (SecretStore, Meter, Downstream, rate limits, readiness checks), over storage. */
export type TestServices = Layer.Layer<
  SecretStore | Meter | Downstream | RateLimiting | ReadinessChecks,
  never,
  SqlClient.SqlClient | MeterSqlClient | AppConfig | Instruments | EngineOutbound
>

/** What a suite may change of TestApp besides AppConfig. */
export interface TestAppOptions {
  /**
   * The service layers instead of ServicesLive, for a suite that needs one of
   * them to misbehave; it composes the rate limits and readiness checks it
   * wants too (RateLimitingNoOp, ReadinessChecksLive).
   */
  readonly services?: TestServices | undefined
  /** The engine's model fetcher; MODEL_FETCH_* as AppConfig read them unless given. */
  readonly modelFetcher?: Layer.Layer<ModelFetcher> | undefined
  /** The engine's model analyser; MODEL_ANALYSIS_* and MODEL_MAX_* as AppConfig read them unless given. */
  readonly modelAnalyser?: Layer.Layer<ModelAnalyser> | undefined
}

/**
 * The engine's outbound services: the suite's fetcher and analyser, else as
 * AppConfig read them, the webhook sender as AppConfig configured it, and the
 * hub of committed events. One layer value per suite, so the in-process
 * engine and the gateway share them (the dispatcher hears the engine's calls).
 */
const engineOutbound = (options: TestAppOptions): Layer.Layer<EngineOutbound, never, AppConfig> =>
  Layer.mergeAll(options.modelFetcher ?? ModelFetcherLive, options.modelAnalyser ?? ModelAnalyserLive, WebhookSenderLive, CommittedEvents.layer)

/** Storage and AppConfig for a suite; in-process, no telemetry is exported, so its instruments keep nothing. */
const testStorage = (backend: Backend, overrides: Partial<AppConfigShape>) =>
  StorageLive("serve").pipe(Layer.provideMerge(InstrumentsNoOp), Layer.provideMerge(testConfig(backend, overrides)))

/** Storage and AppConfig for a suite; AppConfig's DOWNSTREAM_URL pointing at an in-process engine. */
const storageOverEngine = (
  backend: Backend,
  overrides: Partial<AppConfigShape>,
  engine: EngineRoutesOptions,
  outbound: Layer.Layer<EngineOutbound, never, AppConfig>
) =>
  Layer.effect(
    AppConfig,
    Effect.gen(function*() {
      const config = yield* AppConfig
      return { ...config, downstreamUrl: Option.some(yield* EngineUrl) }
    })
  ).pipe(
    Layer.provideMerge(EngineOnRandomPort(engine).pipe(Layer.provide(outbound))),
    Layer.provideMerge(testStorage(backend, overrides))
  )

const gateway = <A, E>(
  base: Layer.Layer<A | SqlClient.SqlClient | MeterSqlClient | AppConfig | Instruments, E>,
  services: TestServices,
  outbound: Layer.Layer<EngineOutbound, never, AppConfig>
) =>
  clientLayer.pipe(
    Layer.provideMerge(HttpRouter.serve(GatewayRoutes(undefined), { disableLogger: true, disableListenLog: true, routerConfig: ROUTER_CONFIG })),
    Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })),
    // What every gateway stores besides: idempotency keys' answers, rate limit overrides (ServicesLive has the same layers, built once).
    Layer.provideMerge(Layer.mergeAll(services, IdempotencySql, AppRateLimitsSql)),
    Layer.merge(WebhookDeliveryWithEmbeddedEngine),
    // In the suite's context too: a test may run an engine step itself.
    Layer.provideMerge(outbound),
    Layer.provideMerge(base)
  )

/**
 * The whole service over `backend`, served on 127.0.0.1:<random>, plus the
 * TestClient. `options` swaps the service layers, or the engine's model
 * fetcher or analyser. With DOWNSTREAM_MODE=http (and no `downstreamUrl`
 * override) the engine answers over its HTTP API instead of in-process.
 */
export const TestApp = (backend: Backend, overrides: Partial<AppConfigShape> = {}, options: TestAppOptions = {}) => {
  const outbound = engineOutbound(options)
  const services = options.services ?? ServicesLive
  return downstreamMode === "http" && overrides.downstreamUrl === undefined
    ? gateway(storageOverEngine(backend, overrides, { token: Option.none() }, outbound), services, outbound)
    : gateway(testStorage(backend, overrides), services, outbound)
}

/**
 * The gateway pointed at an engine served in-process over the same storage,
 * whatever DOWNSTREAM_MODE says; EngineUrl gives the engine's address.
 */
export const TestAppOverEngine = (
  backend: Backend,
  overrides: Partial<AppConfigShape> = {},
  engine: EngineRoutesOptions = { token: Option.none() }
) => {
  const outbound = engineOutbound({})
  return gateway(storageOverEngine(backend, overrides, engine, outbound), ServicesLive, outbound)
}
