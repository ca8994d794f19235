/**
 * `GET /docs`: the interactive reference of the public API (Scalar, served
 * inline, so it works without reaching a CDN).
 *
 * HttpApiScalar loads Scalar's browser bundle (3.2 MB of JavaScript held as
 * a string, twice: the module's source and the constant) when its layer is
 * built; an instance whose /docs nobody opens would carry about 12 MiB for
 * nothing. So the route builds that layer with the first request to /docs,
 * in the router's scope, and answers every request through it.
 */
import { Effect, Scope } from "effect"
import { HttpRouter } from "effect/http"
import { HttpApiScalar } from "effect/http-api"
import { PublicApi } from "../../contract/PublicApi.ts"
import { DOCS_PATH } from "./GatewayRoutes.ts"

export const DocsRoute = HttpRouter.use(Effect.fnUntraced(function*(router) {
  const scope = yield* Effect.scope
  const docs = yield* Effect.cached(
    HttpRouter.toHttpEffect(HttpApiScalar.layer(PublicApi, { path: DOCS_PATH })).pipe(Effect.provideService(Scope.Scope, scope))
  )
  yield* router.add("GET", DOCS_PATH, Effect.flatten(docs))
}))
