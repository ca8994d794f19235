/**
 * Liveness and readiness, outside the authenticated API; and the answer for
 * a request no other route takes: 405 with `Allow` for a method a known path
 * does not take, 204 with `Allow` for a plain OPTIONS of a known path, the
 * standard 404 body for an unknown path.
 */
import { Effect, Layer } from "effect"
import { type HttpMethod, HttpRouter, type HttpServerRequest, HttpServerResponse } from "effect/http"
import { METHODS } from "node:http"
import { errorAnswer } from "../../contract/ErrorAnswer.ts"
import { NotFound } from "../../domain/Errors.ts"
import { ReadinessChecks } from "../../services/Readiness.ts"
import { checkReadiness } from "../Readiness.ts"
import { HEALTH_PATH, READY_PATH, type RouteTable } from "./RouteTable.ts"

const health = HttpRouter.add("GET", HEALTH_PATH, HttpServerResponse.jsonUnsafe({ status: "ok" }))

/**
 * Readiness: the server's checks (storage's, and those its layers added: the
 * remote engine, Redis), all at once; 503 naming what does not answer. The
 * checks are read per request, so a layer built after the routes still counts.
 */
const ready = Layer.unwrap(Effect.gen(function*() {
  const checks = yield* ReadinessChecks
  return HttpRouter.add(
    "GET",
    READY_PATH,
    Effect.suspend(() => checkReadiness(checks.all())).pipe(
      Effect.map(({ body, status }) => HttpServerResponse.jsonUnsafe(body, { status }))
    )
  )
}))

/**
 * What a request no route takes answers: the path (never its query string)
 * is looked up in the gateway's route table. A known path answers a plain
 * OPTIONS with 204 and `Allow` (a CORS preflight never gets here: Cors
 * answers it first), any other method with 405, `Allow` and the standard
 * error body; an unknown path is the 404.
 */
export const unroutedResponse = (table: RouteTable, request: HttpServerRequest.HttpServerRequest) => {
  const path = request.url.split("?")[0]
  const allow = table.allowed(request.url)
  if (allow === undefined) return errorAnswer(NotFound.of(`No operation ${request.method} ${path}`))
  const headers = { allow: allow.join(", ") }
  if (request.method === "OPTIONS" && allow.includes("OPTIONS")) return HttpServerResponse.empty({ status: 204, headers })
  return HttpServerResponse.setHeaders(
    errorAnswer({ code: 405, message: `No operation ${request.method} ${path}: it takes ${headers.allow}`, type: "MethodNotAllowed" }),
    headers
  )
}

/**
 * The wildcard, on every method Node accepts but HEAD: the router answers a
 * HEAD that no route takes with the GET route of its path (the wildcard's too,
 * for an unknown path), so HEAD works wherever GET does. The router takes any
 * method find-my-way knows; HttpMethod lists only the common ones.
 */
const unknownRoute = (table: RouteTable) =>
  HttpRouter.addAll(
    METHODS.filter((method) => method !== "HEAD").map((method) =>
      HttpRouter.route(method as HttpMethod.HttpMethod, "/*", (request) => Effect.succeed(unroutedResponse(table, request)))
    )
  )

/** `/health`, `/ready` and the answer for a request no route of `table` takes. */
export const systemRoutes = (table: RouteTable) => Layer.mergeAll(health, ready, unknownRoute(table))
