export { MCP_PATH } from "./McpAuth.ts"
export { McpRequestLimits } from "./McpRequestLimits.ts"
export { McpRoutes } from "./McpRoute.ts"
