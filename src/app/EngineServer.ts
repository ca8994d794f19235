/**
 * The engine served on its own: EngineApi (src/contract/EngineApi.ts), the public
 * contract under `/engine`, built with HttpApiBuilder from the Engine's
 * handlers; `GET /health` and `GET /ready` as the gateway's (docs/engine.md).
 *
 * - Every call needs `Authorization: Bearer <ENGINE_TOKEN>` when a token is
 *   set (digests compared in constant time), and names its app in
 *   `x-engine-app-id`. On an address other than loopback the engine refuses
 *   to start without a token: the app of a call is believed from whoever
 *   holds it.
 * - An operation the contract does not name has no route: 404.
 * - An engine failure answers its status with `{code, message, type}`,
 *   `x-error-source: engine` (or the failure's own source, e.g.
 *   `model-fetcher`) and `x-error-source-request-id` (the caller's
 *   `x-request-id`, or a fresh one). A read that finds nothing answers 204.
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Cause, Effect, Layer, Option, Redacted, Schema } from "effect"
import { HttpEffect, HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { HttpApiBuilder, HttpApiError } from "effect/http-api"
import { createHash, randomUUID, timingSafeEqual } from "node:crypto"
import { createServer } from "node:http"
import { ENGINE_SOURCE } from "../adapters/downstream/DownstreamEmbedded.ts"
import { schemaErrorToBadRequest } from "../contract/BadRequests.ts"
import {
  ENGINE_APP_HEADER,
  ENGINE_GRANTS_HEADERS,
  ENGINE_IDEMPOTENCY_HEADERS,
  ENGINE_PRECONDITION_HEADERS,
  ENGINE_TEST_DATA_PATH,
  EngineApi,
  EngineAuth,
  EngineCaller
} from "../contract/EngineApi.ts"
import type { CallGrants } from "../contract/EngineCall.ts"
import { errorAnswer } from "../contract/ErrorAnswer.ts"
import { isPaged, type OperationEndpoint, type OperationInput, type Page, TOTAL_COUNT_HEADER, wasCreated } from "../contract/Operations.ts"
import { InvalidConfig } from "../domain/Errors.ts"
import { MaxAcceptTotal, Scope } from "../domain/Grants.ts"
import { AppId } from "../domain/Secret.ts"
import { Engine } from "../engine/Engine.ts"
import type { EngineError } from "../engine/EngineError.ts"
import { handleEveryEndpoint } from "../platform/http/EveryEndpoint.ts"
import { HEALTH_PATH, READY_PATH, ROUTER_CONFIG, routeTable } from "../platform/http/RouteTable.ts"
import { systemRoutes } from "../platform/http/SystemRoutes.ts"
import { countingConnections } from "../platform/ShutdownReport.ts"
import { AppConfig } from "../services/AppConfig.ts"
import { WebhookDeliveryLive } from "./Webhooks.ts"

/** A request id or app id the caller may choose: printable, bounded. */
const PRINTABLE_ID = /^[\x21-\x7e]{1,128}$/

const decodeScopes = Schema.decodeUnknownOption(Schema.Array(Scope))
const decodeLimit = Schema.decodeUnknownOption(Schema.NumberFromString.pipe(Schema.decodeTo(MaxAcceptTotal)))

/**
 * The grants the gateway sent (ENGINE_GRANTS_HEADERS); undefined when it sent
 * none (nothing restricted), `invalid` when they do not read.
 */
const grantsOf = (headers: Readonly<Record<string, string | undefined>>): CallGrants | undefined | "invalid" => {
  const scopes = headers[ENGINE_GRANTS_HEADERS.scopes]
  const limit = headers[ENGINE_GRANTS_HEADERS.maxAcceptTotal]
  if (scopes === undefined) return limit === undefined ? undefined : "invalid"
  const decodedScopes = decodeScopes(scopes === "" ? [] : scopes.split(","))
  const decodedLimit = limit === undefined ? Option.some(null) : decodeLimit(limit)
  if (Option.isNone(decodedScopes) || Option.isNone(decodedLimit)) return "invalid"
  return { scopes: new Set(decodedScopes.value), maxAcceptTotal: decodedLimit.value }
}

/** An engine failure: its status as `code`, its source (the engine's unless it names another) and the call's request id. */
const failure = (status: number, message: string, type: string, requestId: string, source: string = ENGINE_SOURCE) =>
  HttpServerResponse.setHeader(errorAnswer({ code: status, message, type, source, requestId }), "x-request-id", requestId)

const engineFailure = (error: EngineError, requestId: string) => failure(error.status, error.message, error.type, requestId, error.source)

const digest = (text: string) => createHash("sha256").update(text).digest()
const BEARER = /^bearer +/i

/** Whether `authorization` carries the token: digests compared in constant time. */
const carriesToken = (expected: Buffer, authorization: string | undefined) => {
  if (authorization === undefined || !BEARER.test(authorization)) return false
  const presented = authorization.replace(BEARER, "").trim()
  return timingSafeEqual(digest(presented), expected) && presented.length > 0
}

/** Whether the request may call the engine: any request without ENGINE_TOKEN, else one that carries it. */
const authorized = (expected: Option.Option<Buffer>, request: HttpServerRequest.HttpServerRequest) =>
  Option.isNone(expected) || carriesToken(expected.value, request.headers["authorization"])

/** The caller's request id when it is printable, else a new one. */
const requestIdOf = (request: HttpServerRequest.HttpServerRequest) => {
  const presented = request.headers["x-request-id"]
  return presented !== undefined && PRINTABLE_ID.test(presented) ? presented : randomUUID()
}

export interface EngineRoutesOptions {
  /** When set, calls must present it as a bearer token. */
  readonly token: Option.Option<Redacted.Redacted>
}

/** The engine's credentials, checked before any input is decoded; a schema failure is the 400 naming the field. */
export const EngineAuthLive = (options: EngineRoutesOptions) => {
  const expected = Option.map(options.token, (token) => digest(Redacted.value(token)))
  return Layer.succeed(
    EngineAuth,
    EngineAuth.of((handler) =>
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const requestId = requestIdOf(request)
        if (!authorized(expected, request)) return failure(401, "Not Authorized", "Unauthorized", requestId)
        const appId = request.headers[ENGINE_APP_HEADER]
        if (appId === undefined || !PRINTABLE_ID.test(appId)) {
          return failure(400, `The ${ENGINE_APP_HEADER} header must name the app the call is for`, "ValidationError", requestId)
        }
        const preconditionId = request.headers[ENGINE_PRECONDITION_HEADERS.id]
        const updatedAt = request.headers[ENGINE_PRECONDITION_HEADERS.updatedAt]
        const precondition = preconditionId !== undefined && updatedAt !== undefined ? { id: preconditionId, updatedAt } : undefined
        const grants = grantsOf(request.headers)
        if (grants === "invalid") {
          return failure(
            400,
            `The ${ENGINE_GRANTS_HEADERS.scopes} and ${ENGINE_GRANTS_HEADERS.maxAcceptTotal} headers do not read`,
            "ValidationError",
            requestId
          )
        }
        const key = request.headers[ENGINE_IDEMPOTENCY_HEADERS.key]
        const fingerprint = request.headers[ENGINE_IDEMPOTENCY_HEADERS.fingerprint]
        // A stored answer again: the gateway marks its answer as replayed.
        let replayed = false
        const idempotency = key !== undefined && fingerprint !== undefined
          ? { key, fingerprint, onReplay: () => (replayed = true) }
          : undefined
        return yield* handler.pipe(
          Effect.provideService(EngineCaller, { appId, requestId, precondition, grants, idempotency }),
          Effect.catchCause((cause) => {
            const error = Cause.findErrorOption(cause)
            if (Option.isSome(error) && HttpApiError.HttpApiSchemaError.is(error.value)) {
              const bad = schemaErrorToBadRequest(error.value)
              return Effect.succeed(failure(400, bad.message, bad.type, requestId))
            }
            return Effect.logError("engine defect", cause).pipe(
              Effect.as(failure(500, "The engine failed unexpectedly", "InternalError", requestId))
            )
          }),
          Effect.map((response) => {
            const answered = HttpServerResponse.setHeader(response, "x-request-id", requestId)
            return replayed ? HttpServerResponse.setHeader(answered, ENGINE_IDEMPOTENCY_HEADERS.replayed, "true") : answered
          })
        )
      })
    )
  )
}

/** The same answer for every operation: the Engine's, on the input EngineApi decoded. */
const serveOperation =
  (engine: Engine["Service"]) => (request: { readonly endpoint: unknown; readonly params?: unknown; readonly query?: unknown; readonly payload?: unknown }) =>
    Effect.gen(function*() {
      const caller = yield* EngineCaller
      // The builder decoded the request with this endpoint's own schemas: it is the endpoint's input.
      const endpoint = request.endpoint as OperationEndpoint
      const input = { params: request.params, query: request.query, payload: request.payload } as OperationInput<typeof endpoint>
      const paged = isPaged(endpoint)
      return yield* engine.run(endpoint, caller, input).pipe(
        Effect.flatMap((answer): Effect.Effect<unknown, never, HttpServerRequest.HttpServerRequest> => {
          if (answer === null) return Effect.succeed(HttpServerResponse.empty({ status: 204 }))
          // A replace that created its record: the contract's 201, which the gateway reads back (DownstreamHttp.ts).
          if (wasCreated(answer)) {
            return Effect.as(HttpEffect.appendPreResponseHandler((_request, response) => Effect.succeed(HttpServerResponse.setStatus(response, 201))), answer)
          }
          if (!paged) return Effect.succeed(answer)
          // A page: its records are the body, as the public answer's, and its total a header the gateway reads back.
          const page = answer as Page<unknown>
          return Effect.as(
            HttpEffect.appendPreResponseHandler((_request, response) =>
              Effect.succeed(HttpServerResponse.setHeader(response, TOTAL_COUNT_HEADER, String(page.total)))
            ),
            page.items
          )
        }),
        Effect.catch((error) => Effect.succeed(engineFailure(error, caller.requestId)))
      )
    })

/** Every group of EngineApi, each endpoint answered by the Engine. */
const EngineHandlers = handleEveryEndpoint(EngineApi, Effect.map(Engine, serveOperation))

const isAppId = Schema.is(AppId)

/**
 * `DELETE /engine/test-data`: empties the test data space of the app named
 * in `x-engine-app-id` (an app id, never a data space: only a test space can
 * be emptied), with the API's credentials; answers what it removed.
 */
const TestDataRoute = (options: EngineRoutesOptions) => {
  const expected = Option.map(options.token, (token) => digest(Redacted.value(token)))
  return Layer.unwrap(Effect.map(Engine, (engine) =>
    HttpRouter.add(
      "DELETE",
      ENGINE_TEST_DATA_PATH,
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const requestId = requestIdOf(request)
        if (!authorized(expected, request)) return failure(401, "Not Authorized", "Unauthorized", requestId)
        const appId = request.headers[ENGINE_APP_HEADER]
        if (appId === undefined || !isAppId(appId)) {
          return failure(400, `The ${ENGINE_APP_HEADER} header must name the app whose test data is emptied`, "ValidationError", requestId)
        }
        return yield* engine.emptyTestData(appId).pipe(
          Effect.map((emptied) => HttpServerResponse.jsonUnsafe(emptied, { headers: { "x-request-id": requestId } })),
          Effect.catch((error) => Effect.succeed(engineFailure(error, requestId)))
        )
      })
    )))
}

/**
 * The paths the engine service answers a 405 or a plain OPTIONS on: its
 * system routes. Anything else no route takes is a 404, a path of the
 * contract with another method too (the engine serves the contract's
 * operations only).
 */
const ENGINE_SYSTEM_ROUTES = routeTable([HEALTH_PATH, READY_PATH].flatMap((path) => [{ method: "GET", path }, { method: "OPTIONS", path }]))

/** Every route of the engine service: EngineApi, `/health` and `/ready`. Needs Engine and a SqlClient. */
export const EngineRoutesWith = (options: EngineRoutesOptions) =>
  Layer.mergeAll(
    HttpApiBuilder.layer(EngineApi).pipe(Layer.provide(EngineHandlers), Layer.provide(EngineAuthLive(options))),
    TestDataRoute(options),
    systemRoutes(ENGINE_SYSTEM_ROUTES)
  )

/** The engine's routes, with AppConfig's ENGINE_TOKEN. */
export const EngineRoutes = Layer.unwrap(Effect.map(AppConfig, (config) => EngineRoutesWith({ token: config.engineToken })))

/** Whether HOST is a loopback address, reachable from this machine only. */
export const isLoopbackHost = (host: string) => host === "localhost" || host === "::1" || /^127\.\d+\.\d+\.\d+$/.test(host)

/** The engine over the SqlClient in context, served on HOST:PORT; off loopback only with ENGINE_TOKEN. */
export const EngineServerLive = Layer.unwrap(Effect.gen(function*() {
  const config = yield* AppConfig
  if (!isLoopbackHost(config.host) && Option.isNone(config.engineToken)) {
    return yield* InvalidConfig.about(
      "ENGINE_TOKEN",
      `ENGINE_TOKEN must be set when the engine listens on HOST=${config.host}, an address other than loopback: ` +
        "without it, anyone who reaches the port could act as any app"
    )
  }
  return HttpRouter.serve(EngineRoutes, { disableLogger: true, routerConfig: ROUTER_CONFIG }).pipe(
    Layer.provide(Engine.layer),
    Layer.provide(NodeHttpServer.layer(yield* countingConnections(createServer), { port: config.port, host: config.host })),
    // The engine's deliveries run where it does.
    Layer.merge(WebhookDeliveryLive)
  )
}))
