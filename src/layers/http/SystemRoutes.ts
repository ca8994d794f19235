/** Liveness and readiness, outside the authenticated API; the standard 404 body for a path no route serves. */
import { Effect, Layer } from "effect"
import { HttpRouter, HttpServerResponse } from "effect/http"
import { SqlClient } from "effect/sql"
import { NotFound } from "../../domain/Errors.ts"
import { errorResponse } from "./ErrorResponses.ts"

const health = HttpRouter.add("GET", "/health", HttpServerResponse.jsonUnsafe({ status: "ok" }))

const ready = HttpRouter.add(
  "GET",
  "/ready",
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* sql`SELECT 1`.pipe(
      Effect.timeout("2 seconds"),
      Effect.as(HttpServerResponse.jsonUnsafe({ status: "ready" })),
      Effect.catch(() => Effect.succeed(HttpServerResponse.jsonUnsafe({ status: "unavailable", reason: "storage unreachable" }, { status: 503 })))
    )
  })
)

/**
 * Any method on a path no other route serves (the router prefers every other
 * route over a wildcard): 404 with the standard error body, naming the path
 * (never its query string), instead of an empty 404.
 */
const unknownRoute = HttpRouter.add(
  "*",
  "/*",
  (request) => Effect.succeed(errorResponse(NotFound.of(`No operation ${request.method} ${request.url.split("?")[0]}`)))
)

export const SystemRoutes = Layer.mergeAll(health, ready, unknownRoute)
