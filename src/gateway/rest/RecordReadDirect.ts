/**
 * `GET /v1/<resource>/{id}`, answered without the router's and the HttpApi
 * builder's generic path.
 *
 * Reading one record by its id is the commonest call of an integrator. Its
 * own work is small (the guard, one SELECT, the record checked against its
 * schema), so the generic path around it (the route's context built and
 * merged into the fiber's, the path parameters decoded by an Effect, the
 * middleware and error wrappers) cost about a sixth of the service's CPU per
 * read. A request of exactly that form (GET, the endpoint's path, an id of
 * plain URL characters that its params schema accepts, no query string) is
 * answered here with the same guard (IncomingSecretGuard) and the same
 * handler the endpoint has (PublicHandlers), which refuses a body there as
 * the route does; anything else (HEAD, a query string, a percent-encoded or
 * invalid id, a static sibling route such as `/v1/project/lookup`) goes to
 * the router, which answers as before.
 *
 * The table is derived from the API's definition: a GET endpoint whose only
 * path parameter is its last segment (`:id`, `:partItemId`), with no query,
 * header or payload schema and only the Incoming Secret middleware.
 */
import { Effect, type Fiber, Option, Schema } from "effect"
import type { HttpServerRequest } from "effect/http"
import type { HttpApi, HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { type CurrentCaller, IncomingSecretAuth } from "../../contract/Authorization.ts"
import { PublicApi } from "../../contract/PublicApi.ts"
import { asMatchedRoute } from "../../platform/http/MatchedRoute.ts"
import { failureResponse, IncomingSecretGuard, type MeteredCall, meteredCallOf } from "../request/index.ts"
import { publicHandlerOf } from "./PublicHandlers.ts"

/** One endpoint answered directly: what the guard meters it as, and what its handler is given. */
export interface RecordRead {
  readonly endpoint: HttpApiEndpoint.Top
  readonly group: HttpApiGroup.Top
  readonly call: MeteredCall
  /** The endpoint's params schema, decoding the last segment as its one parameter (`{ id }`). */
  readonly decodeParams: (segment: string) => Option.Option<unknown>
  /** Last segments that are another route's (`lookup`): the router decides. */
  readonly staticSiblings: ReadonlySet<string>
}

/** The endpoint's path without its last segment (`/v1/customer` of `/v1/customer/:id`) → how to answer it. */
export type RecordReadTable = ReadonlyMap<string, RecordRead>

const segmentsOf = (path: string) => path.split("/")
const isParam = (segment: string) => segment.startsWith(":") || segment.startsWith("*")

/** Whether `other` could match what `candidate` matches, segment for segment, before the last one. */
const sameParent = (candidate: ReadonlyArray<string>, other: ReadonlyArray<string>) =>
  other.length === candidate.length && candidate.every((segment, i) => i === candidate.length - 1 || segment === other[i] || isParam(other[i]!))

/** The record reads of `api` that can be answered directly (see the module's comment). */
export const recordReadTable = (api: Pick<HttpApi.Top, "groups"> | typeof PublicApi): RecordReadTable => {
  const gets = (Object.values(api.groups) as ReadonlyArray<HttpApiGroup.Top>).flatMap((group) =>
    Object.values(group.endpoints).filter((endpoint) => endpoint.method === "GET").map((endpoint) => ({ group, endpoint }))
  )
  const table = new Map<string, RecordRead>()
  for (const { endpoint, group } of gets) {
    const segments = segmentsOf(endpoint.path)
    const last = segments.at(-1)!
    const plain = last.startsWith(":") && segments.filter(isParam).length === 1 && endpoint.params !== undefined &&
      endpoint.query === undefined && endpoint.headers === undefined && endpoint.payload.size === 0 &&
      endpoint.middlewares.size === 1 && endpoint.middlewares.has(IncomingSecretAuth)
    if (!plain) continue
    const siblings = gets.filter((other) => other.endpoint !== endpoint && sameParent(segments, segmentsOf(other.endpoint.path)))
    // Another parameter route at the same place: only the router knows which one a path takes.
    if (siblings.some((other) => isParam(segmentsOf(other.endpoint.path).at(-1)!))) continue
    const decode = Schema.decodeUnknownOption(endpoint.params as Schema.Codec<unknown, unknown>)
    const name = last.slice(1)
    table.set(endpoint.path.slice(0, -last.length - 1), {
      endpoint,
      group,
      call: meteredCallOf(group, endpoint),
      decodeParams: (segment) => decode({ [name]: segment }),
      staticSiblings: new Set(siblings.map((other) => segmentsOf(other.endpoint.path).at(-1)!))
    })
  }
  return table
}

/**
 * Unreserved URL characters only (nothing to percent-decode), and not a dot
 * segment; a query string or a fragment fails it too.
 */
const PLAIN_ID = /^(?!\.\.?$)[A-Za-z0-9._~-]+$/

/** The record read a request is, with its decoded params; undefined when the router should answer it. */
export const recordReadOf = (
  table: RecordReadTable,
  method: string,
  url: string
): { readonly read: RecordRead; readonly params: unknown } | undefined => {
  if (method !== "GET") return undefined
  const slash = url.lastIndexOf("/")
  if (slash <= 0) return undefined
  const read = table.get(url.slice(0, slash))
  if (read === undefined) return undefined
  const id = url.slice(slash + 1)
  if (!PLAIN_ID.test(id) || read.staticSiblings.has(id)) return undefined
  const params = read.decodeParams(id)
  return Option.isSome(params) ? { read, params: params.value } : undefined
}

/**
 * The direct answer of a record read (Server.ts asks it of every request in
 * front of the router), or undefined for any other request.
 */
export const RecordReadDirect = Effect.gen(function*() {
  const guard = yield* IncomingSecretGuard
  const handlerOf = yield* publicHandlerOf
  const table = recordReadTable(PublicApi)
  return (request: HttpServerRequest.HttpServerRequest, fiber: Fiber.Fiber<unknown, unknown>) => {
    const direct = recordReadOf(table, request.method, request.url)
    if (direct === undefined) return undefined
    const { endpoint, call } = direct.read
    return asMatchedRoute(
      fiber,
      call.route,
      guard<never, CurrentCaller>(request, call, handlerOf(endpoint)({ endpoint, request, params: direct.params }), failureResponse)
    )
  }
})
