/**
 * An operation takes only what its endpoint declares. A query parameter sent
 * to an endpoint that declares none, or a body sent to one that declares
 * none, is a 400 naming what it does not take, instead of being silently
 * ignored (a client that misspells a path or puts a filter on a record read
 * learns it at once).
 *
 * Derived from each endpoint's definition (its `query` schema is undefined,
 * its payload map empty), so it holds for every endpoint. An endpoint that
 * declares a query already refuses a parameter it does not know: HttpApi
 * decodes the query with `onExcessProperty: "error"`.
 */
import { Effect } from "effect"
import type { HttpServerRequest } from "effect/http"
import type { HttpApiEndpoint } from "effect/http-api"
import { BadRequest } from "../../domain/Errors.ts"

/** Methods whose body RequestLimits leaves unread (and so unbounded): one is never read here either. */
const BODYLESS = new Set(["GET", "HEAD", "OPTIONS", "DELETE"])

/** The endpoint as a client reads it: `PUT /v1/ticket/{id}/send-to-production`. */
const routeOf = (endpoint: HttpApiEndpoint.Top) => `${endpoint.method} ${endpoint.path.replace(/:(\w+)/g, "{$1}")}`

/** The first query parameter of `url`, if it has one (`?` alone, or `?&`, has none). */
const firstQueryParameter = (url: string): string | undefined => {
  const start = url.indexOf("?")
  if (start < 0) return undefined
  const first = new URLSearchParams(url.slice(start + 1)).keys().next()
  return first.done === true ? undefined : first.value
}

/**
 * Whether the request carries a body of at least one byte: its Content-Length
 * says so, or, sent in chunks, the body RequestLimits read holds something (a
 * chunked body of a bodyless method counts, as it is never read).
 */
const carriesBody = (request: HttpServerRequest.HttpServerRequest): Effect.Effect<boolean> => {
  const length = request.headers["content-length"]
  if (length !== undefined) return Effect.succeed(Number(length) > 0)
  if (request.headers["transfer-encoding"] === undefined) return Effect.succeed(false)
  if (BODYLESS.has(request.method)) return Effect.succeed(true)
  return Effect.map(Effect.orElseSucceed(request.text, () => ""), (text) => text.length > 0)
}

/** The 400 for a query parameter or a body `endpoint` does not declare; undefined when the request has neither. */
export const undeclaredInput = (
  endpoint: HttpApiEndpoint.Top,
  request: HttpServerRequest.HttpServerRequest
): Effect.Effect<BadRequest | undefined> => {
  if (endpoint.query === undefined) {
    const parameter = firstQueryParameter(request.url)
    if (parameter !== undefined) {
      const message = `Unknown query parameter "${parameter}": ${routeOf(endpoint)} takes no query parameters`
      return Effect.succeed(BadRequest.of(message, "UnknownField", [{ path: parameter, message }]))
    }
  }
  if (endpoint.payload.size > 0) return Effect.succeed(undefined)
  return Effect.map(
    carriesBody(request),
    (body) => body ? BadRequest.of(`The request body must be empty: ${routeOf(endpoint)} takes no body`, "UnexpectedBody") : undefined
  )
}
