/**
 * What an MCP caller sees and may call, by its secret's scopes
 * (src/contract/Scopes.ts): a tool needs the scope of its REST operation, a
 * resource that of the REST list it reads.
 *
 * - `tools/list`, `resources/list` and `resources/templates/list` list only
 *   what the secret may call or read (McpServer's per-request visibility);
 * - a `resources/read` outside the scopes is refused with the REST 403 body
 *   (`{code: 403, message, type: "InsufficientScope"}`) as the JSON-RPC
 *   error's `data`, its message as the error's;
 * - a `tools/call` outside them is the tool's error result with that body, as
 *   every refusal of a tool is (McpToolCalls checks it, on McpServer's path
 *   and the direct one alike).
 */
import { Effect, Layer, Schema } from "effect"
import { McpSchema, McpServer } from "effect/ai"
import { CurrentCaller } from "../../contract/Authorization.ts"
import { MCP_RESOURCES, QUOTE_PDF, resourceOfUri } from "../../contract/mcp/resources.ts"
import { TOOL_SPECS } from "../../contract/mcp/tools.ts"
import { scopeOfOperation } from "../../contract/Scopes.ts"
import { InsufficientScope } from "../../domain/Errors.ts"
import type { Scope } from "../../domain/Grants.ts"

/** The JSON-RPC error code of a refusal for scope, from the range MCP leaves to implementations. */
export const INSUFFICIENT_SCOPE_RPC_CODE = -32003

export class InsufficientScopeRpc extends Schema.Error<InsufficientScopeRpc>("InsufficientScopeRpc")({
  ...McpSchema.McpErrorBase.fields,
  _tag: Schema.tag("InsufficientScopeRpc"),
  code: Schema.tag(INSUFFICIENT_SCOPE_RPC_CODE)
}) {}

const scopeOf = (operation: string): Scope => {
  const scope = scopeOfOperation(operation)
  if (scope === undefined) throw new Error(`MCP: ${operation} has no scope in src/contract/Scopes.ts`)
  return scope
}

/** Each tool's scope and what its refusal names: the tool and its REST operation. */
export const TOOL_SCOPES: ReadonlyMap<string, { readonly scope: Scope; readonly operation: string }> = new Map(
  TOOL_SPECS.map((spec) => [spec.name, { scope: scopeOf(spec.operation), operation: `${spec.name} (${spec.operation})` }])
)

/** The scope a resource's read needs, by its URI or its template, and what its refusal names. */
const resourceScope = (target: string) => {
  if (target === QUOTE_PDF.uriTemplate || QUOTE_PDF.idOf(target) !== undefined) {
    return { scope: scopeOf(QUOTE_PDF.operation), operation: `${QUOTE_PDF.operation} (${QUOTE_PDF.uriTemplate})` }
  }
  const spec = resourceOfUri(target) ?? MCP_RESOURCES.find((resource) => resource.uriTemplate === target)
  return spec === undefined ? undefined : { scope: scopeOf(spec.operation), operation: `${spec.operation} (${spec.uri})` }
}

/** The scope `target` of a list or read `method` needs; undefined: none (a prompt, an unknown target). */
const requirementOf = (method: McpServer.MiddlewareMethod, target: string) =>
  method === "tools/list" || method === "tools/call" ? TOOL_SCOPES.get(target) : method.startsWith("resources/") ? resourceScope(target) : undefined

const LISTS: ReadonlySet<string> = new Set(["tools/list", "resources/list", "resources/templates/list"])

/** Lists show only what the caller's scopes allow; calls are checked where they run. */
const Visibility = McpServer.visibility(({ method, target }) =>
  Effect.map(CurrentCaller, (caller) => {
    if (!LISTS.has(method)) return true
    const required = requirementOf(method, target)
    return required === undefined || caller.grants.scopes.has(required.scope)
  }), { global: true })

/** A resource read outside the caller's scopes: the JSON-RPC error carrying the REST 403 body. */
const ResourceReads = McpServer.middleware((effect, { method, target }) =>
  method !== "resources/read" ? effect : Effect.flatMap(CurrentCaller, (caller) => {
    const required = resourceScope(target)
    if (required === undefined || caller.grants.scopes.has(required.scope)) return effect
    const body = InsufficientScope.of(required.operation, required.scope)
    return Effect.fail(new InsufficientScopeRpc({ message: body.message, data: { code: body.code, message: body.message, type: body.type } }))
  }), { global: true })

export const McpScopeChecks = Layer.mergeAll(Visibility, ResourceReads)
