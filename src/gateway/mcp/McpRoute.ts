/**
 * POST /v1/mcp: the MCP endpoint (Streamable HTTP), served by effect/ai's
 * McpServer for MCP 2026-07-28 (stateless) and 2025-11-25 clients: the 9
 * tools, the resources of reference data, the app's records and its event
 * feed (McpResources), and the `quote_a_part` prompt (McpPrompts).
 *
 * Every request to /v1/mcp, whatever its HTTP method, goes through the same
 * request path as a REST call (McpAuth): the Incoming Secret, the one 401,
 * metering before the handler (operation `mcp.<tool name>` for tools/call,
 * `mcp.<method>` otherwise). The tools and the resources call Downstream
 * exactly as the REST handlers do; the lists show only what the secret's
 * scopes allow (McpScopes); a quote reads as a PDF (`mfg://ticket-quote/{id}/pdf`,
 * McpQuotePdf). A plain 2026-07-28 `tools/call` is answered by McpAuth
 * itself, with the same tool call (McpDirect); McpServer answers the rest.
 */
import { Effect, Layer } from "effect"
import { McpSchema, McpServer } from "effect/ai"
import type { CurrentCaller } from "../../contract/Authorization.ts"
import { MCP_PROTOCOLS } from "../../contract/mcp/openapi.ts"
import { McpToolkit, McpTools } from "../../contract/mcp/tools.ts"
import { QuotePdfs } from "../rest/index.ts"
import { MCP_PATH, McpAuth } from "./McpAuth.ts"
import { McpInProcess } from "./McpInProcess.ts"
import { PromptRegistrations } from "./McpPrompts.ts"
import { QuotePdfRegistration } from "./McpQuotePdf.ts"
import { servedPerRequest } from "./McpRequestServices.ts"
import { ResourceRegistrations } from "./McpResources.ts"
import { McpScopeChecks } from "./McpScopes.ts"
import { SERVER_OPTIONS } from "./McpServerInfo.ts"
import { McpToolCalls } from "./McpToolCalls.ts"
import { McpCallHeaders } from "./McpToolRetries.ts"
import { toCallToolResult } from "./ToolResult.ts"

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
    const handle = (args: unknown) => servedPerRequest(Effect.flatMap(McpCallHeaders, (headers) => Effect.map(call(args, headers), toCallToolResult)))
    // The output schema as tools/list carries it (toolSchemas.ts): the structure, what the input schemas say not repeated.
    const outputSchema = McpTools.find((derived) => derived.spec.name === registered.tool.name)?.outputSchema
    const tool = outputSchema === undefined ? registered.tool : new McpSchema.Tool({ ...registered.tool, outputSchema })
    yield* server.addTool({ tool, annotations: registered.annotations, handle })
  }
})) as Layer.Layer<never, never, McpServer.McpServer | McpServer.McpRequest<"Requires", CurrentCaller | McpCallHeaders> | McpToolCalls>

/** The MCP routes; McpAuth authenticates, meters and validates the Origin of every request before McpServer sees it. */
export const McpRoutes = McpServer.layerHttp({
  ...SERVER_OPTIONS,
  path: MCP_PATH,
  protocols: [...MCP_PROTOCOLS],
  // Stateless: nothing is ever pushed, so subscriptions/listen is not served (-32601) rather than a stream that stays silent.
  allowSubscriptions: false,
  registrations: Layer.mergeAll(ToolRegistrations, ResourceRegistrations, QuotePdfRegistration, PromptRegistrations, McpScopeChecks)
}).pipe(
  Layer.provide(McpAuth.layer),
  // The in-process transport runs on the route's McpServer: McpServer.layer is one layer, built once for both.
  Layer.provide(McpInProcess.layer),
  Layer.provide([McpToolCalls.layer, QuotePdfs.layer, McpServer.McpServer.layer])
)
