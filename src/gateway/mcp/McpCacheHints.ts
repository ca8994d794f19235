/**
 * The cache hints of MCP 2026-07-28 results (`ttlMs`, `cacheScope`), as the
 * caching text asks: `server/discover` and `prompts/list` are the same for
 * every app and change only on deploy, so they are `public`; `tools/list`,
 * `resources/list` and `resources/templates/list` change only on deploy too,
 * but list what the caller's secret may call (McpScopes.ts), so they keep
 * McpServer's own `private` hint; a `resources/read` carries its resource's hint
 * (src/contract/mcp/resources.ts): `public` for global reference data, `private`
 * for what is the app's own.
 *
 * effect/ai's McpServer writes the hints itself but takes only `private`
 * ones, and answers every `resources/read` with `{ttlMs: 0, cacheScope:
 * "private"}`; the endpoint sets them on McpServer's result, a value
 * (McpModern). The resource is the URI of the read's own contents.
 */
import { Duration, Predicate } from "effect"
import { resourceOfUri } from "../../contract/mcp/resources.ts"

/** How long the lists and discovery stay fresh: they change on deploy only. */
export const LIST_TTL = Duration.minutes(5)

/** The cacheable results whose content is the same for every app and secret. */
const SHARED_LISTS: ReadonlySet<string> = new Set(["server/discover", "prompts/list"])

/** A result's cache hint. */
export interface CacheHint {
  readonly ttlMs: number
  readonly cacheScope: "public" | "private"
}

/**
 * The hint of a complete result of `method` that carries one, undefined
 * when it keeps McpServer's (or carries none).
 */
export const cacheHintOf = (method: string, result: Readonly<Record<string, unknown>>): CacheHint | undefined => {
  if (result.resultType !== "complete" || !("ttlMs" in result)) return undefined
  if (SHARED_LISTS.has(method)) return { ttlMs: Duration.toMillis(LIST_TTL), cacheScope: "public" }
  if (method !== "resources/read" || !Array.isArray(result.contents)) return undefined
  const first: unknown = result.contents[0]
  const spec = Predicate.isObject(first) && typeof first.uri === "string" ? resourceOfUri(first.uri) : undefined
  return spec === undefined ? undefined : { ttlMs: Duration.toMillis(spec.cache.ttl), cacheScope: spec.cache.cacheScope }
}
