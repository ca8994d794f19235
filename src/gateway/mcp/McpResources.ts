/**
 * The MCP resources (src/contract/mcp/resources.ts) registered with McpServer:
 * each `mfg://<name>` as a resource (the first page) and as a template
 * (`mfg://<name>{?<filters>,limit,offset}`), read through the REST list's
 * Downstream operation for the caller's app, as the REST handler calls it;
 * the request log from the meter, as GET /v1/request-log reads it.
 *
 * The templates are registered with McpServer's `addResourceTemplate`, not
 * `registerResource`: the latter's templates are path segments (`{id}`),
 * while these are RFC 6570 form-style queries (`{?technologyId}`). The
 * template's router path is the bare URI, which matches it with any query;
 * the query is then read here, strictly: a parameter the template does not
 * name, or a value the REST list's query Schema refuses, is invalid params
 * (-32602) naming it.
 *
 * A read without `limit` takes the resource's page size. A read of the event
 * feed without `offset` answers its newest page: the list is read once for
 * its total, and again from `total - limit` when the newest events are not
 * on the first page.
 */
import { Context, Effect, Layer, Schema } from "effect"
import { McpSchema, McpServer } from "effect/ai"
import { callScopeOf, CurrentCaller } from "../../contract/Authorization.ts"
import { badRequestOf } from "../../contract/BadRequests.ts"
import type { CallScope } from "../../contract/EngineCall.ts"
import { MCP_RESOURCES, type McpResourceSpec, PAGING_PARAMETERS, RESOURCE_MIME_TYPE } from "../../contract/mcp/resources.ts"
import { endpointNamed, type OperationInput, type Page } from "../../contract/Operations.ts"
import type { DownstreamError } from "../../domain/Errors.ts"
import type { RequestLogQuery } from "../../domain/RequestLog.ts"
import { traced } from "../../domain/Span.ts"
import { Instruments } from "../../platform/telemetry/Instruments.ts"
import { Downstream } from "../../services/Downstream.ts"
import { Meter } from "../../services/Meter.ts"
import { requestLogPage, unstorableInput } from "../rest/index.ts"
import { servedPerRequest } from "./McpRequestServices.ts"
import { noteDownstreamFailure } from "./McpToolCalls.ts"

type Json = Readonly<Record<string, unknown>>

/** A read's outcome as McpServer takes it; the caller is a request service (McpAuth provides it). */
type Read = Effect.Effect<McpSchema.ReadResourceResult, McpSchema.InvalidParams | McpSchema.InternalError, CurrentCaller>

const notFound = (uri: string) => new McpSchema.InvalidParams({ message: "Resource not found", data: { uri } })

/** The query of `uri`, a read of `spec`: each parameter's values, or undefined when the URI is not the resource's. */
const queryOf = (spec: McpResourceSpec, uri: string): URLSearchParams | undefined => {
  if (uri === spec.uri) return new URLSearchParams()
  if (!uri.startsWith(`${spec.uri}?`) || uri.includes("#")) return undefined
  return new URLSearchParams(uri.slice(spec.uri.length + 1))
}

/** The URI of the page after `offset`, the same query otherwise. */
const nextUri = (spec: McpResourceSpec, query: URLSearchParams, offset: number) => {
  const next = new URLSearchParams(query)
  next.set("offset", String(offset))
  return `${spec.uri}?${next.toString()}`
}

/** A read that failed downstream (engine or storage): an internal error, with the REST error's status and type. */
const downstreamFailure = (uri: string, error: DownstreamError) =>
  new McpSchema.InternalError({ message: error.message, data: { uri, code: error.code, type: error.type } })

/**
 * The REST list's own query Schema, as the HttpApi decodes a query string (a
 * repeated parameter is an array). An endpoint keeps its query as
 * `Schema.Top`, its types erased; a list's query is a struct of plain fields,
 * reading no service.
 */
const listQueryOf = (spec: McpResourceSpec) => {
  const query = spec.endpoint.query as Schema.Codec<Readonly<Record<string, unknown>>, unknown> | undefined
  if (query === undefined) throw new Error(`MCP resource ${spec.uri}: ${spec.operation} takes no query`)
  return Schema.toCodecArrayFromSingle(query)
}

/** Registers every resource and its template; their reads need the caller (a request service). */
export const ResourceRegistrations = Layer.effectDiscard(Effect.gen(function*() {
  const server = yield* McpServer.McpServer
  const downstream = yield* Downstream
  const meter = yield* Meter
  const instruments = yield* Instruments
  const colourList = endpointNamed("colour.list")
  if (colourList === undefined) return yield* Effect.die("MCP resources: colour.list is not an operation of the contract")
  const listColours = downstream.call(colourList)

  const noteFailure = (error: DownstreamError) => noteDownstreamFailure(instruments, error)

  /** Runs an operation for the caller's app, as the REST handler does, with the same telemetry. */
  const run = <A>(operation: string, uri: string, call: (scope: CallScope) => Effect.Effect<A, DownstreamError>) =>
    Effect.flatMap(CurrentCaller, (caller) =>
      call(callScopeOf(caller)).pipe(
        Effect.tapError(noteFailure),
        Effect.mapError((error) => downstreamFailure(uri, error)),
        traced("Downstream.call", { attributes: { "downstream.operation": operation } })
      ))

  /** The colour records of a page's materials, in the order each lists them. */
  const withColours = Effect.fnUntraced(function*(uri: string, materials: ReadonlyArray<Json>) {
    const ids = [...new Set(materials.flatMap((material) => (material.colourIds as ReadonlyArray<string> | undefined) ?? []))]
    if (ids.length === 0) return materials.map((material) => ({ ...material, colours: [] }))
    const page = (yield* run("colour.list", uri, (scope) =>
      listColours({ query: { ids, limit: Math.max(ids.length, 1) } } as OperationInput<typeof colourList>, scope))) as Page<Json>
    const byId = new Map(page.items.map((colour) => [colour.id as string, colour]))
    return materials.map((material) => ({
      ...material,
      colours: ((material.colourIds as ReadonlyArray<string> | undefined) ?? []).flatMap((id) =>
        byId.get(id) ?? []
      )
    }))
  })

  /** A page of the caller's request log: a storage outage as the read's internal error, as an engine's. */
  const requestLogPageFor = (uri: string, query: RequestLogQuery) => {
    // A filter value storage cannot hold (a NUL) is invalid params naming it, as the REST 400 names it.
    const unstorable = unstorableInput({ query })
    if (unstorable !== undefined) {
      return Effect.fail(new McpSchema.InvalidParams({ message: unstorable.message, data: { uri, errors: unstorable.errors ?? [] } }))
    }
    return Effect.mapError(
      requestLogPage(meter, query),
      (error) => new McpSchema.InternalError({ message: error.message, data: { uri, code: error.code, type: error.type } })
    )
  }

  const readerOf = (spec: McpResourceSpec) => {
    /** A page of the resource's list, from its engine operation or the meter. */
    const pageOf = ((): (
      uri: string,
      query: Readonly<Record<string, unknown>>
    ) => Effect.Effect<unknown, McpSchema.InvalidParams | McpSchema.InternalError, CurrentCaller> => {
      if (spec.servedBy === "meter") return (uri, query) => requestLogPageFor(uri, query as RequestLogQuery)
      // The contract's own endpoint of the operation, which the resource's is.
      const endpoint = endpointNamed(spec.operation)
      if (endpoint === undefined) throw new Error(`MCP resource ${spec.uri}: ${spec.operation} is not an operation of the contract`)
      const list = downstream.call(endpoint)
      return (uri, query) => run(spec.operation, uri, (scope) => list({ query } as OperationInput<typeof endpoint>, scope))
    })()
    const parameters: ReadonlySet<string> = new Set([...spec.filters, ...PAGING_PARAMETERS])
    const accepted = [...parameters].map((name) => `"${name}"`).join(", ")
    const decodeQuery = Schema.decodeUnknownEffect(listQueryOf(spec))
    const encodeContent = Schema.encodeUnknownEffect(spec.content)

    // A generator defined once per resource, not per read (IncomingSecretGuard.ts says why).
    const read = Effect.fnUntraced(function*(uri: string) {
      const query = queryOf(spec, uri)
      if (query === undefined) return yield* notFound(uri)
      const unexpected = [...query.keys()].find((key) => !parameters.has(key))
      if (unexpected !== undefined) {
        return yield* new McpSchema.InvalidParams({
          message: `Unknown query parameter "${unexpected}": ${spec.uriTemplate} takes ${accepted}`,
          data: { uri }
        })
      }
      const raw: Record<string, string | Array<string>> = {}
      for (const key of new Set(query.keys())) {
        const values = query.getAll(key)
        raw[key] = values.length === 1 ? values[0]! : values
      }
      const decoded = yield* decodeQuery(raw, { errors: "all", onExcessProperty: "error" }).pipe(
        Effect.mapError((error) => {
          const problem = badRequestOf([{ kind: "Query", issue: error.issue }])
          return new McpSchema.InvalidParams({ message: problem.message, data: { uri, errors: problem.errors ?? [] } })
        })
      )
      const limit = (decoded as { readonly limit?: number }).limit ?? spec.pageSize
      const listFrom = (offset: number) => Effect.map(pageOf(uri, { ...decoded, limit, offset }), (answer) => ({ page: answer as Page<Json>, offset }))
      const asked = (decoded as { readonly offset?: number }).offset
      const first = yield* listFrom(asked ?? 0)
      const newest = asked === undefined && spec.newestFirst && first.page.total > limit
      const { offset, page } = newest ? yield* listFrom(first.page.total - limit) : first
      const items = spec.withColours ? yield* withColours(uri, page.items) : page.items
      const after = offset + page.items.length
      const content = {
        items,
        total: page.total,
        offset,
        limit,
        ...(after < page.total && page.items.length > 0 ? { next: nextUri(spec, query, after) } : {})
      }
      const json = yield* encodeContent(content).pipe(
        Effect.mapError(() => new McpSchema.InternalError({ message: `The engine's answer to ${spec.operation} does not match its schema`, data: { uri } }))
      )
      return { contents: [{ uri, mimeType: RESOURCE_MIME_TYPE, text: JSON.stringify(json) }] }
    })
    return (uri: string): Read => read(uri)
  }

  for (const spec of MCP_RESOURCES) {
    const read = readerOf(spec)
    const annotations = { audience: ["assistant" as const] }
    const described = { name: spec.name, title: spec.title, description: spec.description, mimeType: RESOURCE_MIME_TYPE, annotations }
    // No `services`: a read holds what it needs and takes the caller from the request, as the tools do.
    yield* server.addResource({
      resource: new McpSchema.Resource({ uri: spec.uri, ...described }),
      annotations: Context.empty(),
      // McpServer answers any MCP error of a read as it is, though `addResource` types only InternalError;
      // the bare URI has no query a read could refuse.
      handle: servedPerRequest(read(spec.uri)) as Effect.Effect<McpSchema.ReadResourceResult, McpSchema.InternalError, McpSchema.McpRequestContext>
    })
    yield* server.addResourceTemplate({
      template: new McpSchema.ResourceTemplate({ uriTemplate: spec.uriTemplate, ...described }),
      annotations: Context.empty(),
      // The router's path syntax: `::` is a literal colon; the query is left to the read.
      routerPath: spec.uri.replace(":", "::"),
      completions: {},
      handle: (uri) => servedPerRequest(read(uri))
    })
  }
})) as Layer.Layer<never, never, McpServer.McpServer | McpServer.McpRequest<"Requires", CurrentCaller> | Downstream | Meter>
