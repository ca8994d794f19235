/**
 * A replacement of a quote (`PUT /ticket-quote/{id}`, MCP
 * `update_ticket_quote`) keeps its whole-record contract, and:
 * - the shortest correct acceptance is the quote as read with `state:
 *   "accepted"`, or its writable fields with the lines' totals left out;
 * - the engine's fields it carries back (`number`, `exchangeRate`, `total`,
 *   a line's `total`, `manufacturability`, `options`) must be the engine's:
 *   another value is a 422 naming each, and the quote stays as it was;
 * - `validUntil` is set only to the future, never before the quote was
 *   made (422 naming it); an acceptance judges expiry against the stored
 *   quote, and an expired quote is a 409 naming its state.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { seedDemoData } from "../../src/engine/seed.ts"
import { backends } from "../support/backends.ts"
import { ok, patch } from "../support/http.ts"
import { mcpToolCall } from "../support/mcp.ts"
import { type Reply, TestApp, TestClient } from "../support/TestApp.ts"

const refused = (reply: Reply, status: number, type: string, ...includes: ReadonlyArray<string>) => {
  assert.strictEqual(reply.status, status, reply.text)
  const body = reply.json()
  assert.deepStrictEqual([body.code, body.type], [status, type], reply.text)
  for (const text of includes) assert.include(body.message, text)
}

/** The JSON-RPC message of an MCP answer, a JSON body or the last event of a stream. */
const rpcMessage = (text: string) => {
  const trimmed = text.trim()
  if (trimmed.startsWith("{")) return JSON.parse(trimmed)
  const data = trimmed.split("\n").filter((line) => line.startsWith("data:")).map((line) => line.slice(5).trim()).filter((line) => line !== "")
  return JSON.parse(data[data.length - 1]!)
}

/** The writable fields of a quote as read: what a hand-written replacement sends. */
const writable = (quote: any) => ({
  ticketId: quote.ticketId,
  currencyId: quote.currencyId,
  state: quote.state,
  validUntil: quote.validUntil,
  lines: quote.lines,
  ...(quote.notes === undefined ? {} : { notes: quote.notes })
})

for (const backend of backends) {
  layer(TestApp(backend), { timeout: 60_000, excludeTestServices: true })(`Quote replacements (${backend})`, (it) => {
    /** A seeded app; `quoted()` makes a ticket of two demo bearing blocks and a fee, and quotes it. */
    const setup = Effect.gen(function*() {
      const client = yield* TestClient
      const appId = `quote-replacement-${Math.random().toString(36).slice(2)}`
      yield* seedDemoData(appId)
      const { value } = yield* client.createSecret(appId)
      const call = (method: string, path: string, body?: unknown) => client.call(method, `/v1${path}`, { secret: value, body })
      const tool = (name: string, args: Record<string, unknown>) =>
        Effect.promise(async () => rpcMessage(await (await mcpToolCall(client.baseUrl, value, name, args)).text()))
      const [customer] = ok(yield* call("GET", "/customer?externalReference=demo-acme"), "customer") as Array<any>
      const project = ok(yield* call("POST", "/project", { customerId: customer.id, name: "Spares" }), "project")
      const quoted = (request: (part: any) => Record<string, unknown> = () => ({})) =>
        Effect.gen(function*() {
          const ticket = ok(yield* call("POST", "/ticket", { projectId: project.id, name: "Bearing blocks" }), "ticket")
          const [part] = ok(
            yield* call("POST", "/ticket-model/from-catalogue", {
              ticketId: ticket.id,
              parts: [{ catalogueModelConfigurationId: "demo-bearing-block-fdm", quantity: 2 }]
            }),
            "part"
          ) as Array<any>
          ok(yield* call("POST", "/item", { ticketId: ticket.id, name: "Packaging", quantity: 1, unitPrice: 5 }), "item")
          const quote = ok(yield* call("POST", `/ticket/${ticket.id}/quote`, request(part)), "quote")
          return { part, quote, ticket }
        })
      return { appId, call, quoted, tool }
    })

    it.effect("the shortest correct acceptance: the quote as read with state accepted, or its writable fields without the totals", () =>
      Effect.gen(function*() {
        const { call, quoted } = yield* setup
        const first = (yield* quoted()).quote
        const accepted = ok(yield* call("PUT", `/ticket-quote/${first.id}`, { ...first, state: "accepted" }), "as read")
        assert.deepStrictEqual([accepted.state, accepted.total, accepted.lines], ["accepted", first.total, first.lines])

        const second = (yield* quoted()).quote
        const { lines, ...rest } = writable(second)
        const withoutTotals = lines.map(({ total: _total, ...line }: any) => line)
        const alsoAccepted = ok(yield* call("PUT", `/ticket-quote/${second.id}`, { ...rest, lines: withoutTotals, state: "accepted" }), "no totals")
        assert.deepStrictEqual([alsoAccepted.state, alsoAccepted.total, alsoAccepted.lines], ["accepted", second.total, second.lines])
      }))

    it.effect("an engine's field other than the engine's is a 422 naming each (REST and MCP), the quote unchanged", () =>
      Effect.gen(function*() {
        const { call, quoted, tool } = yield* setup
        const { part, quote } = yield* quoted((part) => ({ quantityOptions: [{ ticketModelId: part.id, quantities: [2, 10] }] }))
        const put = (body: unknown) => call("PUT", `/ticket-quote/${quote.id}`, body)
        const accepting = { ...quote, state: "accepted" }
        const [partLine, feeLine] = quote.lines
        refused(yield* put({ ...accepting, total: 1 }), 422, "ValidationError", `total: sent 1, the engine's ${quote.total}`)
        refused(yield* put({ ...accepting, number: "Q-999999" }), 422, "ValidationError", `number: sent Q-999999, the engine's ${quote.number}`)
        refused(yield* put({ ...accepting, exchangeRate: 2 }), 422, "ValidationError", "exchangeRate: sent 2, the engine's 1")
        refused(
          yield* put({ ...accepting, lines: [{ ...partLine, total: 0.01 }, feeLine] }),
          422,
          "ValidationError",
          `lines.0.total: sent 0.01, the engine's ${partLine.total}`
        )
        refused(
          yield* put({ ...accepting, lines: [{ ...partLine, manufacturability: "blocked" }, feeLine] }),
          422,
          "ValidationError",
          `lines.0.manufacturability: sent blocked, the engine's ${partLine.manufacturability}`
        )
        refused(
          yield* put({ ...accepting, lines: [{ ...partLine, options: partLine.options.slice(1) }, feeLine] }),
          422,
          "ValidationError",
          "lines.0.options: sent [{"
        )
        refused(
          yield* put({ ...accepting, lines: [partLine, { ...feeLine, options: [{ quantity: 1, unitPrice: 1, total: 1, leadTimeDays: null }] }] }),
          422,
          "ValidationError",
          "lines.1.options",
          "the engine's none"
        )
        // Every one at once.
        refused(
          yield* put({ ...accepting, total: 1, lines: [{ ...partLine, total: 0.01 }, feeLine] }),
          422,
          "ValidationError",
          "total: sent 1",
          "lines.0.total: sent 0.01"
        )
        // The same through MCP's update_ticket_quote, the same operation.
        const mcp = yield* tool("update_ticket_quote", { ...accepting, total: 1 })
        assert.isTrue(mcp.result?.isError, JSON.stringify(mcp))
        const error = JSON.parse(mcp.result.content[0].text)
        assert.deepStrictEqual([error.code, error.type], [422, "ValidationError"])
        assert.include(error.message, "total: sent 1")

        const read = ok(yield* call("GET", `/ticket-quote/${quote.id}`), "unchanged")
        assert.deepStrictEqual(read, quote)
        assert.strictEqual(ok(yield* call("GET", `/ticket-model/${part.id}`), "part").quantity, 2)
        ok(yield* put(accepting), "accept")
      }))

    it.effect("validUntil: only to the future, never before the quote was made (422 naming it); extended, it is kept", () =>
      Effect.gen(function*() {
        const { call, quoted } = yield* setup
        const { quote } = yield* quoted()
        const put = (validUntil: string) => call("PUT", `/ticket-quote/${quote.id}`, { ...writable(quote), validUntil })
        // After the quote was made, but gone by now.
        const past = new Date(Date.parse(quote.createdAt) + 1).toISOString()
        refused(yield* put(past), 422, "ValidationError", "validUntil", past, "has passed")
        refused(yield* put("2020-01-01T00:00:00Z"), 422, "ValidationError", "validUntil", `before quote ${quote.number} was made (${quote.createdAt})`)
        assert.deepStrictEqual(ok(yield* call("GET", `/ticket-quote/${quote.id}`), "unchanged"), quote)
        const later = new Date(Date.parse(quote.validUntil) + 86_400_000).toISOString()
        const extended = ok(yield* put(later), "extended")
        assert.deepStrictEqual([extended.validUntil, extended.state], [later, "sent"])
      }))

    it.effect("an acceptance judges expiry against the stored quote: expired, it is a 409 naming the state, whatever validUntil it sends", () =>
      Effect.gen(function*() {
        const { appId, call, quoted } = yield* setup
        const { quote, ticket } = yield* quoted()
        yield* patch("ticketQuote", appId, quote.id, { validUntil: new Date(Date.now() - 1000).toISOString() })
        const future = new Date(Date.now() + 7 * 86_400_000).toISOString()
        refused(
          yield* call("PUT", `/ticket-quote/${quote.id}`, { ...writable(quote), validUntil: future, state: "accepted" }),
          409,
          "Conflict",
          quote.number,
          "is expired"
        )
        const read = ok(yield* call("GET", `/ticket-quote/${quote.id}`), "still expired")
        assert.strictEqual(read.state, "expired")
        assert.strictEqual(ok(yield* call("GET", `/ticket/lookup?identifier=${ticket.id}`), "ticket").state, "quoted")
      }))
  })
}
