/**
 * No lost updates, no duplicates, over MCP as over REST (issue 36, point 2),
 * through both official clients and raw HTTP:
 *
 * - every result naming records carries each record's entity tag in `_meta`
 *   (`io.mfg/etag`, a list's `io.mfg/etags` by id), the REST read's `ETag`;
 * - `ifMatch` on update_ticket_quote, update_part and send_ticket_to_production:
 *   a stale copy is refused (412 PreconditionFailed, the current tag in
 *   `_meta`) and changes nothing, so an acceptance made from a stale read no
 *   longer erases another writer's notes and validity; a clean retry goes through;
 * - the `Idempotency-Key` header on `tools/call`: a retried create_part or
 *   create_ticket_quote makes one record and answers the first result again
 *   (marked replayed), whatever the JSON-RPC id; the key with other arguments
 *   is 422, an invalid key 400, a tool without keys ignores it.
 */
import { assert, layer } from "@effect/vitest"
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from "@modelcontextprotocol/client"
import { Client as LegacyClient } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport as LegacyTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { Effect } from "effect"
import { backends } from "../support/backends.ts"
import { ok, patch } from "../support/http.ts"
import { MCP_VERSION } from "../support/mcp.ts"
import { TestApp, TestClient } from "../support/TestApp.ts"

type Json = Record<string, any>

const ETAG = "io.mfg/etag"
const ETAGS = "io.mfg/etags"
const REPLAYED = "io.mfg/idempotentReplayed"

/** A tool result as both clients give it. */
interface ToolResult {
  readonly _meta?: Json
  readonly isError?: boolean
  readonly structuredContent?: any
  readonly content: ReadonlyArray<{ readonly type: string; readonly text?: string }>
}

/** The REST error body of a tool error. */
const errorOf = (result: ToolResult): Json => JSON.parse(result.content.find((block) => block.type === "text")!.text!)

/** What a tool result holds: its structured content, or the text of a list (2025-11-25 gives arrays in text only). */
const valueOf = (result: ToolResult): any => result.structuredContent ?? JSON.parse(result.content[0]!.text!)

for (const backend of backends) {
  layer(TestApp(backend), { timeout: 90_000, excludeTestServices: true })(`MCP writes: etags, ifMatch, Idempotency-Key (${backend})`, (it) => {
    /** A fresh app with a customer, project, material, and a ticket with a priced part; raw and client calls. */
    const setup = Effect.gen(function*() {
      const client = yield* TestClient
      const appId = `mcp-writes-${Math.random().toString(36).slice(2)}`
      const { value: secret } = yield* client.createSecret(appId)
      const rest = (method: string, path: string, body?: unknown, headers?: Record<string, string>) =>
        client.call(method, `/v1${path}`, { secret, body, ...(headers === undefined ? {} : { headers }) })
      const url = new URL(`${client.baseUrl}/v1/mcp`)
      /** A raw 2026-07-28 tools/call, with extra HTTP headers; its JSON-RPC answer. */
      const raw = (name: string, args: Json, headers: Record<string, string> = {}, id: number | string = 1) =>
        Effect.promise(async () => {
          const response = await fetch(url, {
            method: "POST",
            headers: {
              authorization: `Bearer ${secret}`,
              "content-type": "application/json",
              accept: "application/json, text/event-stream",
              "mcp-protocol-version": MCP_VERSION,
              "mcp-method": "tools/call",
              "mcp-name": name,
              ...headers
            },
            body: JSON.stringify({
              jsonrpc: "2.0",
              id,
              method: "tools/call",
              params: {
                name,
                arguments: args,
                _meta: { "io.modelcontextprotocol/protocolVersion": MCP_VERSION, "io.modelcontextprotocol/clientCapabilities": {} }
              }
            })
          })
          assert.strictEqual(response.status, 200)
          const answer = await response.json() as { id: unknown; result: ToolResult }
          assert.strictEqual(answer.id, id)
          return answer.result
        })
      /** The official clients, each with the app's secret and any extra headers (an Idempotency-Key). */
      const modern = (headers: Record<string, string> = {}) =>
        Effect.promise(async () => {
          const agent = new ModernClient({ name: "writes-test", version: "1.0.0" }, { versionNegotiation: { mode: { pin: MCP_VERSION } } })
          await agent.connect(new ModernTransport(url, { requestInit: { headers: { authorization: `Bearer ${secret}`, ...headers } } }))
          return agent
        })
      const legacy = (headers: Record<string, string> = {}) =>
        Effect.promise(async () => {
          const agent = new LegacyClient({ name: "writes-test-legacy", version: "1.0.0" })
          await agent.connect(new LegacyTransport(url, { requestInit: { headers: { authorization: secret, ...headers } } }))
          return agent
        })
      const customer = ok(yield* rest("POST", "/customer", { name: "Acme", email: "buyer@acme.example" }), "customer")
      const project = ok(yield* rest("POST", "/project", { customerId: customer.id, name: "Gearbox" }), "project")
      const material = ok(yield* rest("POST", "/material", { name: "PLA", technologyId: "fdm" }), "material")
      /** A ticket with one priced part, ready to quote. */
      const pricedTicket = Effect.gen(function*() {
        const ticket = ok(yield* rest("POST", "/ticket", { projectId: project.id, name: "Writes" }), "ticket")
        const part = ok(
          yield* rest("POST", "/ticket-model", {
            ticketId: ticket.id,
            modelEndpoint: { url: "https://files.example/models/bracket.stl" },
            technologyId: "fdm",
            materialId: material.id,
            quantity: 4
          }),
          "part"
        )
        yield* patch("ticketModel", appId, part.id, { unitPrice: 12.5, totalPrice: 50 })
        return { ticket, part }
      })
      const partArgs = (ticketId: string) => ({
        ticketId,
        modelEndpoint: { url: "https://files.example/models/bracket.stl" },
        technologyId: "fdm",
        materialId: material.id,
        quantity: 2
      })
      return { appId, legacy, material, modern, partArgs, pricedTicket, project, raw, rest }
    })

    it.effect("results carry each record's REST ETag: one record's io.mfg/etag, a list's io.mfg/etags by id", () =>
      Effect.gen(function*() {
        const { modern, pricedTicket, raw, rest } = yield* setup
        const { part, ticket } = yield* pricedTicket
        const quote = yield* raw("create_ticket_quote", { ticketId: ticket.id })
        const restTag = (path: string) => Effect.map(rest("GET", path), (reply) => reply.headers.get("etag"))
        assert.strictEqual(quote._meta?.[ETAG], yield* restTag(`/ticket-quote/${quote.structuredContent.id}`))
        const parts = yield* raw("list_parts", { ticketId: [ticket.id] })
        assert.deepStrictEqual(parts._meta?.[ETAGS], { [part.id]: yield* restTag(`/ticket-model/${part.id}`) })
        // A ticket has no GET /ticket/{id}: its tag is its lookup's, as If-Match on PUT /ticket/{id}/send-to-production compares it.
        const found = yield* raw("lookup_ticket", { identifier: ticket.number })
        assert.strictEqual(found._meta?.[ETAG], yield* restTag(`/ticket/lookup?identifier=${ticket.id}`))
        // The official client hands the same _meta to its caller.
        const agent = yield* modern()
        const listed = yield* Effect.promise(() => agent.callTool({ name: "list_ticket_quotes", arguments: { ticketId: [ticket.id] } }))
        assert.deepStrictEqual(listed._meta?.[ETAGS], { [quote.structuredContent.id]: quote._meta?.[ETAG] })
        yield* Effect.promise(() => agent.close())
      }))

    it.effect("ifMatch: a stale acceptance is refused (412, the current etag) and erases nothing; read again, it goes through", () =>
      Effect.gen(function*() {
        const { modern, pricedTicket, raw, rest } = yield* setup
        const { ticket } = yield* pricedTicket
        const agent = yield* modern()
        const created = (yield* Effect.promise(() => agent.callTool({ name: "create_ticket_quote", arguments: { ticketId: ticket.id } }))) as ToolResult
        const quote = created.structuredContent
        const staleTag = created._meta?.[ETAG]
        assert.isString(staleTag)

        // Another writer changes the notes and the validity over REST, If-Match and all.
        const validUntil = new Date(Date.now() + 60 * 24 * 3600 * 1000).toISOString()
        const edited = yield* rest("PUT", `/ticket-quote/${quote.id}`, { ...quote, notes: "Valid with drawing rev C", validUntil }, {
          "if-match": staleTag
        })
        assert.strictEqual(edited.status, 200, edited.text)

        // The agent accepts its stale copy: refused, with the current tag, and nothing changes.
        const refused = (yield* Effect.promise(() =>
          agent.callTool({ name: "update_ticket_quote", arguments: { ...quote, state: "accepted", ifMatch: staleTag } })
        )) as ToolResult
        assert.isTrue(refused.isError)
        assert.deepInclude(errorOf(refused), { code: 412, type: "PreconditionFailed" })
        assert.include(errorOf(refused).message, quote.id)
        assert.strictEqual(refused._meta?.[ETAG], edited.headers.get("etag"))
        const unchanged = ok(yield* rest("GET", `/ticket-quote/${quote.id}`), "quote")
        assert.deepInclude(unchanged, { state: "sent", notes: "Valid with drawing rev C" })
        assert.strictEqual(Date.parse(unchanged.validUntil), Date.parse(validUntil))

        // Read again, accepted with the new tag: the other writer's notes and validity stay.
        const [fresh] = valueOf(yield* raw("list_ticket_quotes", { ticketId: [ticket.id] }))
        const freshTag = (yield* raw("list_ticket_quotes", { ids: [quote.id] }))._meta?.[ETAGS][quote.id]
        const accepted = (yield* Effect.promise(() =>
          agent.callTool({ name: "update_ticket_quote", arguments: { ...fresh, state: "accepted", ifMatch: freshTag } })
        )) as ToolResult
        assert.notStrictEqual(accepted.isError, true, JSON.stringify(accepted.content))
        assert.deepInclude(accepted.structuredContent, { state: "accepted", notes: "Valid with drawing rev C" })
        assert.strictEqual(accepted._meta?.[ETAG], (yield* rest("GET", `/ticket-quote/${quote.id}`)).headers.get("etag"))
        yield* Effect.promise(() =>
          agent.close()
        )
      }))

    it.effect("ifMatch through the 2025-11-25 client and raw HTTP: update_part and send_ticket_to_production, `*`, invalid values", () =>
      Effect.gen(function*() {
        const { appId, legacy, partArgs, pricedTicket, raw, rest } = yield* setup
        const { part, ticket } = yield* pricedTicket
        const agent = yield* legacy()
        const [listed] = valueOf((yield* Effect.promise(() => agent.callTool({ name: "list_parts", arguments: { ids: [part.id] } }))) as ToolResult)
        const tag = ((yield* raw("list_parts", { ids: [part.id] }))._meta?.[ETAGS] as Json)[part.id]
        const renamed = (yield* Effect.promise(() =>
          agent.callTool({ name: "update_part", arguments: { ...listed, name: "Renamed", ifMatch: tag } })
        )) as ToolResult
        assert.notStrictEqual(renamed.isError, true, JSON.stringify(renamed.content))
        // The same tag again: the part changed since, so the second write is refused and the name stays.
        const stale = (yield* Effect.promise(() =>
          agent.callTool({ name: "update_part", arguments: { ...listed, name: "Lost update", ifMatch: tag } })
        )) as ToolResult
        assert.deepInclude(errorOf(stale), { code: 412, type: "PreconditionFailed" })
        assert.strictEqual(ok(yield* rest("GET", `/ticket-model/${part.id}`), "part").name, "Renamed")
        // `*` names any current version, as If-Match does.
        assert.notStrictEqual((yield* raw("update_part", { ...listed, name: "Any", ifMatch: "*" })).isError, true)

        // An ifMatch that is no etag names the argument; a tool that changes no one record takes none.
        const invalid = yield* raw("update_part", { ...listed, ifMatch: "no quotes" })
        assert.deepInclude(errorOf(invalid), { code: 400 })
        assert.deepStrictEqual(errorOf(invalid).errors.map((problem: Json) => problem.path), ["ifMatch"])
        const unknown = yield* raw("create_part", { ...partArgs(ticket.id), ifMatch: tag })
        assert.deepStrictEqual(errorOf(unknown).errors.map((problem: Json) => problem.path), ["ifMatch"])

        // send_ticket_to_production compares the ticket as its lookup reads it (the part, written again, is priced again first).
        yield* patch("ticketModel", appId, part.id, { unitPrice: 12.5, totalPrice: 50 })
        const created = yield* raw("create_ticket_quote", { ticketId: ticket.id })
        const quote = valueOf(created)
        const ticketTag = (yield* raw("lookup_ticket", { identifier: ticket.id }))._meta?.[ETAG]
        // The shortest correct acceptance, as the tool's description shows it: the writable fields as read, state and etag;
        // none of the engine's fields (the quote's and the lines' totals, its number, rate, PDF path, timestamps).
        const { tools } = yield* Effect.promise(() => agent.listTools())
        const description = tools.find((tool) => tool.name === "update_ticket_quote")!.description!
        assert.include(description, "\"state\": \"accepted\"")
        assert.include(description, "ifMatch")
        const shortest = {
          id: quote.id,
          ticketId: quote.ticketId,
          currencyId: quote.currencyId,
          validUntil: quote.validUntil,
          lines: quote.lines.map(({ description, quantity, ticketModelId, unitPrice }: Json) => ({ description, quantity, ticketModelId, unitPrice })),
          state: "accepted",
          ifMatch: created._meta?.[ETAG]
        }
        const accepted = (yield* Effect.promise(() => agent.callTool({ name: "update_ticket_quote", arguments: shortest }))) as ToolResult
        assert.notStrictEqual(accepted.isError, true, JSON.stringify(accepted.content))
        assert.deepInclude(valueOf(accepted), { state: "accepted", total: quote.total })
        const staleSend = yield* raw("send_ticket_to_production", { id: ticket.id, ifMatch: ticketTag })
        assert.deepInclude(errorOf(staleSend), { code: 412, type: "PreconditionFailed" })
        assert.strictEqual(ok(yield* rest("GET", `/ticket/lookup?identifier=${ticket.id}`), "ticket").state, "accepted")
        const freshTag = (yield* raw("lookup_ticket", { identifier: ticket.id }))._meta?.[ETAG]
        const sent = yield* raw("send_ticket_to_production", { id: ticket.id, ifMatch: freshTag })
        assert.notStrictEqual(sent.isError, true, JSON.stringify(sent.content))
        yield* Effect.promise(() => agent.close())
      }))

    it.effect("Idempotency-Key: a retried create_part and create_ticket_quote make one record, the first result answered again", () =>
      Effect.gen(function*() {
        const { legacy, modern, partArgs, pricedTicket, raw, rest } = yield* setup
        const { ticket } = yield* pricedTicket
        const partsOf = Effect.map(rest("GET", `/ticket-model?ticketId=${ticket.id}`), (reply) => ok(reply, "parts") as Array<Json>)
        const before = (yield* partsOf).length

        // Raw HTTP: the same key, another JSON-RPC id (a retry), the same arguments.
        const key = { "idempotency-key": `part-${Math.random().toString(36).slice(2)}` }
        const first = yield* raw("create_part", partArgs(ticket.id), key, 1)
        const retry = yield* raw("create_part", partArgs(ticket.id), key, "retry-2")
        assert.notStrictEqual(first.isError, true, JSON.stringify(first.content))
        assert.strictEqual(retry.structuredContent.id, first.structuredContent.id)
        assert.deepStrictEqual(retry.content, first.content)
        assert.isTrue(retry._meta?.[REPLAYED])
        assert.notProperty(first._meta, REPLAYED)
        assert.strictEqual((yield* partsOf).length, before + 1)
        // The same key with other arguments is another request: refused, nothing made.
        const reused = yield* raw("create_part", { ...partArgs(ticket.id), quantity: 3 }, key)
        assert.deepInclude(errorOf(reused), { code: 422, type: "IdempotencyKeyReused" })
        // ... and so is the same key on the REST operation: a tool call and a REST call never share an answer.
        assert.strictEqual((yield* rest("POST", "/ticket-model", partArgs(ticket.id), key)).status, 422)
        assert.strictEqual((yield* partsOf).length, before + 1)
        const invalid = yield* raw("create_part", partArgs(ticket.id), { "idempotency-key": "two words" })
        assert.deepInclude(errorOf(invalid), { code: 400 })
        assert.include(errorOf(invalid).message, "Idempotency-Key")

        // The official clients, each retrying with a client of its own and the same key (a ticket whose parts are all priced).
        const { ticket: quoted } = yield* pricedTicket
        const quoteKey = { "idempotency-key": `quote-${Math.random().toString(36).slice(2)}` }
        const quotes: Array<ToolResult> = []
        const quoteOnce = (agent: { callTool: (request: { name: string; arguments: Json }) => Promise<unknown>; close: () => Promise<void> }) =>
          Effect.promise(async () => {
            const result = await agent.callTool({ name: "create_ticket_quote", arguments: { ticketId: quoted.id } }) as ToolResult
            await agent.close()
            return result
          })
        quotes.push(yield* quoteOnce(yield* modern(quoteKey)))
        quotes.push(yield* quoteOnce(yield* legacy(quoteKey)))
        quotes.push(yield* quoteOnce(yield* modern(quoteKey)))
        const ids = quotes.map((result) => valueOf(result).id)
        assert.deepStrictEqual(new Set(ids).size, 1, JSON.stringify(ids))
        assert.deepStrictEqual(quotes.map((result) => result._meta?.[REPLAYED] === true), [false, true, true])
        const stored = ok(yield* rest("GET", `/ticket-quote?ticketId=${quoted.id}`), "quotes") as Array<Json>
        assert.lengthOf(stored, 1)
        // Events are named as the first call wrote them.
        assert.deepStrictEqual(quotes[1]!._meta?.["io.mfg/events"], quotes[0]!._meta?.["io.mfg/events"])

        // A tool without keys (a whole-record replace, a read) ignores the header, as REST does.
        const read = yield* raw("list_parts", { ticketId: [ticket.id] }, quoteKey)
        assert.notStrictEqual(read.isError, true)
        assert.notProperty(read._meta, REPLAYED)
      }))
  })
}
