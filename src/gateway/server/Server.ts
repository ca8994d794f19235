/**
 * The HTTP surfaces, composed: /v1 (public API), /api/v1 (admin),
 * /openapi.json and /docs, /health and /ready.
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Context, Effect, Layer, type Types } from "effect"
import { HttpRouter, HttpServerRequest, type HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { createServer } from "node:http"
import { AdminApi } from "../../contract/AdminApi.ts"
import { PublicApi } from "../../contract/PublicApi.ts"
import { ROUTER_CONFIG } from "../../platform/http/RouteTable.ts"
import { systemRoutes } from "../../platform/http/SystemRoutes.ts"
import { countingConnections } from "../../platform/ShutdownReport.ts"
import { Instruments } from "../../platform/telemetry/Instruments.ts"
import { AppConfig } from "../../services/AppConfig.ts"
import { ADMIN_PREFIX, AdminAuthLive, AdminBadRequestsLive, AdminHandlers } from "../admin/index.ts"
import { McpRequestLimits, McpRoutes, McpToolCallDirect, McpToolCalls } from "../mcp/index.ts"
import { cors, IncomingSecretAuthLive, IncomingSecretGuard, requestLimits, requestTelemetry } from "../request/index.ts"
import { ModelUploadLimits, PublicHandlers, PublicHandlerServices, RecordReadDirect } from "../rest/index.ts"
import { DocsRoute } from "./DocsRoute.ts"
import { GATEWAY_ROUTES, OPENAPI_PATH } from "./GatewayRoutes.ts"

const PublicRoutes = HttpApiBuilder.layer(PublicApi, { openapiPath: OPENAPI_PATH }).pipe(
  Layer.provide(PublicHandlers),
  Layer.provide(IncomingSecretAuthLive)
)

const AdminRoutes = HttpApiBuilder.layer(AdminApi).pipe(
  Layer.provide(AdminHandlers),
  Layer.provide([AdminAuthLive, AdminBadRequestsLive])
)

const AllRoutes = Layer.mergeAll(
  PublicRoutes,
  AdminRoutes,
  DocsRoute,
  systemRoutes(GATEWAY_ROUTES),
  McpRoutes
)

type RequestMiddleware = NonNullable<ReturnType<typeof requestTelemetry>>
/** What a router-wide middleware wraps: the router, whose failures the server answers. */
type RouterApp = Effect.Effect<HttpServerResponse.HttpServerResponse, Types.unhandled>

/**
 * The routes, and the one router-wide middleware in front of them: the
 * request log line and duration metric (`telemetry`, when there is one)
 * around everything, then CORS (when CORS_ORIGINS is set: it answers
 * preflights before anything authenticates, and its headers go on every
 * answer below it, 401, 404, 405 and 413 included), then the direct answers
 * of a plain MCP tool call (McpToolCallDirect) and of a record read
 * (RecordReadDirect: no body, and a path of plain characters, so the bounds
 * have nothing to check), then, for every other request, the bounds on path
 * and body (RequestLimits) and the router (whose wildcard, SystemRoutes,
 * answers 404, 405 and a plain OPTIONS). One middleware, so that the order
 * is certain.
 * The REST middleware, the direct read and MCP share one IncomingSecretGuard;
 * the router and the direct read the same handlers (PublicHandlerServices),
 * McpServer's tools and the direct tool call the same calls (McpToolCalls).
 */
/** The surfaces whose refusals or body limits are their own (RequestLimits). */
const LIMITED_SURFACES = [McpRequestLimits, ModelUploadLimits]

export const GatewayRoutes = (telemetry: RequestMiddleware | undefined) =>
  Layer.merge(
    AllRoutes,
    HttpRouter.middleware(
      Effect.gen(function*() {
        const recordRead = yield* RecordReadDirect
        const toolCall = yield* McpToolCallDirect
        const config = yield* AppConfig
        const limits = requestLimits(config.maxBodyBytes, LIMITED_SURFACES)
        const browsers = cors(config.corsOrigins, GATEWAY_ROUTES.methods, [ADMIN_PREFIX])
        // One look at the request for both direct answers; everything else meets the bounds, then the router.
        const direct = (router: RouterApp): RouterApp => {
          const bounded = limits(router)
          return Effect.withFiber((fiber) => {
            const request = Context.getUnsafe(fiber.context, HttpServerRequest.HttpServerRequest)
            return toolCall(request, fiber, bounded) ?? recordRead(request, fiber) ?? bounded
          })
        }
        const inner = browsers === undefined ? direct : (router: RouterApp) => browsers(direct(router))
        return (router: RouterApp) => telemetry === undefined ? inner(router) : telemetry(inner(router))
      }),
      { global: true }
    )
  ).pipe(Layer.provide([IncomingSecretGuard.layer, PublicHandlerServices, McpToolCalls.layer]))

/**
 * The HTTP server on HOST:PORT (127.0.0.1:8080 unless told otherwise), with
 * the request log line and duration metric (RequestTelemetry) unless both are off.
 * A router-wide middleware (every route, and unknown paths) is cheaper than a
 * server middleware, which takes every request off the server's single-frame
 * fast path.
 */
export const HttpServerLive = Layer.unwrap(Effect.gen(function*() {
  const config = yield* AppConfig
  const telemetry = requestTelemetry({ log: config.requestLog, instruments: yield* Instruments })
  const server = yield* countingConnections(createServer)
  return HttpRouter.serve(GatewayRoutes(telemetry), { disableLogger: true, routerConfig: ROUTER_CONFIG }).pipe(
    Layer.provide(NodeHttpServer.layer(server, { port: config.port, host: config.host }))
  )
}))
