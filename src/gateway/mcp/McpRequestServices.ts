/**
 * The request services of the MCP handlers: the caller and the call's
 * headers, which McpAuth (the route's middleware) provides on every request.
 *
 * McpServer's registry (`addTool`, `addResource`, `addResourceTemplate`,
 * `addPrompt`) types a handler as reading `McpRequestContext` alone; its own
 * `registerResource` and `registerPrompt` take handlers reading more and
 * declare those services on the registration as `McpRequest<"Requires", S>`
 * markers, which the transport hands to the route's middleware. The
 * registrations here do the same: each handler goes through `servedPerRequest`
 * and each registration layer names the services as such markers.
 */
import type { Effect } from "effect"
import type { McpSchema } from "effect/ai"
import type { CurrentCaller } from "../../contract/Authorization.ts"
import type { McpCallHeaders } from "./McpToolRetries.ts"

/** What McpAuth provides to every MCP request. */
export type McpRequestServices = CurrentCaller | McpCallHeaders

/** A handler reading request services, as McpServer's registry takes it (the services come from McpAuth, per request). */
export const servedPerRequest = <A, E, R extends McpRequestServices>(
  handler: Effect.Effect<A, E, R | McpSchema.McpRequestContext>
): Effect.Effect<A, E, McpSchema.McpRequestContext> => handler as Effect.Effect<A, E, McpSchema.McpRequestContext>
