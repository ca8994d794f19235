/**
 * Conditional requests (RFC 9110 §13): a strong `ETag` on every read and
 * replace answer, `If-None-Match` answered 304 on a read, and `If-Match` on a
 * PUT or DELETE answered 412 when the record is no longer the version the
 * client names.
 *
 * The entity tag is a digest of the answer's exact bytes, so it changes
 * whenever the representation does (a quote past its validity reads
 * `expired` without being written). An `If-Match` is checked twice: here,
 * against the current representation (read through the group's own read
 * operation), and in the engine, which locks the record's row and compares
 * its `updatedAt` in the write's transaction (Engine.ts), so a write between
 * the two is refused too, not lost.
 */
import { HttpServerResponse } from "effect/http"
import type { HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { hash } from "node:crypto"
import type { DecodedInput } from "../../api/EngineCall.ts"
import { BadRequest } from "../../domain/Errors.ts"
import { errorResponse } from "./ErrorResponses.ts"

/** A strong entity tag of a JSON body: its SHA-256, base64url. */
export const entityTag = (body: string) => `"${hash("sha256", body, "base64url")}"`

/** The entity tags a precondition field lists, or `*`. */
const tagsOf = (field: string): ReadonlyArray<string> | "*" => {
  if (field.trim() === "*") return "*"
  return field.split(",").map((tag) => tag.trim()).filter((tag) => tag.length > 0)
}

/**
 * Whether `field` (If-Match, If-None-Match) names the current tag: `*` names
 * any; If-None-Match compares weakly (a `W/` prefix ignored), If-Match
 * strongly (a weak tag never matches).
 */
export const namesTag = (field: string, current: string, comparison: "weak" | "strong"): boolean => {
  const tags = tagsOf(field)
  if (tags === "*") return true
  return tags.some((tag) => comparison === "weak" ? tag.replace(/^W\//, "") === current : tag === current)
}

/** 304 for a read whose `If-None-Match` names the answer's tag: no body, the tag again. */
export const notModified = (tag: string) => HttpServerResponse.empty({ status: 304, headers: { etag: tag } })

/** 412 for a write whose `If-Match` names another version than the current one (its tag, when there is one). */
export const preconditionFailed = (message: string, current: string | undefined) => {
  const response = errorResponse({ code: 412, message, type: "PreconditionFailed" })
  return current === undefined ? response : HttpServerResponse.setHeader(response, "etag", current)
}

/** The 400 for an `If-Match` on an operation that has no record version to compare. */
export const unconditional = (route: string) =>
  BadRequest.of(`If-Match is not supported by ${route}: it has no single record whose version can be compared`, "ValidationError", [
    { path: "If-Match", message: `If-Match is not supported by ${route}` }
  ])

/** How to read the current version of the record a write changes: the group's read, and its input for an id. */
export interface CurrentRead {
  readonly endpoint: HttpApiEndpoint.Top
  readonly input: (id: string) => DecodedInput
}

/** The id of the record a write changes: its path's `id`, else its body's (`PUT /reel-group`). */
export const writtenId = (request: DecodedInput): string | undefined => {
  const fromPath = (request.params as { readonly id?: unknown } | undefined)?.id
  const fromBody = (request.payload as { readonly id?: unknown } | undefined)?.id
  const id = fromPath ?? fromBody
  return typeof id === "string" || typeof id === "number" ? String(id) : undefined
}

/**
 * For each PUT and DELETE of `api`: how to read the record it changes, by the
 * group's `get` (`GET /customer/{id}`), else its `lookup` (`GET
 * /ticket/lookup?identifier=`). A write without either has none.
 */
export const currentReads = (api: { readonly groups: object }): ReadonlyMap<HttpApiEndpoint.Top, CurrentRead> => {
  const table = new Map<HttpApiEndpoint.Top, CurrentRead>()
  for (const group of Object.values(api.groups) as ReadonlyArray<HttpApiGroup.Top>) {
    const endpoints = Object.values(group.endpoints)
    const get = endpoints.find((endpoint) => endpoint.identifier === "get" && endpoint.method === "GET")
    const lookup = endpoints.find((endpoint) => endpoint.identifier === "lookup" && endpoint.method === "GET")
    const read: CurrentRead | undefined = get !== undefined
      ? { endpoint: get, input: (id) => ({ params: { id } }) }
      : lookup !== undefined
      ? { endpoint: lookup, input: (identifier) => ({ query: { identifier } }) }
      : undefined
    if (read === undefined) continue
    for (const endpoint of endpoints) {
      if (endpoint.method === "PUT" || endpoint.method === "DELETE") table.set(endpoint, read)
    }
  }
  return table
}
