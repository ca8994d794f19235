/**
 * An operation takes only what its endpoint declares. A query parameter sent
 * to an endpoint that declares none, or a body with fields sent to one that
 * declares none, is a 400 naming what it does not take, instead of being silently
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
 * The body of a request to an endpoint that takes none, as far as it
 * matters: none (no bytes, `Content-Length: 0`, or only white space), an
 * empty JSON object (`{}`, which many clients send for "nothing"), the
 * fields of a JSON object, or something else. The body of a bodyless
 * method (GET, DELETE) is never read: any byte of it is something else.
 */
type NoBody =
  | { readonly _tag: "Empty" }
  | { readonly _tag: "Fields"; readonly fields: ReadonlyArray<string> }
  | { readonly _tag: "Other"; readonly read: boolean }

const EMPTY: NoBody = { _tag: "Empty" }
const OTHER: NoBody = { _tag: "Other", read: true }
const UNREAD: NoBody = { _tag: "Other", read: false }

const isJsonObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value)

const parsed = (text: string): NoBody => {
  if (text.trim().length === 0) return EMPTY
  try {
    const value: unknown = JSON.parse(text)
    if (!isJsonObject(value)) return OTHER
    const fields = Object.keys(value)
    return fields.length === 0 ? EMPTY : { _tag: "Fields", fields }
  } catch {
    return OTHER
  }
}

const bodyOf = (request: HttpServerRequest.HttpServerRequest): Effect.Effect<NoBody> => {
  const length = request.headers["content-length"]
  if (length !== undefined && Number(length) === 0) return Effect.succeed(EMPTY)
  if (length === undefined && request.headers["transfer-encoding"] === undefined) return Effect.succeed(EMPTY)
  if (BODYLESS.has(request.method)) return Effect.succeed(UNREAD)
  // RequestLimits read the body under MAX_BODY_BYTES and kept it: this is the same text.
  return Effect.map(Effect.orElseSucceed(request.text, () => ""), parsed)
}

/** The 400 for a body sent to an endpoint that takes none: each field named, or the body as a whole. */
const unexpectedBody = (endpoint: HttpApiEndpoint.Top, body: NoBody): BadRequest | undefined => {
  switch (body._tag) {
    case "Empty":
      return undefined
    case "Fields": {
      const problems = body.fields.map((field) => ({
        path: field,
        message: `Unknown field "${field}": ${routeOf(endpoint)} takes no body (send none, or {})`
      }))
      return BadRequest.of(problems[0]!.message, "UnknownField", problems)
    }
    case "Other":
      return BadRequest.of(`The request body must be empty${body.read ? " or {}" : ""}: ${routeOf(endpoint)} takes no body`, "UnexpectedBody")
  }
}

/**
 * The 400 for a query parameter or a body `endpoint` does not declare;
 * undefined when the request has neither. An empty body, `{}` and
 * `Content-Length: 0` all mean no body.
 */
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
  return Effect.map(bodyOf(request), (body) => unexpectedBody(endpoint, body))
}
