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
import type { CurrentCaller } from "../../api/Authorization.ts"
import { MCP_PROTOCOLS } from "../../api/mcp/openapi.ts"
import { EVENT_FEED_URI, EVENTS_META, MCP_RESOURCES, QUOTE_PDF } from "../../api/mcp/resources.ts"
import { McpToolkit, McpTools } from "../../api/mcp/tools.ts"
import { MCP_PATH, McpAuth } from "./McpAuth.ts"
import { LIST_TTL, McpCacheHints } from "./McpCacheHints.ts"
import { SERVER_INFO } from "./McpDirect.ts"
import { PromptRegistrations } from "./McpPrompts.ts"
import { QuotePdfRegistration } from "./McpQuotePdf.ts"
import { ResourceRegistrations } from "./McpResources.ts"
import { McpScopeChecks } from "./McpScopes.ts"
import { ETAG_META, ETAGS_META, McpToolCalls } from "./McpToolCalls.ts"
import type { McpCallHeaders } from "./McpToolRetries.ts"
import { QuotePdfs } from "./QuotePdfHandler.ts"

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
    // eslint-disable-next-line no-restricted-syntax -- left for the MCP rewrite (issue 40)
    const handle = call as unknown as (args: unknown) => Effect.Effect<McpSchema.CallToolResult, never, McpSchema.McpRequestContext>
    // The output schema as tools/list carries it (toolSchemas.ts): the structure, what the input schemas say not repeated.
    const outputSchema = McpTools.find((derived) => derived.spec.name === registered.tool.name)?.outputSchema
    const tool = outputSchema === undefined ? registered.tool : new McpSchema.Tool({ ...registered.tool, outputSchema })
    yield* server.addTool({ tool, annotations: registered.annotations, handle })
  }
})) as Layer.Layer<never, never, McpServer.McpServer | McpServer.McpRequest<"Requires", CurrentCaller | McpCallHeaders> | McpToolCalls>

/**
 * McpServer's own hints (it takes `private` ones only): McpCacheHints makes
 * discovery and the prompts `public`, as they are the same for every app and
 * secret (the tool and resource lists depend on the secret's scopes), and
 * gives each resource read its resource's hint.
 */
const CACHE = { ttl: LIST_TTL, cacheScope: "private" } as const

/** The resources listing the ids the tools take: all but the event feed. */
const ID_RESOURCES = MCP_RESOURCES.filter((resource) => resource.uri !== EVENT_FEED_URI).map((resource) => resource.uri)

/** What `server/discover` (and 2025-11-25 `initialize`) tells an agent first: where the ids come from, the prompt, the events. */
const INSTRUCTIONS = "Quotes, tickets and parts of a manufacturing quoting engine. Each tool is one operation of the public " +
  `REST API v1 (same input fields, same answer). The resources (${ID_RESOURCES.join(", ")}; ` +
  "their templates filter and page them) list the ids the tools take: read them, never guess an id. To quote a part, get " +
  "the prompt quote_a_part: create_ticket, create_part, list_parts until the part has a price, then create_ticket_quote, " +
  `which sends the quote. ${EVENT_FEED_URI} is the app's event feed (a read answers its newest events): what changed, and ` +
  `when; a tool call that changed something names the events it wrote in its result's _meta ("${EVENTS_META}"). A result's _meta ` +
  `also carries each record's etag ("${ETAG_META}", a list's "${ETAGS_META}" by id): pass it as ifMatch to an update, so that a ` +
  `change made meanwhile is never overwritten. A quote reads as a PDF at ${QUOTE_PDF.uriTemplate}.`

/** The MCP routes; McpAuth authenticates, meters and validates the Origin of every request before McpServer sees it. */
export const McpRoutes = McpServer.layerHttp({
  ...SERVER_INFO,
  instructions: INSTRUCTIONS,
  path: MCP_PATH,
  protocols: [...MCP_PROTOCOLS],
  // Stateless: nothing is ever pushed, so subscriptions/listen is not served (-32601) rather than a stream that stays silent.
  allowSubscriptions: false,
  cacheHints: { discover: CACHE, tools: CACHE, resources: CACHE, resourceTemplates: CACHE, prompts: CACHE },
  registrations: Layer.mergeAll(ToolRegistrations, ResourceRegistrations, QuotePdfRegistration, PromptRegistrations, McpScopeChecks)
}).pipe(Layer.provide(McpCacheHints), Layer.provide(McpAuth.layer), Layer.provide([McpToolCalls.layer, QuotePdfs.layer]))
