/**
 * The MCP side of events (issue 20, item 5), as a client sees it over POST
 * /v1/mcp: the app's event feed as the `mfg://event` resource (the newest
 * page, filters, paging, hints, errors, metering), and the events a tool call
 * wrote named in its result's `_meta` (`io.mfg/events`), on the direct path
 * and through McpServer alike, checked against GET /v1/event?requestId= of
 * the same call. A lookup that fails leaves the key out and the call intact.
 */
import { assert, layer } from "@effect/vitest"
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from "@modelcontextprotocol/client"
import { Client as LegacyClient } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport as LegacyTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { Effect, Layer } from "effect"
import { DownstreamLive } from "../../src/adapters/downstream/DownstreamHttp.ts"
import { MeterSql } from "../../src/adapters/sql/MeterSql.ts"
import { SecretStoreSql } from "../../src/adapters/sql/SecretStoreSql.ts"
import { operationOf } from "../../src/contract/Operations.ts"
import { DownstreamError } from "../../src/domain/Errors.ts"
import { ReadinessChecksLive } from "../../src/platform/Readiness.ts"
import { Downstream } from "../../src/services/Downstream.ts"
import { RateLimitingNoOp } from "../../src/services/RateLimiting.ts"
import { ADMIN_TOKEN, type Backend, backends } from "../support/backends.ts"
import { ok, patch } from "../support/http.ts"
import { type Reply, TestApp, TestClient } from "../support/TestApp.ts"

const MODERN = "2026-07-28"
const EVENTS = "io.mfg/events"
const SERVER_INFO = "io.modelcontextprotocol/serverInfo"
const meta = { "io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {} }

/** A 2026-07-28 request as raw HTTP, as the transport sends it (McpDirect answers a plain tools/call of it). */
const modern = (method: string, params: Record<string, unknown> = {}) => {
  const name = method === "resources/read" ? params.uri : params.name
  return {
    body: { jsonrpc: "2.0", id: 1, method, params: { ...params, _meta: meta } },
    headers: {
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": MODERN,
      "mcp-method": method,
      ...(typeof name === "string" ? { "mcp-name": name } : {})
    }
  }
}

/** The same request with one more Accept type: McpDirect leaves it to McpServer. */
const throughMcpServer = (request: ReturnType<typeof modern>) => ({
  ...request,
  headers: { ...request.headers, accept: `${request.headers.accept}, application/x-ndjson` }
})

interface NamedEvent {
  readonly id: string
  readonly type: string
}

interface ToolResult {
  readonly _meta?: Record<string, unknown>
  readonly isError?: boolean
  readonly structuredContent?: any
  readonly content: ReadonlyArray<{ readonly type: string; readonly text?: string }>
}

interface Page {
  readonly items: ReadonlyArray<any>
  readonly total: number
  readonly offset: number
  readonly limit: number
  readonly next?: string
}

const PART_URL = "https://files.example/models/bracket.stl"

/** A fresh app with a customer, a project, a material and a ticket; `rest` calls /v1 and `post` /v1/mcp with its secret. */
const freshApp = (prefix: string) =>
  Effect.gen(function*() {
    const client = yield* TestClient
    const appId = `${prefix}-${Math.random().toString(36).slice(2)}`
    const { value: secret } = yield* client.createSecret(appId)
    const rest = (method: string, path: string, body?: unknown) => client.call(method, `/v1${path}`, { secret, body })
    const post = (request: { body: unknown; headers: Record<string, string> }) =>
      client.call("POST", "/v1/mcp", { secret, body: request.body, headers: request.headers })
    /** A tool call's HTTP reply and its result. */
    const call = (name: string, args: Record<string, unknown>, path: "direct" | "server" = "direct") =>
      Effect.map(
        post(path === "direct" ? modern("tools/call", { name, arguments: args }) : throughMcpServer(modern("tools/call", { name, arguments: args }))),
        (reply) => {
          assert.strictEqual(reply.status, 200, reply.text)
          return { reply, result: reply.json().result as ToolResult }
        }
      )
    const read = (uri: string) =>
      Effect.map(post(modern("resources/read", { uri })), (reply) => {
        const answer = reply.json()
        assert.isDefined(answer.result, `${uri}: ${reply.text}`)
        assert.lengthOf(answer.result.contents, 1)
        assert.strictEqual(answer.result.contents[0].uri, uri)
        assert.strictEqual(answer.result.contents[0].mimeType, "application/json")
        return { result: answer.result, page: JSON.parse(answer.result.contents[0].text) as Page }
      })
    const invalid = (uri: string) =>
      Effect.map(post(modern("resources/read", { uri })), (reply) => {
        const answer = reply.json()
        assert.isDefined(answer.error, `${uri}: ${reply.text}`)
        assert.strictEqual(answer.error.code, -32602, uri)
        return answer.error as { code: number; message: string; data: any }
      })
    const customer = ok(yield* rest("POST", "/customer", { name: "Acme", email: "buyer@acme.example" }), "customer")
    const project = ok(yield* rest("POST", "/project", { customerId: customer.id, name: "Gearbox" }), "project")
    const material = ok(yield* rest("POST", "/material", { name: "PLA", technologyId: "fdm" }), "material")
    const ticket = ok(yield* rest("POST", "/ticket", { projectId: project.id, name: "Events" }), "ticket")
    const partInput = { ticketId: ticket.id, modelEndpoint: { url: PART_URL }, technologyId: "fdm", materialId: material.id, quantity: 2 }
    return { client, appId, secret, rest, post, call, read, invalid, project, material, ticket, partInput }
  })

/** The events the call that answered `reply` wrote, as the REST feed lists them (`requestId` is its X-Request-Id). */
const eventsOfReply = (rest: (method: string, path: string) => Effect.Effect<Reply>, reply: Reply) =>
  Effect.gen(function*() {
    const requestId = reply.headers.get("x-request-id")
    assert.isString(requestId)
    return ok(yield* rest("GET", `/event?requestId=${requestId}`), "events of the call") as Array<{ id: string; type: string; data: any }>
  })

const named = (events: ReadonlyArray<NamedEvent>) => events.map(({ id, type }) => ({ id, type }))

/** The `io.mfg/events` of a result; the only other `_meta` keys are the server's and the tags of the records answered. */
const eventsMeta = (result: ToolResult) => {
  assert.isDefined(result._meta)
  assert.includeMembers([EVENTS, SERVER_INFO, "io.mfg/etag", "io.mfg/etags"], Object.keys(result._meta!))
  return result._meta![EVENTS] as ReadonlyArray<NamedEvent> | undefined
}

const textJson = (result: ToolResult) => JSON.parse(result.content.find((block) => block.type === "text")!.text!)

const usage = (appId: string) =>
  Effect.flatMap(TestClient, (client) => client.call("GET", `/api/v1/usage?appId=${appId}`, { headers: { "x-admin-token": ADMIN_TOKEN } })).pipe(
    Effect.map((reply) => new Map((reply.json().byOperation as Array<{ operation: string; calls: number }>).map((row) => [row.operation, row.calls])))
  )

for (const backend of backends) {
  layer(TestApp(backend), { timeout: 90_000, excludeTestServices: true })(`MCP events (${backend})`, (it) => {
    it.effect("a tool call that writes names the events it wrote in _meta, on both paths, as the feed has them for its request", () =>
      Effect.gen(function*() {
        const { appId, call, partInput, project, read, rest, ticket } = yield* freshApp("mcp-events-meta")

        // A write that announces nothing (a ticket is not an event until it is quoted): no key.
        const created = yield* call("create_ticket", { projectId: project.id, name: "Quiet" })
        assert.notStrictEqual(created.result.isError, true, created.reply.text)
        assert.isUndefined(eventsMeta(created.result))
        assert.deepStrictEqual(yield* eventsOfReply(rest, created.reply), [])

        // A new part: ticket_model.created, on the direct path.
        const part = yield* call("create_part", partInput)
        assert.notStrictEqual(part.result.isError, true, part.reply.text)
        const partEvents = yield* eventsOfReply(rest, part.reply)
        assert.deepStrictEqual(partEvents.map((event) => event.type), ["ticket_model.created"])
        assert.deepStrictEqual(eventsMeta(part.result), named(partEvents))
        // The structured content is the operation's answer, nothing added.
        assert.deepStrictEqual(part.result.structuredContent, ok(yield* rest("GET", `/ticket-model/${part.result.structuredContent.id}`), "part"))
        assert.deepStrictEqual(textJson(part.result), part.result.structuredContent)

        // Priced as the analysis would price it, the ticket is quoted: the quote sent and the ticket quoted, in that order.
        yield* patch("ticketModel", appId, part.result.structuredContent.id, { unitPrice: 12.5, totalPrice: 25 })
        const quote = yield* call("create_ticket_quote", { ticketId: ticket.id })
        assert.notStrictEqual(quote.result.isError, true, quote.reply.text)
        const quoteEvents = yield* eventsOfReply(rest, quote.reply)
        assert.deepStrictEqual(quoteEvents.map((event) => event.type), ["ticket_quote.sent", "ticket.quoted"])
        assert.deepStrictEqual(eventsMeta(quote.result), named(quoteEvents))
        assert.deepStrictEqual(quote.result.structuredContent, ok(yield* rest("GET", `/ticket-quote/${quote.result.structuredContent.id}`), "quote"))
        assert.strictEqual(quoteEvents[0]!.data.object.id, quote.result.structuredContent.id)

        // The same call through McpServer: a second quote supersedes the first; the same key, the same shape.
        const again = yield* call("create_ticket_quote", { ticketId: ticket.id }, "server")
        assert.notStrictEqual(again.result.isError, true, again.reply.text)
        const againEvents = yield* eventsOfReply(rest, again.reply)
        assert.deepStrictEqual(againEvents.map((event) => event.type), ["ticket_quote.superseded", "ticket_quote.sent"])
        assert.deepStrictEqual(eventsMeta(again.result), named(againEvents))
        assert.deepStrictEqual(again.result.structuredContent, ok(yield* rest("GET", `/ticket-quote/${again.result.structuredContent.id}`), "quote"))

        // The feed resource reads the call's events with their data.
        const requestId = again.reply.headers.get("x-request-id")!
        const fromFeed = (yield* read(`mfg://event?requestId=${requestId}`)).page
        assert.deepStrictEqual(fromFeed.items, againEvents)

        // Reads and failed calls name none, on either path.
        for (const path of ["direct", "server"] as const) {
          const listed = yield* call("list_parts", { ticketId: [ticket.id] }, path)
          assert.notStrictEqual(listed.result.isError, true)
          assert.isUndefined(eventsMeta(listed.result), path)
          const refused = yield* call("create_ticket_quote", { ticketId: "nope" }, path)
          assert.isTrue(refused.result.isError)
          assert.isUndefined(eventsMeta(refused.result), path)
        }
      }))

    it.effect("the official clients (2026-07-28 and 2025-11-25) see the events in the tool result's _meta", () =>
      Effect.gen(function*() {
        const { appId, client, partInput, rest, secret } = yield* freshApp("mcp-events-clients")
        const url = new URL(`${client.baseUrl}/v1/mcp`)
        const modernClient = new ModernClient({ name: "mcp-events-test", version: "1.0.0" }, { versionNegotiation: { mode: { pin: MODERN } } })
        yield* Effect.promise(() => modernClient.connect(new ModernTransport(url, { requestInit: { headers: { authorization: `Bearer ${secret}` } } })))
        const legacyClient = new LegacyClient({ name: "mcp-events-legacy", version: "1.0.0" })
        yield* Effect.promise(() => legacyClient.connect(new LegacyTransport(url, { requestInit: { headers: { authorization: secret } } })))
        const callers: ReadonlyArray<readonly [string, () => Promise<unknown>]> = [
          ["2026-07-28", () => modernClient.callTool({ name: "create_part", arguments: partInput })],
          ["2025-11-25", () => legacyClient.callTool({ name: "create_part", arguments: partInput })]
        ]
        for (const [what, callTool] of callers) {
          const result = (yield* Effect.promise(callTool)) as ToolResult
          assert.notStrictEqual(result.isError, true, `${what}: ${JSON.stringify(result.content)}`)
          const events = result._meta?.[EVENTS] as ReadonlyArray<NamedEvent>
          assert.deepStrictEqual(events.map((event) => event.type), ["ticket_model.created"], what)
          const written = ok(yield* rest("GET", "/event?type=ticket_model.created"), "events") as Array<any>
          const ofPart = written.find((event) => event.data.object.id === textJson(result).id)
          assert.deepStrictEqual(events, [{ id: ofPart.id, type: "ticket_model.created" }], what)
        }
        yield* Effect.promise(() => modernClient.close())
        yield* Effect.promise(() => legacyClient.close())
        assert.strictEqual((yield* usage(appId)).get("mcp.create_part"), 2)
      }))

    it.effect("mfg://event: listed with its template, the newest page without offset, filters and paging, private and never fresh", () =>
      Effect.gen(function*() {
        const { appId, invalid, post, read, rest, partInput } = yield* freshApp("mcp-events-feed")
        const other = yield* freshApp("mcp-events-other")

        const resources = post(modern("resources/list"))
        const listed = ((yield* resources).json().result.resources as Array<any>).find((resource) => resource.uri === "mfg://event")
        assert.isDefined(listed)
        assert.strictEqual(listed.name, "event")
        assert.strictEqual(listed.mimeType, "application/json")
        assert.include(listed.description, "newest page")
        assert.include(listed.description, EVENTS)
        const templates = (yield* post(modern("resources/templates/list"))).json().result.resourceTemplates as Array<any>
        assert.include(templates.map((template) => template.uriTemplate), "mfg://event{?type,requestId,limit,offset}")

        // An app without events: an empty page.
        const empty = yield* read("mfg://event")
        assert.deepStrictEqual(empty.page, { items: [], total: 0, offset: 0, limit: 20 })
        assert.strictEqual(empty.result.ttlMs, 0)
        assert.strictEqual(empty.result.cacheScope, "private")

        // 22 parts: 22 ticket_model.created, more than a page of 20.
        for (let index = 0; index < 22; index++) ok(yield* rest("POST", "/ticket-model", { ...partInput, name: `Part ${index}` }), `part ${index}`)
        const all = ok(yield* rest("GET", "/event"), "feed") as Array<any>
        assert.lengthOf(all, 22)

        // Without offset: the newest 20, in the order written; nothing after them.
        const newest = (yield* read("mfg://event")).page
        assert.deepStrictEqual([newest.total, newest.offset, newest.limit, newest.next], [22, 2, 20, undefined])
        assert.deepStrictEqual(newest.items, all.slice(2))
        const lastTwo = (yield* read("mfg://event?limit=2")).page
        assert.deepStrictEqual([lastTwo.offset, lastTwo.next], [20, undefined])
        assert.deepStrictEqual(lastTwo.items, all.slice(20))
        // With offset: that page, and the next one's URI.
        const oldest = (yield* read("mfg://event?limit=5&offset=0")).page
        assert.deepStrictEqual(oldest.items, all.slice(0, 5))
        assert.strictEqual(oldest.next, "mfg://event?limit=5&offset=5")
        assert.deepStrictEqual((yield* read(oldest.next!)).page.items, all.slice(5, 10))

        // Filters: by type (repeatable), by the call that wrote them.
        assert.strictEqual((yield* read("mfg://event?type=ticket_quote.sent")).page.total, 0)
        const byType = (yield* read("mfg://event?type=ticket_model.created&type=ticket.quoted&limit=3")).page
        assert.deepStrictEqual([byType.total, byType.offset], [22, 19])
        const creation = yield* rest("POST", "/ticket-model", { ...partInput, name: "Named" })
        const ofCall = (yield* read(`mfg://event?requestId=${creation.headers.get("x-request-id")}`)).page
        assert.deepStrictEqual(ofCall.items.map((event) => [event.type, event.data.object.name]), [["ticket_model.created", "Named"]])

        // Another app's feed is its own.
        assert.strictEqual((yield* other.read("mfg://event")).page.total, 0)

        // A type the catalogue does not have, a parameter the template does not name, a bad limit: -32602 naming it.
        const badType = yield* invalid("mfg://event?type=ticket.exploded")
        assert.include(badType.message, "\"type\"")
        const unknown = yield* invalid("mfg://event?after=x")
        assert.include(unknown.message, "\"after\"")
        assert.include(unknown.message, "mfg://event{?type,requestId,limit,offset}")
        assert.include((yield* invalid("mfg://event?limit=1001")).message, "\"limit\"")
        for (const uri of ["mfg://events", "mfg://event/x"]) assert.deepStrictEqual((yield* invalid(uri)).data, { uri })

        const metered = yield* usage(appId)
        // Every read is metered, refused ones included: 8 answered, 5 refused.
        assert.strictEqual(metered.get("mcp.resources/read"), 8 + 5)
      }))
  })

  // An engine whose event feed cannot be read for apps named `broken-feed-…`: the tool calls still answer.
  const BrokenFeed = Layer.effect(
    Downstream,
    Effect.gen(function*() {
      const real = yield* Downstream
      return Downstream.of({
        call: (endpoint) => (input, scope) =>
          operationOf(endpoint) === "event.list" && scope.appId.startsWith("broken-feed-")
            ? Effect.fail(
              new DownstreamError({
                status: 503,
                code: 503,
                message: "The feed is down",
                type: "ServiceUnavailable",
                source: "engine",
                requestId: scope.requestId
              })
            )
            : real.call(endpoint)(input, scope),
        emptyTestData: real.emptyTestData
      })
    })
  ).pipe(Layer.provide(DownstreamLive))

  brokenFeedSuite(backend, BrokenFeed)
}

function brokenFeedSuite(backend: Backend, downstream: Layer.Layer<Downstream, never, any>) {
  layer(
    TestApp(backend, {}, { services: Layer.mergeAll(SecretStoreSql, MeterSql, downstream, RateLimitingNoOp).pipe(Layer.provideMerge(ReadinessChecksLive)) }),
    { timeout: 60_000, excludeTestServices: true }
  )(
    `MCP events, the feed unreadable (${backend})`,
    (it) => {
      it.effect("a tool call whose events cannot be read answers its result without the key, on both paths; the change is made", () =>
        Effect.gen(function*() {
          const { call, partInput, rest, ticket } = yield* freshApp("broken-feed")
          for (const path of ["direct", "server"] as const) {
            const part = yield* call("create_part", { ...partInput, name: `Made ${path}` }, path)
            assert.notStrictEqual(part.result.isError, true, part.reply.text)
            assert.isUndefined(eventsMeta(part.result), path)
            assert.deepStrictEqual(part.result.structuredContent, ok(yield* rest("GET", `/ticket-model/${part.result.structuredContent.id}`), "part"))
          }
          const parts = ok(yield* rest("GET", `/ticket-model?ticketId=${ticket.id}`), "parts") as Array<{ name: string }>
          assert.sameMembers(parts.map((part) => part.name), ["Made direct", "Made server"])
        }))
    }
  )
}
