/** Liveness and readiness, outside the authenticated API. */
import { Effect, Layer } from "effect"
import { HttpRouter, HttpServerResponse } from "effect/http"
import { SqlClient } from "effect/sql"

const health = HttpRouter.add("GET", "/health", HttpServerResponse.jsonUnsafe({ status: "ok" }))

const ready = HttpRouter.add(
  "GET",
  "/ready",
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* sql`SELECT 1`.pipe(
      Effect.timeout("2 seconds"),
      Effect.as(HttpServerResponse.jsonUnsafe({ status: "ready" })),
      Effect.catch(() =>
        Effect.succeed(HttpServerResponse.jsonUnsafe({ status: "unavailable", reason: "storage unreachable" }, { status: 503 }))
      )
    )
  })
)

export const SystemRoutes = Layer.mergeAll(health, ready)
