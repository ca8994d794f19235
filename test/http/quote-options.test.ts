/**
 * Quotes offering a part at several quantities, the buyer choosing one at
 * acceptance (issue 22), through HTTP on a part made from a real model file
 * (a 20 mm cube, docs/pricing.md's worked example): a line's options are the
 * part's price breaks at those quantities (converted when the quote is in
 * another currency), its own quantity among them; accepting with another of
 * them changes the line, the quote's total and the part (quantity and price)
 * without superseding the quote, and a retried acceptance answers the same
 * quote; a quantity not offered, a choice outside an acceptance and bad
 * requests are refused naming the field; a quote without options is as
 * before; MCP's quote tools take the same arguments.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { backends } from "../support/backends.ts"
import { cubeApp, cubeAppLayer } from "../support/cubeApp.ts"
import { ok } from "../support/http.ts"
import type { Reply } from "../support/TestApp.ts"

interface Option {
  readonly quantity: number
  readonly unitPrice: number
  readonly total: number
  readonly leadTimeDays: number | null
}
interface Line {
  readonly description: string
  readonly ticketModelId?: string
  readonly itemId?: string
  readonly quantity: number
  readonly unitPrice: number
  readonly total: number
  readonly options?: ReadonlyArray<Option>
}
interface Quote {
  readonly id: string
  readonly number: string
  readonly ticketId: string
  readonly currencyId: string
  readonly exchangeRate: number
  readonly state: string
  readonly validUntil: string
  readonly lines: ReadonlyArray<Line>
  readonly total: number
  readonly notes?: string
}

const cents = (amount: number) => Math.round(amount * 100)

/** An engine refusal: its status, its source, and each of `names` in its message. */
const refused = (reply: Reply, status: number, ...names: ReadonlyArray<string>) => {
  assert.strictEqual(reply.status, status, reply.text)
  assert.strictEqual(reply.headers.get("x-error-source"), "engine", reply.text)
  for (const name of names) assert.include(reply.json().message, name)
}

/** A 400 of the request's schema naming `field` (the engine never saw it). */
const badRequest = (reply: Reply, field: string) => {
  assert.strictEqual(reply.status, 400, reply.text)
  assert.include(reply.json().message, `"${field}`)
  assert.isNull(reply.headers.get("x-error-source"))
}

/** The body of a PUT of the quote as read, `state` and `lines` as given: what a client sends to accept it. */
const bodyOf = (quote: Quote, state: string, lines: ReadonlyArray<Line> = quote.lines) => ({
  ticketId: quote.ticketId,
  currencyId: quote.currencyId,
  validUntil: quote.validUntil,
  state,
  lines
})

/** The lines with line `index` at `quantity`, everything else as read. */
const choosing = (quote: Quote, index: number, quantity: number) => quote.lines.map((line, at) => at === index ? { ...line, quantity } : line)

/** A 2026-07-28 MCP tools/call as raw HTTP. */
const toolCall = (name: string, args: Record<string, unknown>) => ({
  body: {
    jsonrpc: "2.0",
    id: 1,
    method: "tools/call",
    params: { name, arguments: args, _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {} } }
  },
  headers: { accept: "application/json, text/event-stream", "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": name }
})

/** The JSON-RPC message of an MCP reply, plain JSON or the last SSE event. */
const rpcMessage = (reply: Reply) => {
  const text = reply.text.trim()
  if (!text.startsWith("{")) {
    const data = text.split("\n").filter((line) => line.startsWith("data:")).map((line) => line.slice(5).trim()).filter((line) => line.length > 0)
    return JSON.parse(data.at(-1)!)
  }
  return JSON.parse(text)
}

for (const backend of backends) {
  layer(cubeAppLayer(backend), { timeout: 120_000, excludeTestServices: true })(
    `Quotes with quantity options over HTTP (${backend})`,
    (it) => {
      /** A fresh app (cubeApp.ts), its part's price breaks, and its ticket's quotes. */
      const newApp = (prefix: string) =>
        Effect.map(cubeApp(prefix), (app) => ({
          ...app,
          cube: app.part,
          breaks: (id: string, quantities: ReadonlyArray<number>) =>
            Effect.map(app.call("POST", `/ticket-model/${id}/price-breaks`, { quantities }), (reply) => ok(reply, "breaks").breaks as Array<any>),
          quote: (body: unknown) => Effect.map(app.call("POST", `/ticket/${app.ticket.id}/quote`, body), (reply) => ok(reply, "quote") as Quote),
          put: (current: Quote, body: unknown) => app.call("PUT", `/ticket-quote/${current.id}`, body)
        }))

      it.effect("a line's options are the part's price breaks at its quantities, its own added, ascending; the line and total as before", () =>
        Effect.gen(function*() {
          const { breaks, call, cube, machines, quote } = yield* newApp("options-eur")
          yield* machines(1)
          const optioned = yield* cube(10)
          const plain = yield* cube(5)
          ok(yield* call("POST", "/item", { ticketId: optioned.ticketId, name: "Setup fee", quantity: 1, unitPrice: 25 }), "item")
          const made = yield* quote({ quantityOptions: [{ ticketModelId: optioned.id, quantities: [1000, 1, 100] }] })
          const [line, plainLine, itemLine] = made.lines
          assert.deepStrictEqual(
            [line!.ticketModelId, line!.quantity, line!.unitPrice, line!.total],
            [optioned.id, 10, optioned.unitPrice, optioned.totalPrice],
            "the line prices the part's own quantity"
          )
          const expected = yield* breaks(optioned.id, [1, 10, 100, 1000])
          assert.deepStrictEqual(
            line!.options,
            expected.map((b) => ({ quantity: b.quantity, unitPrice: b.unitPrice, total: b.totalPrice, leadTimeDays: b.leadTimeDays }))
          )
          // docs/pricing.md's figures, and a lead time at each (a machine of the technology).
          assert.deepStrictEqual(line!.options!.map((o) => [o.quantity, o.unitPrice, o.total]), [[1, 6.93, 6.93], [10, 1.83, 18.3], [100, 1.32, 132], [
            1000,
            1.27,
            1270
          ]])
          // docs/pricing.md's example: one printer around the clock, nothing queued.
          assert.deepStrictEqual(line!.options!.map((o) => o.leadTimeDays), [3, 3, 4, 14])
          // Lines not asked for have no options at all.
          assert.notProperty(plainLine, "options")
          assert.notProperty(itemLine, "options")
          assert.strictEqual(cents(made.total), cents(line!.total) + cents(plainLine!.total) + cents(itemLine!.total))
          assert.deepStrictEqual(ok(yield* call("GET", `/ticket-quote/${made.id}`), "read"), made)
          assert.strictEqual(plain.quantity, 5)
        }))

      it.effect("in another currency each option is converted at the quote's rate, rounded as the line's unit price; no machine, no lead time", () =>
        Effect.gen(function*() {
          const { breaks, cube, quote } = yield* newApp("options-usd")
          const part = yield* cube(10)
          const rate = 1.1
          const made = yield* quote({ currencyId: "USD", exchangeRate: rate, quantityOptions: [{ ticketModelId: part.id, quantities: [1, 100, 1000] }] })
          assert.deepStrictEqual([made.currencyId, made.exchangeRate], ["USD", rate])
          const expected = yield* breaks(part.id, [1, 10, 100, 1000])
          const line = made.lines[0]!
          assert.deepStrictEqual(
            line.options,
            expected.map((b) => {
              // Half up to the cent, as the decimal reads.
              const unitPrice = Math.round(Number((b.unitPrice * rate * 100).toPrecision(15))) / 100
              return { quantity: b.quantity, unitPrice, total: Math.round(unitPrice * 100) * b.quantity / 100, leadTimeDays: null }
            })
          )
          // docs/pricing.md's example in USD.
          assert.deepStrictEqual(line.options!.map((o) => [o.quantity, o.unitPrice, o.total]), [[1, 7.62, 7.62], [10, 2.01, 20.1], [100, 1.45, 145], [
            1000,
            1.4,
            1400
          ]])
          assert.strictEqual(line.unitPrice, line.options!.find((o) => o.quantity === 10)!.unitPrice)
          assert.strictEqual(made.total, line.total)
        }))

      it.effect("accepting with another offered quantity: the line, the total and the part take it; the ticket is accepted; a retry answers the same", () =>
        Effect.gen(function*() {
          const { breaks, call, cube, put, quote, ticket } = yield* newApp("options-accept")
          const part = yield* cube(10)
          ok(yield* call("POST", "/item", { ticketId: ticket.id, name: "Setup fee", quantity: 1, unitPrice: 25 }), "item")
          const made = yield* quote({ quantityOptions: [{ ticketModelId: part.id, quantities: [1, 100] }] })
          const hundred = made.lines[0]!.options!.find((o) => o.quantity === 100)!

          const body = bodyOf(made, "accepted", choosing(made, 0, 100))
          const reply = yield* put(made, body)
          const accepted = ok(reply, "accept at 100") as Quote
          assert.strictEqual(accepted.state, "accepted")
          const line = accepted.lines[0]!
          assert.deepStrictEqual([line.quantity, line.unitPrice, line.total], [100, hundred.unitPrice, hundred.total])
          assert.deepStrictEqual(line.options, made.lines[0]!.options, "the options stay as offered")
          assert.strictEqual(cents(accepted.total), cents(hundred.total) + cents(25))
          assert.strictEqual(ok(yield* call("GET", `/ticket/lookup?identifier=${ticket.id}`), "ticket").state, "accepted")

          // The part is at the chosen quantity, priced at it: its price breaks' figures.
          const after = ok(yield* call("GET", `/ticket-model/${part.id}`), "part after")
          const [atHundred] = yield* breaks(part.id, [100])
          assert.deepStrictEqual(
            [after.quantity, after.unitPrice, after.totalPrice, after.productionTimes],
            [100, atHundred.unitPrice, atHundred.totalPrice, atHundred.productionTimes]
          )
          // One transaction: the part repriced, the quote accepted (not superseded), the ticket accepted.
          const events = ok(yield* call("GET", `/event?requestId=${reply.headers.get("x-request-id")}`), "events") as Array<{ type: string; data: any }>
          assert.deepStrictEqual(events.map((event) => event.type), ["ticket_model.priced", "ticket_quote.accepted", "ticket.accepted"])
          assert.strictEqual(events[0]!.data.object.quantity, 100)
          const quotes = ok(yield* call("GET", `/ticket-quote?ticketId=${ticket.id}`), "quotes") as Array<Quote>
          assert.deepStrictEqual(quotes.map((q) => [q.id, q.state]), [[made.id, "accepted"]])

          // The same acceptance again, or the quote as it now reads, answers the quote unchanged and writes nothing.
          for (const again of [body, bodyOf(accepted, "accepted")]) {
            const retry = yield* put(made, again)
            assert.deepStrictEqual(ok(retry, "retry"), accepted)
            assert.deepStrictEqual(ok(yield* call("GET", `/event?requestId=${retry.headers.get("x-request-id")}`), "no events"), [])
          }
          assert.deepStrictEqual(ok(yield* call("GET", `/ticket-model/${part.id}`), "part unchanged"), after)
          // Another quantity is no retry: the quote is final.
          refused(yield* put(made, bodyOf(made, "accepted", choosing(made, 0, 1))), 409, `quote ${made.number} is accepted`)
        }))

      it.effect("accepting at the line's own quantity changes no part and writes no part event", () =>
        Effect.gen(function*() {
          const { call, cube, put, quote } = yield* newApp("options-own")
          const part = yield* cube(10)
          const made = yield* quote({ quantityOptions: [{ ticketModelId: part.id, quantities: [1, 100] }] })
          const reply = yield* put(made, bodyOf(made, "accepted"))
          const accepted = ok(reply, "accept as quoted") as Quote
          assert.deepStrictEqual(accepted.lines, made.lines)
          assert.strictEqual(accepted.total, made.total)
          assert.deepStrictEqual(ok(yield* call("GET", `/ticket-model/${part.id}`), "part"), part)
          const events = ok(yield* call("GET", `/event?requestId=${reply.headers.get("x-request-id")}`), "events") as Array<{ type: string }>
          assert.deepStrictEqual(events.map((event) => event.type), ["ticket_quote.accepted", "ticket.accepted"])
        }))

      it.effect("refusals name the field: a quantity not offered, a choice without accepting, a foreign unit price, a line without options", () =>
        Effect.gen(function*() {
          const { call, cube, put, quote, ticket } = yield* newApp("options-refused")
          const part = yield* cube(10)
          const plain = yield* cube(3)
          const made = yield* quote({ quantityOptions: [{ ticketModelId: part.id, quantities: [1, 100] }] })

          refused(yield* put(made, bodyOf(made, "accepted", choosing(made, 0, 50))), 422, "lines.0.quantity", "50", "1, 10, 100")
          refused(yield* put(made, bodyOf(made, "sent", choosing(made, 0, 100))), 422, "lines.0.quantity", "by accepting the quote")
          refused(yield* put(made, bodyOf(made, "rejected", choosing(made, 0, 100))), 422, "lines.0.quantity")
          const foreignPrice = made.lines.map((line, at) => at === 0 ? { ...line, quantity: 100, unitPrice: 0.5 } : line)
          refused(yield* put(made, bodyOf(made, "accepted", foreignPrice)), 422, "lines.0.unitPrice", "0.5")
          // A line without options keeps its quantity, as before.
          refused(yield* put(made, bodyOf(made, "accepted", choosing(made, 1, 30))), 422, "lines.1.quantity", "30 is not 3")
          // Nothing changed: the quote is sent, the ticket quoted, the parts as they were.
          assert.deepStrictEqual(ok(yield* call("GET", `/ticket-quote/${made.id}`), "quote"), made)
          assert.strictEqual(ok(yield* call("GET", `/ticket/lookup?identifier=${ticket.id}`), "ticket").state, "quoted")
          assert.strictEqual(ok(yield* call("GET", `/ticket-model/${part.id}`), "part").quantity, 10)
          assert.strictEqual(ok(yield* call("GET", `/ticket-model/${plain.id}`), "plain").quantity, 3)

          // The option's own price sent with its quantity is as good as the line's.
          const hundred = made.lines[0]!.options!.find((o) => o.quantity === 100)!
          const withPrice = made.lines.map((line, at) => at === 0 ? { ...line, quantity: 100, unitPrice: hundred.unitPrice } : line)
          const accepted = ok(yield* put(made, bodyOf(made, "accepted", withPrice)), "accept with the option's price") as Quote
          assert.deepStrictEqual([accepted.lines[0]!.quantity, accepted.lines[0]!.unitPrice], [100, hundred.unitPrice])
        }))

      it.effect("the request's quantityOptions: a part of another ticket or named twice is a 422, bad quantities a 400, naming the field", () =>
        Effect.gen(function*() {
          const { call, cube, partBody, project, ticket } = yield* newApp("options-request")
          const part = yield* cube(10)
          const elsewhere = ok(yield* call("POST", "/ticket", { projectId: project.id, name: "Other" }), "other ticket")
          const foreign = ok(yield* call("POST", "/ticket-model", partBody(1, { ticketId: elsewhere.id })), "part of the other ticket")
          const path = `/ticket/${ticket.id}/quote`
          refused(
            yield* call("POST", path, { quantityOptions: [{ ticketModelId: foreign.id, quantities: [1] }] }),
            422,
            "quantityOptions.0.ticketModelId",
            foreign.id
          )
          refused(
            yield* call("POST", path, { quantityOptions: [{ ticketModelId: part.id, quantities: [1] }, { ticketModelId: part.id, quantities: [5] }] }),
            422,
            "quantityOptions.1.ticketModelId",
            "quantityOptions.0"
          )
          for (const quantities of [[], [0], [10, 10], Array.from({ length: 21 }, (_, i) => i + 1), [1.5], [1_000_001]]) {
            badRequest(yield* call("POST", path, { quantityOptions: [{ ticketModelId: part.id, quantities }] }), "quantityOptions.0.quantities")
          }
          badRequest(yield* call("POST", path, { quantityOptions: [{ quantities: [1] }] }), "quantityOptions.0.ticketModelId")
          // None of them made a quote; twenty quantities and the part's own make 21 options.
          assert.deepStrictEqual(ok(yield* call("GET", `/ticket-quote?ticketId=${ticket.id}`), "no quotes"), [])
          const twenty = Array.from({ length: 20 }, (_, i) => (i + 1) * 100)
          const made = ok(yield* call("POST", path, { quantityOptions: [{ ticketModelId: part.id, quantities: twenty }] }), "twenty") as Quote
          assert.deepStrictEqual(made.lines[0]!.options!.map((o) => o.quantity), [10, ...twenty])
        }))

      it.effect("a sent quote's revision may override the line's price: its option follows; a quote without options is as before", () =>
        Effect.gen(function*() {
          const { call, cube, put, quote, ticket } = yield* newApp("options-revise")
          const part = yield* cube(10)
          const made = yield* quote({ quantityOptions: [{ ticketModelId: part.id, quantities: [100] }] })
          // The options are the engine's to set: others sent are refused (422 naming them), never silently replaced.
          refused(
            yield* put(made, bodyOf(made, "sent", made.lines.map((line) => ({ ...line, unitPrice: 1.5, options: [] })))),
            422,
            "lines.0.options: sent []"
          )
          const revisedLines = made.lines.map((line) => ({ ...line, unitPrice: 1.5 }))
          const revised = ok(yield* put(made, bodyOf(made, "sent", revisedLines)), "override") as Quote
          // The options as read are taken back: the one at the line's quantity moves to its new price.
          assert.deepStrictEqual(revised.lines[0]!.options, made.lines[0]!.options!.map((o) => o.quantity === 10 ? { ...o, unitPrice: 1.5, total: 15 } : o))
          assert.deepStrictEqual([revised.lines[0]!.total, revised.total], [15, 15])

          // A quote of the same ticket without quantityOptions has no options, and accepts as it always did.
          const again = yield* quote({})
          assert.notProperty(again.lines[0]!, "options")
          refused(yield* put(again, bodyOf(again, "accepted", choosing(again, 0, 100))), 422, "lines.0.quantity", "100 is not 10")
          const accepted = ok(yield* put(again, bodyOf(again, "accepted")), "accept") as Quote
          assert.deepStrictEqual([accepted.state, accepted.lines, accepted.total], ["accepted", again.lines, again.total])
          assert.strictEqual(ok(yield* call("GET", `/ticket/lookup?identifier=${ticket.id}`), "ticket").state, "accepted")
        }))

      it.effect("MCP: create_ticket_quote takes quantityOptions, update_ticket_quote accepts a chosen quantity", () =>
        Effect.gen(function*() {
          const { call, cube, ticket } = yield* newApp("options-mcp")
          const part = yield* cube(10)
          const mcp = (name: string, args: Record<string, unknown>) =>
            Effect.map(call.withHeaders("POST", "/mcp", toolCall(name, args).headers, toolCall(name, args).body), (reply) => {
              assert.strictEqual(reply.status, 200, reply.text)
              const result = rpcMessage(reply).result
              assert.isFalse(result.isError, JSON.stringify(result))
              return result.structuredContent as Quote
            })
          const made = yield* mcp("create_ticket_quote", { ticketId: ticket.id, quantityOptions: [{ ticketModelId: part.id, quantities: [1, 100] }] })
          assert.deepStrictEqual(made.lines[0]!.options!.map((o) => o.quantity), [1, 10, 100])
          const accepted = yield* mcp("update_ticket_quote", { ...made, state: "accepted", lines: choosing(made, 0, 1) })
          assert.deepStrictEqual([accepted.state, accepted.lines[0]!.quantity, accepted.total], ["accepted", 1, made.lines[0]!.options![0]!.total])
          assert.strictEqual(ok(yield* call("GET", `/ticket-model/${part.id}`), "part").quantity, 1)
        }))
    }
  )
}
