export { HttpServerLive } from "./Server.ts"
export { GatewayRoutes } from "./Server.ts"
/** The router's config the gateway serves with (a composition that serves GatewayRoutes itself passes it too). */
export { ROUTER_CONFIG } from "../../platform/http/RouteTable.ts"
