/**
 * What an answer says beyond its body, derived from the API's definition:
 *
 * - a page of a list: `X-Total-Count` (every record the filters match) and a
 *   `Link` header with `rel="next"` and `rel="prev"` (RFC 8288), each the
 *   request's own path and query with `offset` moved by one page;
 * - a created record: `Location`, the path that reads it (the GET of the same
 *   record schema with the record's id), when the API has one; a PUT that
 *   created its record (Operations.ts `wasCreated`) answers 201;
 * - a read of a record the app does not have: the spec's empty 200, an empty
 *   `text/plain` (MissingRecord in src/contract/endpoints.ts).
 */
import type { Schema } from "effect"
import { HttpServerResponse } from "effect/http"
import type { HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { MISSING_RECORD_MEDIA_TYPE } from "../../contract/endpoints.ts"
import { createsOnReplace, TOTAL_COUNT_HEADER, wasCreated } from "../../contract/Operations.ts"
import { DEFAULT_PAGE_SIZE } from "../../domain/Resource.ts"

/** The spec's answer to a read of a record the app does not have: 200, an empty body. */
export const MISSING_RECORD = HttpServerResponse.empty({
  status: 200,
  headers: { "content-length": "0", "content-type": MISSING_RECORD_MEDIA_TYPE }
})

/** The page a list query asked for. */
export interface PageQuery {
  readonly limit?: number | undefined
  readonly offset?: number | undefined
}

/** The request's path and query with `offset` (and `limit`) set: a link relative to the service. */
const pageUrl = (url: string, limit: number, offset: number) => {
  const parsed = new URL(url, "http://service.invalid")
  parsed.searchParams.set("limit", String(limit))
  parsed.searchParams.set("offset", String(offset))
  return `${parsed.pathname}${parsed.search}`
}

/** `X-Total-Count` and `Link` (next, prev) of a page of `total` records, answered to `url`. */
export const withPageHeaders = (
  response: HttpServerResponse.HttpServerResponse,
  url: string,
  query: PageQuery | undefined,
  total: number
): HttpServerResponse.HttpServerResponse => {
  const limit = query?.limit ?? DEFAULT_PAGE_SIZE
  const offset = query?.offset ?? 0
  const links: Array<string> = []
  if (offset + limit < total) links.push(`<${pageUrl(url, limit, offset + limit)}>; rel="next"`)
  if (offset > 0) links.push(`<${pageUrl(url, limit, Math.max(0, Math.min(offset, total) - limit))}>; rel="prev"`)
  const counted = HttpServerResponse.setHeader(response, TOTAL_COUNT_HEADER, String(total))
  return links.length === 0 ? counted : HttpServerResponse.setHeader(counted, "link", links.join(", "))
}

const bodySchema = (endpoint: HttpApiEndpoint.Top): Schema.Top | undefined => [...endpoint.success][0]

/**
 * For each POST of `api` whose answer is a record that a GET of the API reads
 * by id, and each PUT that may create its record (createsOnReplace): how to
 * name the created record's path. Derived once.
 */
export const locationTable = (api: { readonly groups: object }): ReadonlyMap<HttpApiEndpoint.Top, (id: string) => string> => {
  const endpoints = (Object.values(api.groups) as ReadonlyArray<HttpApiGroup.Top>).flatMap((group) => Object.values(group.endpoints))
  const readers = new Map<Schema.Top, string>()
  for (const endpoint of endpoints) {
    const segments = endpoint.path.split("/")
    const last = segments.at(-1) ?? ""
    const schema = bodySchema(endpoint)
    if (endpoint.method !== "GET" || schema === undefined || !last.startsWith(":") || segments.filter((s) => s.startsWith(":")).length !== 1) continue
    if (!readers.has(schema)) readers.set(schema, segments.slice(0, -1).join("/"))
  }
  const table = new Map<HttpApiEndpoint.Top, (id: string) => string>()
  for (const endpoint of endpoints) {
    const schema = bodySchema(endpoint)
    const parent = schema === undefined ? undefined : readers.get(schema)
    const creates = endpoint.method === "POST" || createsOnReplace(endpoint)
    if (creates && parent !== undefined) table.set(endpoint, (id) => `${parent}/${encodeURIComponent(id)}`)
  }
  return table
}

/** `Location` of a created record, when its answer has an id. */
const withLocation = (
  response: HttpServerResponse.HttpServerResponse,
  location: ((id: string) => string) | undefined,
  answer: unknown
): HttpServerResponse.HttpServerResponse => {
  if (location === undefined || typeof answer !== "object" || answer === null || !("id" in answer)) return response
  const id = answer.id
  return typeof id === "string" || typeof id === "number" ? HttpServerResponse.setHeader(response, "location", location(String(id))) : response
}

/**
 * A write's answer: a POST's with the `Location` of the record it created;
 * a PUT that may create its record (createsOnReplace) answers 201 with the
 * `Location` when it did (Operations.ts `wasCreated`), else as a replace.
 */
export const withCreated = (
  response: HttpServerResponse.HttpServerResponse,
  endpoint: HttpApiEndpoint.Top,
  location: ((id: string) => string) | undefined,
  answer: unknown
): HttpServerResponse.HttpServerResponse => {
  if (!createsOnReplace(endpoint)) return withLocation(response, location, answer)
  return wasCreated(answer) ? HttpServerResponse.setStatus(withLocation(response, location, answer), 201) : response
}
