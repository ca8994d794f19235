/**
 * One handler for every endpoint of every group of an API, but for the
 * endpoints a table names: how the gateway's API and the engine's are served,
 * by walking the API's definition rather than listing the 113 endpoints by hand.
 *
 * The table's keys are the API's endpoint names (`group.endpoint`) or a whole
 * group (`group.*`), checked against the API by the compiler: a misspelt name
 * does not compile. A name wins over its group's `*`.
 */
import { Effect, Layer } from "effect"
import { HttpApi, HttpApiBuilder, type HttpApiEndpoint, type HttpApiGroup } from "effect/http-api"
import { groupsOf } from "../../contract/Operations.ts"

/** The name of an endpoint of one of `Groups` (`group.endpoint`), or of all of a group's (`group.*`). */
export type EndpointName<Groups extends HttpApiGroup.Constraint> = Groups extends HttpApiGroup.Constraint ?
    | `${Groups["identifier"]}.${HttpApiEndpoint.Identifier<HttpApiGroup.Endpoints<Groups>>}`
    | `${Groups["identifier"]}.*`
  : never

/** The endpoints answered by other handlers than the API's own, by name: each an effect building the handler. */
export type EndpointTable<Groups extends HttpApiGroup.Constraint, Handler, R> = {
  readonly [Name in EndpointName<Groups>]?: Effect.Effect<Handler, never, R>
}

/** Keys of `Table` that name no endpoint of `Groups`: each one a compile error. */
type Misnamed<Groups extends HttpApiGroup.Constraint, Table> = { readonly [Key in Exclude<keyof Table, EndpointName<Groups>>]: never }

/** The handler every endpoint takes; what the builder's types check one group at a time. */
type AnyHandler = HttpApiEndpoint.Handler<HttpApiEndpoint.Top, never, unknown>

/** The API as the builder sees any API: groups of any names, each registered by its name read at run time. */
const topOf = <Id extends string, Groups extends HttpApiGroup.Constraint>(api: HttpApi.HttpApi<Id, Groups>): HttpApi.Top => {
  if (HttpApi.isHttpApi(api)) return api
  throw new TypeError("Not an HttpApi")
}

/**
 * The handler of each endpoint of `api`: the table's, by the endpoint's name
 * or else its group's `*`, or else `handler`. Each handler is built once.
 */
export const endpointHandlers = <
  Id extends string,
  Groups extends HttpApiGroup.Constraint,
  Handler,
  R,
  Table extends EndpointTable<Groups, Handler, unknown> = Record<never, never>
>(
  api: HttpApi.HttpApi<Id, Groups>,
  handler: Effect.Effect<Handler, never, R>,
  table?: Table & Misnamed<Groups, Table>
): Effect.Effect<(endpoint: HttpApiEndpoint.Top) => Handler, never, R | TableServices<Table>> =>
  Effect.gen(function*() {
    const fallback = yield* handler
    const named = new Map<string, Handler>()
    for (const [name, build] of Object.entries<Effect.Effect<Handler, never, TableServices<Table>> | undefined>(table ?? {})) {
      if (build !== undefined) named.set(name, yield* build)
    }
    const byEndpoint = new Map<HttpApiEndpoint.Top, Handler>()
    for (const group of groupsOf(api)) {
      for (const endpoint of Object.values(group.endpoints)) {
        byEndpoint.set(endpoint, named.get(`${group.identifier}.${endpoint.identifier}`) ?? named.get(`${group.identifier}.*`) ?? fallback)
      }
    }
    return (endpoint: HttpApiEndpoint.Top) => byEndpoint.get(endpoint) ?? fallback
  })

/** The services the table's handlers are built with. */
export type TableServices<Table> = Table[keyof Table] extends infer Build ? Build extends Effect.Effect<infer _A, infer _E, infer R> ? R : never
  : never

/**
 * Every group of `api`, each endpoint answered by its handler (endpointHandlers):
 * the layer that provides every group `HttpApiBuilder.layer(api)` needs.
 */
export const handleEveryEndpoint = <
  Id extends string,
  Groups extends HttpApiGroup.Constraint,
  Handler extends AnyHandler,
  R,
  Table extends EndpointTable<Groups, Handler, unknown> = Record<never, never>
>(
  api: HttpApi.HttpApi<Id, Groups>,
  handler: Effect.Effect<Handler, never, R>,
  table?: Table & Misnamed<Groups, Table>
): Layer.Layer<HttpApiGroup.ToService<Id, Groups>, never, R | TableServices<Table>> => {
  const top = topOf(api)
  const handlers = endpointHandlers(api, handler, table)
  const [first, ...rest] = groupsOf(api).map((group) =>
    HttpApiBuilder.group(
      top,
      group.identifier,
      (unhandled) =>
        Effect.map(
          handlers,
          (handlerOf) => unhandled.handleAll(Object.fromEntries(Object.values(group.endpoints).map((endpoint) => [endpoint.identifier, handlerOf(endpoint)])))
        )
    )
  )
  return Layer.mergeAll(first!, ...rest)
}
