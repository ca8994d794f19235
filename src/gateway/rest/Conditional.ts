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
 *
 * MCP's conditional tools (`ifMatch`) take the same check (makePreconditions),
 * and their results carry the same tags (`recordTag`), so a tag read over
 * either surface names the same version on both.
 */
import { Effect, Schema } from "effect"
import { HttpServerResponse } from "effect/http"
import { type HttpApiEndpoint, type HttpApiGroup, HttpApiSchema } from "effect/http-api"
import { hash } from "node:crypto"
import type { CallScope, DecodedInput } from "../../contract/EngineCall.ts"
import { errorAnswer } from "../../contract/ErrorAnswer.ts"
import { BadRequest, DownstreamError } from "../../domain/Errors.ts"
import { plainJsonCodec } from "../../domain/JsonCodec.ts"

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
  const response = errorAnswer({ code: 412, message, type: "PreconditionFailed" })
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
 * For each PUT and DELETE of `api`, by operation: how to read the record it changes, by the
 * group's `get` (`GET /customer/{id}`), else its `lookup` (`GET
 * /ticket/lookup?identifier=`). A write without either has none.
 */
export const currentReads = (api: { readonly groups: object }): ReadonlyMap<string, CurrentRead> => {
  const table = new Map<string, CurrentRead>()
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
      // By operation (`ticketQuote.replace`): the contract's endpoint (an MCP tool's) and the served API's are the same operation.
      if (endpoint.method === "PUT" || endpoint.method === "DELETE") table.set(`${group.identifier}.${endpoint.identifier}`, read)
    }
  }
  return table
}

/**
 * The entity tag of a record as `read` (a group's read endpoint) answers it:
 * the tag of the exact JSON its success schema encodes, as the REST read's
 * `ETag`. An answer that does not match the schema is the engine's fault (502).
 */
export const recordTag = (read: HttpApiEndpoint.Top) => {
  const body = [...read.success].find((schema) => !HttpApiSchema.isNoContent(schema.ast))
  if (body === undefined) throw new Error(`${read.identifier} answers no body: it has no entity tag`)
  // The public API's schemas are plain data: none needs a service to encode.
  const encode = Schema.encodeUnknownEffect(plainJsonCodec(body))
  return (record: unknown, requestId: string): Effect.Effect<string, DownstreamError> =>
    encode(record).pipe(
      Effect.map((json) => entityTag(JSON.stringify(json))),
      Effect.mapError(() =>
        new DownstreamError({
          status: 502,
          code: 502,
          message: `The engine's answer to ${read.identifier} does not match its schema`,
          type: "BadGateway",
          source: "engine",
          requestId
        })
      )
    )
}

/** What an `If-Match` on a write came to. */
export type PreconditionOutcome =
  /** The record is the version named: the write goes on, in a scope the engine checks again as it writes. */
  | { readonly _tag: "Holds"; readonly scope: CallScope }
  /** It is not (or there is none): 412, with the current version's tag when there is one. */
  | { readonly _tag: "Failed"; readonly message: string; readonly current: string | undefined }
  /** The write has no single record to compare (400). */
  | { readonly _tag: "Unsupported" }

/** How a precondition reads the current record: the operation's call, as the surface makes it (traced, noted). */
export type ReadCall = (endpoint: HttpApiEndpoint.Top, input: DecodedInput, scope: CallScope) => Effect.Effect<unknown, DownstreamError>

/**
 * The `If-Match` check of the writes of `api`, shared by REST (the header)
 * and MCP (`ifMatch`): the record read now through the group's read, its
 * tag compared strongly; when it holds, the scope carries the version the
 * engine checks again in the write's transaction.
 */
export const makePreconditions = (api: { readonly groups: object }, read: ReadCall) => {
  const reads = currentReads(api)
  const taggers = new Map<HttpApiEndpoint.Top, ReturnType<typeof recordTag>>()
  const tagOf = (endpoint: HttpApiEndpoint.Top) => {
    let tagger = taggers.get(endpoint)
    if (tagger === undefined) {
      tagger = recordTag(endpoint)
      taggers.set(endpoint, tagger)
    }
    return tagger
  }
  return Effect.fnUntraced(function*(
    /** The write's operation, `<group>.<endpoint>` (`ticketQuote.replace`). */
    write: string,
    id: string | undefined,
    ifMatch: string,
    scope: CallScope
  ): Effect.fn.Return<PreconditionOutcome, DownstreamError> {
    const current = reads.get(write)
    if (current === undefined || id === undefined) return { _tag: "Unsupported" }
    const record = yield* read(current.endpoint, current.input(id), scope)
    if (record === null) {
      return { _tag: "Failed", message: `No record ${id}: If-Match names a version of a record that does not exist`, current: undefined }
    }
    const tag = yield* tagOf(current.endpoint)(record, scope.requestId)
    if (!namesTag(ifMatch, tag, "strong")) {
      return { _tag: "Failed", message: `Record ${id} is no longer the version If-Match names: read it again, reapply the change and retry`, current: tag }
    }
    const updatedAt = (record as { readonly updatedAt?: unknown }).updatedAt
    return { _tag: "Holds", scope: typeof updatedAt === "string" ? { ...scope, precondition: { id, updatedAt } } : scope }
  })
}
