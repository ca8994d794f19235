/**
 * The engine served on its own, over its internal HTTP API (docs/engine.md):
 *
 * - `POST /engine/v1/operations/:operation` with `{appId, request: {params?, query?, payload?}}`
 *   runs the operation for the app: 200 `{"result": ...}`, or the EngineError's
 *   status with `{code, message, type}`, `x-error-source: engine` (or the
 *   EngineError's own `source`, e.g. `model-fetcher`) and
 *   `x-error-source-request-id` (the caller's `x-request-id`, or a fresh one).
 * - `GET /health`, `GET /ready`, as the gateway's.
 *
 * It serves the public operations only (those of PublicApi): any other name
 * is a 404, whatever the engine runs internally. With ENGINE_TOKEN set,
 * operation calls must carry `Authorization: Bearer <ENGINE_TOKEN>`; on an
 * address other than loopback the engine refuses to start without one, as
 * the app id of a call is believed from whoever holds the token.
 * A gateway reaches it through DownstreamHttp (DOWNSTREAM_URL).
 */
import { NodeHttpServer } from "@effect/platform-node"
import { Config, Effect, Layer, Option, Redacted, Result, Schema } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { createHash, randomUUID, timingSafeEqual } from "node:crypto"
import { createServer } from "node:http"
import { PUBLIC_OPERATIONS } from "../api/PublicApi.ts"
import { InvalidConfig } from "../domain/Errors.ts"
import { Engine } from "../engine/Engine.ts"
import { EngineError } from "../engine/EngineError.ts"
import { AppConfig } from "../services/AppConfig.ts"
import { ENGINE_SOURCE } from "./DownstreamEmbedded.ts"
import { ENGINE_OPERATIONS_PATH } from "./DownstreamHttp.ts"
import { SystemRoutes } from "./http/SystemRoutes.ts"

/** The body of an operation call. */
export const EngineCall = Schema.Struct({
  appId: Schema.String.check(Schema.isNonEmpty()),
  request: Schema.Struct({
    params: Schema.optional(Schema.Record(Schema.String, Schema.Unknown)),
    query: Schema.optional(Schema.Record(Schema.String, Schema.Unknown)),
    payload: Schema.optional(Schema.Unknown)
  })
})

const decodeCall = HttpServerRequest.schemaBodyJson(EngineCall)

/** A request id the caller may choose: printable, bounded; anything else gets a fresh one. */
const REQUEST_ID = /^[\x21-\x7e]{1,128}$/

const failure = (status: number, message: string, type: string, requestId: string, source: string = ENGINE_SOURCE) =>
  HttpServerResponse.jsonUnsafe({ code: status, message, type }, {
    status,
    headers: {
      "x-error-source": source,
      "x-error-source-request-id": requestId
    }
  })

const digest = (text: string) => createHash("sha256").update(text).digest()
const BEARER = /^bearer +/i

/** Whether `authorization` carries the token: digests compared in constant time. */
const authorized = (expected: Buffer, authorization: string | undefined) => {
  if (authorization === undefined || !BEARER.test(authorization)) return false
  const presented = authorization.replace(BEARER, "").trim()
  return timingSafeEqual(digest(presented), expected) && presented.length > 0
}

export interface EngineRoutesOptions {
  /** When set, operation calls must present it as a bearer token. */
  readonly token: Option.Option<Redacted.Redacted>
}

/** The operation route, given the token (if any). */
export const EngineOperationRoute = (options: EngineRoutesOptions) => {
  const expected = Option.map(options.token, (token) => digest(Redacted.value(token)))
  return HttpRouter.add(
    "POST",
    `${ENGINE_OPERATIONS_PATH}/:operation`,
    Effect.gen(function*() {
      const engine = yield* Engine
      const request = yield* HttpServerRequest.HttpServerRequest
      const presentedId = request.headers["x-request-id"]
      const requestId = presentedId !== undefined && REQUEST_ID.test(presentedId) ? presentedId : randomUUID()

      if (Option.isSome(expected) && !authorized(expected.value, request.headers["authorization"])) {
        return failure(401, "Not Authorized", "Unauthorized", requestId)
      }
      const operation = (yield* HttpRouter.params).operation ?? ""
      if (!PUBLIC_OPERATIONS.has(operation)) return failure(404, `No public operation ${operation}`, "NotFound", requestId)
      const call = yield* decodeCall.pipe(Effect.result)
      if (Result.isFailure(call)) {
        const why = Schema.isSchemaError(call.failure) ? call.failure.message : "the body is not JSON"
        return failure(400, `The body must be {appId, request: {params?, query?, payload?}}: ${why}`, "ValidationError", requestId)
      }
      const answer = yield* engine.invoke(operation, { appId: call.success.appId, requestId }, call.success.request).pipe(
        Effect.flatMap((result) => HttpServerResponse.json({ result })),
        Effect.catchIf(
          (error): error is EngineError => error instanceof EngineError,
          (error) => Effect.succeed(failure(error.status, error.message, error.type, requestId, error.source))
        ),
        Effect.catch(() => Effect.succeed(failure(500, "The engine's answer could not be encoded", "InternalError", requestId))),
        Effect.catchDefect((defect) =>
          Effect.logError("engine defect", defect).pipe(
            Effect.as(failure(500, "The engine failed unexpectedly", "InternalError", requestId))
          )
        )
      )
      return HttpServerResponse.setHeader(answer, "x-request-id", requestId)
    })
  )
}

/** ENGINE_TOKEN, read where it is used. */
const engineToken = Config.option(Config.Redacted("ENGINE_TOKEN")).pipe(
  Effect.catch((error) => Effect.die(new InvalidConfig({ message: `ENGINE_TOKEN: ${error.message}` })))
)

/** Every route of the engine service: the operations, `/health` and `/ready`. Needs Engine and a SqlClient. */
export const EngineRoutesWith = (options: EngineRoutesOptions) => Layer.mergeAll(EngineOperationRoute(options), SystemRoutes)

/** The engine's routes, with ENGINE_TOKEN from the environment. */
export const EngineRoutes = Layer.unwrap(Effect.map(engineToken, (token) => EngineRoutesWith({ token })))

/** Whether HOST is a loopback address, reachable from this machine only. */
export const isLoopbackHost = (host: string) => host === "localhost" || host === "::1" || /^127\.\d+\.\d+\.\d+$/.test(host)

/** The engine over the SqlClient in context, served on HOST:PORT; off loopback only with ENGINE_TOKEN. */
export const EngineServerLive = Layer.unwrap(Effect.gen(function*() {
  const config = yield* AppConfig
  if (!isLoopbackHost(config.host) && Option.isNone(yield* engineToken)) {
    return yield* new InvalidConfig({
      message: `ENGINE_TOKEN must be set when the engine listens on HOST=${config.host}, an address other than loopback: ` +
        "without it, anyone who reaches the port could act as any app"
    })
  }
  return HttpRouter.serve(EngineRoutes, { disableLogger: true }).pipe(
    Layer.provide(Engine.layer),
    Layer.provide(NodeHttpServer.layer(createServer, { port: config.port, host: config.host }))
  )
}))
