/**
 * Which methods each path of a server takes, derived from its API
 * definitions and system routes, never from a hand-written list: the 405's
 * `Allow`, the answer of a plain OPTIONS and the methods a CORS preflight is
 * told about. The gateway's table is GatewayRoutes.ts; the engine server's
 * is its own API's.
 *
 * Matching is the router's own (find-my-way, with the router's config), so a
 * path is "known" here exactly when the router has a route for it.
 */
import { FindMyWay } from "effect/http"

/**
 * The router's limits: a path parameter may be as long as any schema allows
 * (find-my-way stops matching at 100 characters by default, which answered a
 * long id with a 404 instead of the schema's 400 naming it).
 */
export const ROUTER_CONFIG = { maxParamLength: 8_192 } as const

export const HEALTH_PATH = "/health"
export const READY_PATH = "/ready"

/** One route: a method on a path pattern (`/v1/customer/:id`). */
export interface Route {
  readonly method: string
  readonly path: string
}

/** The order of `Allow`. */
const METHOD_ORDER = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"] as const

/** What an HttpApi says of its routes. */
interface ApiRoutes {
  readonly groups: Readonly<Record<string, { readonly endpoints: Readonly<Record<string, Route>> }>>
}

/** Every endpoint of an HttpApi, with its prefix. */
export const routesOf = (api: ApiRoutes): ReadonlyArray<Route> =>
  Object.values(api.groups).flatMap((group) => Object.values(group.endpoints).map((endpoint) => ({ method: endpoint.method, path: endpoint.path })))

export interface RouteTable {
  /** The methods `url`'s path takes, in `Allow` order (HEAD wherever GET is); undefined for a path no route serves. */
  readonly allowed: (url: string) => ReadonlyArray<string> | undefined
  /** Every method some path takes, in `Allow` order. */
  readonly methods: ReadonlyArray<string>
}

/** The table of `routes`; parameter names do not matter (`/item/:id` and `/item/:partItemId` are one path). */
export const routeTable = (routes: ReadonlyArray<Route>): RouteTable => {
  const router = FindMyWay.make<true>(ROUTER_CONFIG)
  const seen = new Set<string>()
  for (const { method, path } of routes) {
    const pattern = path.replace(/:[^/]+/g, ":p") as FindMyWay.PathInput
    const key = `${method} ${pattern}`
    if (seen.has(key)) continue
    seen.add(key)
    router.on(method, pattern, true)
  }
  const declared = new Set(routes.map((route) => route.method))
  const expand = (has: (method: string) => boolean) => METHOD_ORDER.filter((method) => has(method) || (method === "HEAD" && has("GET")))
  return {
    allowed: (url) => {
      const methods = expand((method) => declared.has(method) && router.find(method, url) !== undefined)
      return methods.length === 0 ? undefined : methods
    },
    methods: expand((method) => declared.has(method))
  }
}
