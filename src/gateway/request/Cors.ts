/**
 * CORS for browser integrations (CORS_ORIGINS), in front of everything else
 * so that a preflight is answered before authentication and every answer to
 * an allowed origin (401, 404, 405, 413 and passthrough errors included) is
 * readable by the page.
 *
 * - A preflight (OPTIONS with `Origin` and `Access-Control-Request-Method`)
 *   from an allowed origin is a 204 with the methods and request headers the
 *   API takes and a Max-Age; it is not authenticated, metered or routed.
 * - Any other request from an allowed origin is answered as usual, plus
 *   `Access-Control-Allow-Origin` (the origin, with `Vary: Origin`) and
 *   `Access-Control-Expose-Headers`.
 * - A request from any other origin, or without `Origin`, gets no CORS header
 *   (a preflight from it goes on as a plain OPTIONS: 204 with `Allow`, which a
 *   browser refuses). Its answer still says `Vary: Origin`, so that no cache
 *   hands it to an allowed origin.
 * - `*` allows every origin: `Access-Control-Allow-Origin: *` (no `Vary`).
 *   No credentials mode: the API authenticates with the `Authorization`
 *   header a page sets itself, never with cookies.
 * - The admin API (`/api/...`) is never offered to browsers.
 *
 * Effect's `HttpMiddleware.cors` is not used: it answers every OPTIONS as a
 * preflight, and sends `Access-Control-Expose-Headers` (and, with one
 * configured origin, that origin) to every request, allowed or not.
 */
import { Context, Effect } from "effect"
import { HttpEffect, HttpServerRequest, HttpServerResponse } from "effect/http"

/** Request headers a page may send (besides the CORS-safelisted ones). */
export const CORS_ALLOWED_HEADERS = [
  "authorization",
  "content-type",
  "idempotency-key",
  "if-match",
  "if-none-match",
  "traceparent",
  "tracestate",
  // MCP's headers (Streamable HTTP, 2025-11-25 and 2026-07-28).
  "mcp-protocol-version",
  "mcp-method",
  "mcp-name",
  "mcp-session-id",
  "last-event-id"
] as const

/** Response headers a page may read (besides the CORS-safelisted ones). */
export const CORS_EXPOSED_HEADERS = [
  "x-request-id",
  "x-error-source",
  "x-error-source-request-id",
  "etag",
  "link",
  "x-total-count",
  "ratelimit",
  "ratelimit-policy",
  "retry-after",
  "idempotent-replayed",
  "location",
  "www-authenticate",
  "x-mode"
] as const

/** How long a browser may reuse a preflight's answer, in seconds (Chromium's cap). */
export const CORS_MAX_AGE_SECONDS = 7200

/** `vary` of `response` with `Origin` added. */
const varyOrigin = (response: HttpServerResponse.HttpServerResponse) => {
  const vary = response.headers["vary"]
  if (vary === undefined) return "Origin"
  const members = vary.split(",").map((member) => member.trim().toLowerCase())
  return members.includes("*") || members.includes("origin") ? vary : `${vary}, Origin`
}

/**
 * The middleware for `origins` (CORS_ORIGINS, as parsed by AppConfig: exact
 * origins, or `*` alone), offering `methods` (the gateway's, from its route
 * table) to preflights; undefined when there are no origins, so that the
 * server runs without it at no cost.
 */
export const cors = (origins: ReadonlyArray<string>, methods: ReadonlyArray<string>, closedPrefixes: ReadonlyArray<string>) => {
  if (origins.length === 0) return undefined
  const anyOrigin = origins.includes("*")
  const allowed = new Set(origins)
  const allowOrigin = (origin: string) => anyOrigin ? { "access-control-allow-origin": "*" } : { "access-control-allow-origin": origin, vary: "Origin" }
  const preflight = {
    "access-control-allow-methods": methods.join(", "),
    "access-control-allow-headers": CORS_ALLOWED_HEADERS.join(", "),
    "access-control-max-age": String(CORS_MAX_AGE_SECONDS)
  }
  const exposed = CORS_EXPOSED_HEADERS.join(", ")
  const decorate = (origin: string): HttpEffect.PreResponseHandler => (_request, response) =>
    Effect.succeed(HttpServerResponse.setHeaders(response, {
      "access-control-allow-origin": anyOrigin ? "*" : origin,
      "access-control-expose-headers": exposed,
      ...(anyOrigin ? {} : { vary: varyOrigin(response) })
    }))
  const varyOnly: HttpEffect.PreResponseHandler = (_request, response) => Effect.succeed(HttpServerResponse.setHeader(response, "vary", varyOrigin(response)))

  return <E, R>(
    app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
  ): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R> =>
    Effect.withFiber((fiber) => {
      const request = Context.getUnsafe(fiber.context, HttpServerRequest.HttpServerRequest)
      if (closedPrefixes.some((prefix) => request.url.startsWith(prefix))) return app
      const origin = request.headers["origin"]
      if (origin === undefined || !(anyOrigin || allowed.has(origin))) {
        if (!anyOrigin) HttpEffect.appendPreResponseHandlerUnsafe(fiber.context, varyOnly)
        return app
      }
      if (request.method === "OPTIONS" && request.headers["access-control-request-method"] !== undefined) {
        return Effect.succeed(HttpServerResponse.empty({ status: 204, headers: { ...allowOrigin(origin), ...preflight } }))
      }
      HttpEffect.appendPreResponseHandlerUnsafe(fiber.context, decorate(origin))
      return app
    })
}
