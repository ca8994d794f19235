/**
 * What the MCP endpoint says of itself, in one place: McpServer is run with
 * these options on both of its transports (McpRoute's HTTP route and the
 * in-process one, McpInProcess), and the answers the endpoint gives itself
 * (a direct tool call's `_meta`, a 2025-11-25 `initialize`) use the same
 * values.
 */
import { McpServer } from "effect/ai"
import { EVENT_FEED_URI, EVENTS_META, MCP_RESOURCES, QUOTE_PDF } from "../../contract/mcp/resources.ts"
import { LIST_TTL } from "./McpCacheHints.ts"
import { ETAG_META, ETAGS_META } from "./McpToolCalls.ts"

/** What McpServer says of itself in every result's `_meta`. */
export const SERVER_INFO = {
  name: "mfg-public-api",
  version: "1.0.0",
  description: "Quotes, tickets and parts of the manufacturing quoting and production engine: 9 tools, each one REST operation of /v1; " +
    "resources listing the reference data, the app's customers and projects and its event feed; a quoting prompt."
} as const

/** The resources listing the ids the tools take: all but the event feed. */
const ID_RESOURCES = MCP_RESOURCES.filter((resource) => resource.uri !== EVENT_FEED_URI).map((resource) => resource.uri)

/** What `server/discover` (and 2025-11-25 `initialize`) tells an agent first: where the ids come from, the prompt, the events. */
export const INSTRUCTIONS = "Quotes, tickets and parts of a manufacturing quoting engine. Each tool is one operation of the public " +
  `REST API v1 (same input fields, same answer). The resources (${ID_RESOURCES.join(", ")}; ` +
  "their templates filter and page them) list the ids the tools take: read them, never guess an id. To quote a part, get " +
  "the prompt quote_a_part: create_ticket, create_part, list_parts until the part has a price, then create_ticket_quote, " +
  `which sends the quote. ${EVENT_FEED_URI} is the app's event feed (a read answers its newest events): what changed, and ` +
  `when; a tool call that changed something names the events it wrote in its result's _meta ("${EVENTS_META}"). A result's _meta ` +
  `also carries each record's etag ("${ETAG_META}", a list's "${ETAGS_META}" by id): pass it as ifMatch to an update, so that a ` +
  `change made meanwhile is never overwritten. A quote reads as a PDF at ${QUOTE_PDF.uriTemplate}.`

/**
 * McpServer's own hints (it takes `private` ones only): McpCacheHints makes
 * discovery and the prompts `public`, as they are the same for every app and
 * secret (the tool and resource lists depend on the secret's scopes), and
 * gives each resource read its resource's hint.
 */
const CACHE = { ttl: LIST_TTL, cacheScope: "private" } as const

/** The options McpServer runs with, whichever its transport. */
export const SERVER_OPTIONS = {
  ...SERVER_INFO,
  instructions: INSTRUCTIONS,
  cacheHints: { discover: CACHE, tools: CACHE, resources: CACHE, resourceTemplates: CACHE, prompts: CACHE }
} as const

/** The capabilities the endpoint advertises (see `servedCapabilities`). */
export interface ServedCapabilities {
  readonly tools?: { readonly listChanged: false }
  readonly resources?: { readonly subscribe: false; readonly listChanged: false }
  readonly prompts?: { readonly listChanged: false }
  readonly completions: Readonly<Record<string, never>>
}

/**
 * The capabilities the endpoint advertises, read from what is registered
 * with McpServer, as McpServer's discovery derives them: tools, resources
 * (or resource templates) and prompts when any is registered, with no
 * list-change notifications and no resource subscriptions (what is
 * registered is fixed once started, and nothing is pushed); `completions`,
 * which McpServer always serves (the prompt's arguments complete,
 * McpPrompts); no `logging`, which McpServer advertises whatever is
 * registered, while nothing is logged to a client.
 */
export const servedCapabilities = (server: McpServer.McpServer["Service"]): ServedCapabilities => ({
  ...(server.tools.length > 0 ? { tools: { listChanged: false } } : {}),
  ...(server.resources.length > 0 || server.resourceTemplates.length > 0 ? { resources: { subscribe: false, listChanged: false } } : {}),
  ...(server.prompts.length > 0 ? { prompts: { listChanged: false } } : {}),
  completions: {}
})
