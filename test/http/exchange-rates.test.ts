/**
 * An app's own exchange rates (issue 15, rule 6: "currencies carry an
 * exchange rate to the app's base currency, reference data, replaceable by
 * the app"), through HTTP: `PUT /currency/{id}/exchange-rate` sets the app's
 * rate, which GET /currency and GET /currency/{id} answer for that app only;
 * a new quote converts at it, a quote already made keeps the rate it
 * recorded, and report metrics convert each quote at its own rate. EUR's
 * rate is 1; a currency that does not exist is a 404. See docs/pricing.md.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { backends } from "../support/backends.ts"
import { appWithTicket, ok } from "../support/http.ts"
import { type Reply, TestApp } from "../support/TestApp.ts"

/** An engine refusal: its status, `type`, the engine as its source, and each of `names` in the message. */
const refused = (reply: Reply, status: number, type: string, ...names: ReadonlyArray<string>) => {
  assert.strictEqual(reply.status, status, reply.text)
  const body = reply.json()
  assert.deepStrictEqual([body.code, body.type], [status, type], reply.text)
  assert.strictEqual(reply.headers.get("x-error-source"), "engine")
  for (const name of names) assert.include(body.message, name)
}

/** A 400 of the request's schema, naming the field; the engine never saw it. */
const badRequest = (reply: Reply, field: string) => {
  assert.strictEqual(reply.status, 400, reply.text)
  assert.include(reply.json().message, `"${field}"`)
  assert.isNull(reply.headers.get("x-error-source"))
}

/** The reference rates of the engine (src/engine/referenceData.ts). */
const REFERENCE = { EUR: 1, USD: 1.08, GBP: 0.85, CHF: 0.94, JPY: 162 } as const

for (const backend of backends) {
  layer(TestApp(backend), { timeout: 60_000, excludeTestServices: true })(`An app's exchange rates (${backend})`, (it) => {
    /** The app's rates as GET /currency lists them, by currency id. */
    const listedRates = (call: (method: string, path: string, body?: unknown) => Effect.Effect<Reply>) =>
      Effect.map(call("GET", "/currency"), (reply) => Object.fromEntries((ok(reply, "currencies") as Array<any>).map((c) => [c.id, c.exchangeRate])))

    it.effect("an app's rate is what GET /currency and /currency/{id} answer for that app; other apps keep the reference rate", () =>
      Effect.gen(function*() {
        const mine = yield* appWithTicket("rates-mine")
        const theirs = yield* appWithTicket("rates-theirs")
        assert.deepStrictEqual(yield* listedRates(mine.call), REFERENCE)

        const set = ok(yield* mine.call("PUT", "/currency/USD/exchange-rate", { exchangeRate: 1.2 }), "set USD")
        assert.deepInclude(set, { id: "USD", code: "USD", minorUnits: 2, exchangeRate: 1.2 })
        assert.strictEqual(ok(yield* mine.call("GET", "/currency/USD"), "get USD").exchangeRate, 1.2)
        assert.deepStrictEqual(yield* listedRates(mine.call), { ...REFERENCE, USD: 1.2 })
        assert.deepStrictEqual((ok(yield* mine.call("GET", "/currency?code=USD"), "filtered") as Array<any>).map((c) => c.exchangeRate), [1.2])

        // Another app reads the reference rate, and sets its own without touching this one.
        assert.strictEqual(ok(yield* theirs.call("GET", "/currency/USD"), "their USD").exchangeRate, 1.08)
        assert.deepStrictEqual(yield* listedRates(theirs.call), REFERENCE)
        ok(yield* theirs.call("PUT", "/currency/GBP/exchange-rate", { exchangeRate: 0.9 }), "their GBP")
        assert.deepStrictEqual(yield* listedRates(theirs.call), { ...REFERENCE, GBP: 0.9 })
        assert.deepStrictEqual(yield* listedRates(mine.call), { ...REFERENCE, USD: 1.2 })

        // A new rate replaces the app's; the reference rate sets it back.
        ok(yield* mine.call("PUT", "/currency/USD/exchange-rate", { exchangeRate: 1.25 }), "USD again")
        assert.strictEqual(ok(yield* mine.call("GET", "/currency/USD"), "get USD").exchangeRate, 1.25)
        assert.strictEqual(ok(yield* mine.call("PUT", "/currency/USD/exchange-rate", { exchangeRate: 1.08 }), "back").exchangeRate, 1.08)
        assert.deepStrictEqual(yield* listedRates(mine.call), REFERENCE)
      }))

    it.effect("a quote converts at the app's rate unless it gives its own; quotes made keep their rate; report metrics use each quote's", () =>
      Effect.gen(function*() {
        const { call, project, ticket } = yield* appWithTicket("rates-quotes")
        const other = yield* appWithTicket("rates-quotes-other")
        const quoted = (ticketId: string, body: Record<string, unknown>) => Effect.map(call("POST", `/ticket/${ticketId}/quote`, body), (r) => ok(r, "quote"))
        /** A ticket with one item of EUR 200 (2 × 100). */
        const ticketOfTwoHundred = (name: string) =>
          Effect.gen(function*() {
            const made = ok(yield* call("POST", "/ticket", { projectId: project.id, name }), "ticket")
            ok(yield* call("POST", "/item", { ticketId: made.id, name: "Fee", quantity: 2, unitPrice: 100 }), "item")
            return made
          })
        ok(yield* call("POST", "/item", { ticketId: ticket.id, name: "Fee", quantity: 2, unitPrice: 100 }), "item")

        const before = yield* quoted(ticket.id, { currencyId: "USD" })
        assert.deepStrictEqual([before.exchangeRate, before.lines[0].unitPrice, before.total], [1.08, 108, 216])

        ok(yield* call("PUT", "/currency/USD/exchange-rate", { exchangeRate: 1.25 }), "app's USD rate")
        const after = yield* quoted((yield* ticketOfTwoHundred("At the app's rate")).id, { currencyId: "USD" })
        assert.deepStrictEqual([after.exchangeRate, after.lines[0].unitPrice, after.total], [1.25, 125, 250])
        // The quote made before keeps the rate it recorded.
        const kept = ok(yield* call("GET", `/ticket-quote/${before.id}`), "earlier quote")
        assert.deepStrictEqual([kept.exchangeRate, kept.total], [1.08, 216])
        // A quote's own rate wins over the app's.
        const own = yield* quoted((yield* ticketOfTwoHundred("At its own rate")).id, { currencyId: "USD", exchangeRate: 1.1 })
        assert.deepStrictEqual([own.exchangeRate, own.total], [1.1, 220])
        // The project's currency takes the app's rate too.
        ok(yield* call("PUT", `/project/${project.id}`, { customerId: project.customerId, name: project.name, currencyId: "USD" }), "project in USD")
        const byProject = yield* quoted((yield* ticketOfTwoHundred("Project's currency")).id, {})
        assert.deepStrictEqual([byProject.currencyId, byProject.exchangeRate, byProject.total], ["USD", 1.25, 250])

        // Another app quotes at the reference rate.
        ok(yield* other.call("POST", "/item", { ticketId: other.ticket.id, name: "Fee", quantity: 2, unitPrice: 100 }), "their item")
        const theirs = ok(yield* other.call("POST", `/ticket/${other.ticket.id}/quote`, { currencyId: "USD" }), "their quote")
        assert.deepStrictEqual([theirs.exchangeRate, theirs.total], [1.08, 216])

        // Each quote in EUR at its own rate: 216 / 1.08, 250 / 1.25, 220 / 1.1, 250 / 1.25, EUR 200 each.
        const metrics = ok(yield* call("GET", "/report-metrics"), "metrics")
        assert.deepStrictEqual(metrics.byCurrency, [
          { currencyId: "USD", quotesSent: 4, quotedValue: 936, baseValue: 800, exchangeRates: [1.08, 1.1, 1.25] }
        ])
        assert.strictEqual(metrics.quotedValue, 800)
      }))

    it.effect("EUR's rate is 1 (another is a 422 naming exchangeRate); an unknown currency is a 404; a rate out of bounds a 400", () =>
      Effect.gen(function*() {
        const { call } = yield* appWithTicket("rates-refused")
        refused(yield* call("PUT", "/currency/EUR/exchange-rate", { exchangeRate: 1.1 }), 422, "ValidationError", "exchangeRate", "EUR")
        assert.strictEqual(ok(yield* call("PUT", "/currency/EUR/exchange-rate", { exchangeRate: 1 }), "EUR at 1").exchangeRate, 1)
        refused(yield* call("PUT", "/currency/XYZ/exchange-rate", { exchangeRate: 1.1 }), 404, "NotFound", "currency XYZ")
        for (const exchangeRate of [0, -1, 2_000_000, "1.1"]) badRequest(yield* call("PUT", "/currency/USD/exchange-rate", { exchangeRate }), "exchangeRate")
        badRequest(yield* call("PUT", "/currency/USD/exchange-rate", {}), "exchangeRate")
        // Nothing refused was stored.
        assert.deepStrictEqual(yield* listedRates(call), REFERENCE)
      }))
  })
}
