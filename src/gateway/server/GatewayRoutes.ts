/**
 * Every route of the gateway: every endpoint of PublicApi and AdminApi, the
 * system routes, the document, its viewer and MCP.
 */
import { AdminApi } from "../../contract/AdminApi.ts"
import { PublicApi } from "../../contract/PublicApi.ts"
import { HEALTH_PATH, READY_PATH, type Route, routesOf, type RouteTable, routeTable } from "../../platform/http/RouteTable.ts"
import { MCP_PATH } from "../mcp/index.ts"

export const OPENAPI_PATH = "/openapi.json"
export const DOCS_PATH = "/docs"

/** The API's routes and the system routes: each path also takes OPTIONS (answered with its `Allow`, SystemRoutes). */
const ANSWERED: ReadonlyArray<Route> = [
  ...routesOf(PublicApi),
  ...routesOf(AdminApi),
  { method: "GET", path: HEALTH_PATH },
  { method: "GET", path: READY_PATH },
  { method: "GET", path: OPENAPI_PATH },
  { method: "GET", path: DOCS_PATH }
]

/**
 * Every route of the gateway. MCP takes POST only: McpServer answers every
 * other method on its path itself (405 `Allow: POST`, after McpAuth).
 */
export const GATEWAY_ROUTES: RouteTable = routeTable([
  ...ANSWERED,
  ...ANSWERED.map(({ path }) => ({ method: "OPTIONS", path })),
  { method: "POST", path: MCP_PATH }
])
