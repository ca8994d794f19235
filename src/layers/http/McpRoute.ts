/**
 * POST /v1/mcp: the MCP endpoint (Streamable HTTP), served by effect/ai's
 * McpServer for MCP 2026-07-28 (stateless) and 2025-11-25 clients.
 *
 * Every request to /v1/mcp, whatever its HTTP method, goes through the same
 * request path as a REST call (McpAuth): the Incoming Secret, the one 401,
 * metering before the handler (operation `mcp.<tool name>` for tools/call,
 * `mcp.<method>` otherwise). The tools call Downstream exactly as the REST
 * handlers do. A plain 2026-07-28 `tools/call` is answered by McpAuth
 * itself, with the same tool call (McpDirect); McpServer answers the rest.
 */
import { Effect, Layer } from "effect"
import { type McpSchema, McpServer } from "effect/ai"
import type { CurrentCaller } from "../../api/Authorization.ts"
import { MCP_PROTOCOLS } from "../../api/mcp/openapi.ts"
import { McpToolkit } from "../../api/mcp/tools.ts"
import { MCP_PATH, McpAuth } from "./McpAuth.ts"
import { SERVER_INFO } from "./McpDirect.ts"
import { McpToolCalls } from "./McpToolCalls.ts"

/**
 * Registers the 9 tools with McpServer. effect/ai's toolkit registration
 * describes them (name, description, input and output schemas, annotations);
 * each is then registered again, with the same description, to a handler
 * answering directly (McpToolCalls), so the toolkit's handlers are
 * never called: its generic call path (a stream, a queue and a forked fiber
 * per call) cost more than the tool's own work.
 */
const ToolRegistrations = Layer.effectDiscard(Effect.gen(function*() {
  const calls = yield* McpToolCalls
  yield* McpServer.registerToolkit(McpToolkit).pipe(Effect.provide(McpToolkit.toLayer(calls.handlers)))
  const server = yield* McpServer.McpServer
  for (const registered of server.tools) {
    const call = calls.byName.get(registered.tool.name)
    if (call === undefined) continue
    // No `services`: the calls hold what they need (Downstream, Instruments) and read the
    // caller from the request; merging the registration's context into each call's cost more.
    // The caller is a request service (McpAuth provides it: the McpRequest marker below), not one of the registration.
    const handle = call as unknown as (args: unknown) => Effect.Effect<McpSchema.CallToolResult, never, McpSchema.McpRequestContext>
    yield* server.addTool({ tool: registered.tool, annotations: registered.annotations, handle })
  }
})) as Layer.Layer<never, never, McpServer.McpServer | McpServer.McpRequest<"Requires", CurrentCaller> | McpToolCalls>

/** Cache hints of discovery and tools/list: the tool list is the same for every app and changes only on deploy. */
const CACHE = { ttl: "5 minutes", cacheScope: "private" } as const

/** The MCP routes; McpAuth authenticates, meters and validates the Origin of every request before McpServer sees it. */
export const McpRoutes = McpServer.layerHttp({
  ...SERVER_INFO,
  instructions: "Each tool is one operation of the public REST API v1 (same input fields, same answer). " +
    "Quoting flow: create_ticket, create_part, list_parts, create_ticket_quote, send_ticket_to_production.",
  path: MCP_PATH,
  protocols: [...MCP_PROTOCOLS],
  cacheHints: { discover: CACHE, tools: CACHE },
  registrations: ToolRegistrations
}).pipe(Layer.provide(McpAuth.layer), Layer.provide(McpToolCalls.layer))
