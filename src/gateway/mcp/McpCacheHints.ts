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
 * "private"}`; this middleware sets them on its JSON answer. The method is
 * the `Mcp-Method` header, which McpServer checks against the body (a
 * mismatch is an error, never a result); the resource is the URI of the
 * read's own contents. Anything else (an error, a stream, another revision)
 * passes unchanged.
 */
import { Duration, Effect, Predicate } from "effect"
import { HttpBody, HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { resourceOfUri } from "../../contract/mcp/resources.ts"

const VERSION = "2026-07-28"

/** How long the lists and discovery stay fresh: they change on deploy only. */
export const LIST_TTL = Duration.minutes(5)

/** The cacheable results whose content is the same for every app and secret. */
const SHARED_LISTS: ReadonlySet<string> = new Set(["server/discover", "prompts/list"])

type Json = Record<string, unknown>

const isObject = Predicate.isObject

const parse = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/** The hint of a result of `method`, undefined when it keeps McpServer's. */
const hintOf = (method: string, result: Json): { readonly ttlMs: number; readonly cacheScope: "public" | "private" } | undefined => {
  if (SHARED_LISTS.has(method)) return { ttlMs: Duration.toMillis(LIST_TTL), cacheScope: "public" }
  if (method !== "resources/read" || !Array.isArray(result.contents)) return undefined
  const first: unknown = result.contents[0]
  const spec = isObject(first) && typeof first.uri === "string" ? resourceOfUri(first.uri) : undefined
  return spec === undefined ? undefined : { ttlMs: Duration.toMillis(spec.cache.ttl), cacheScope: spec.cache.cacheScope }
}

/** The response with the result's hints set, in place (the keys keep their order). */
const withHints = (method: string, response: HttpServerResponse.HttpServerResponse): HttpServerResponse.HttpServerResponse => {
  if (response.status !== 200 || response.body._tag !== "Uint8Array") return response
  const message = parse(new TextDecoder().decode(response.body.body))
  if (!isObject(message) || !isObject(message.result) || message.result.resultType !== "complete" || !("ttlMs" in message.result)) return response
  const hint = hintOf(method, message.result)
  if (hint === undefined) return response
  const result = { ...message.result, ...hint }
  return HttpServerResponse.setBody(response, HttpBody.text(JSON.stringify({ ...message, result }), response.body.contentType))
}

/** Sets the cache hints of the MCP route's 2026-07-28 results. */
export const McpCacheHints = HttpRouter.middleware((httpEffect) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const method = request.headers["mcp-method"]
    if (request.method !== "POST" || request.headers["mcp-protocol-version"] !== VERSION || method === undefined) return yield* httpEffect
    if (!SHARED_LISTS.has(method) && method !== "resources/read") return yield* httpEffect
    return withHints(method, yield* httpEffect)
  })
).layer
