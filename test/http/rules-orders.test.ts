/**
 * The orders engine's rules (issue 15: ticket and quote states, eligibility,
 * money, catalogue conventions) as an integrator meets them through HTTP.
 * Each refusal is checked for its status, its `type`, the field or state its
 * message names and the engine as its source. docs/workflows-orders.md has
 * the state tables these tests follow, row by row.
 */
import { assert, layer } from "@effect/vitest"
import { Duration, Effect, Layer } from "effect"
import { modelFetcherLayer } from "../../src/engine/geometry/ModelFetcher.ts"
import { binaryStl, box } from "../../src/engine/geometry/writers.ts"
import { RecordRepository } from "../../src/engine/RecordRepository.ts"
import { backends } from "../support/backends.ts"
import { FileHost, FileHostLive } from "../support/fileHost.ts"
import { appWithTicket, ok, patch } from "../support/http.ts"
import { type Reply, TestApp } from "../support/TestApp.ts"

const FILES = { "/models/cube.stl": binaryStl(box(20, 20, 20)) }

const fetcher = modelFetcherLayer({ allowPrivate: true, timeout: Duration.seconds(5), placeholderHosts: ["example"] })

/** An engine refusal: its status, `type`, every name its message must carry, and the engine as its source. */
const refused = (reply: Reply, status: number, type: string, ...names: ReadonlyArray<string>) => {
  assert.strictEqual(reply.status, status, reply.text)
  const body = reply.json()
  assert.strictEqual(body.code, status, reply.text)
  assert.strictEqual(body.type, type, reply.text)
  for (const name of names) assert.include(body.message, name)
  assert.strictEqual(reply.headers.get("x-error-source"), "engine")
}

/** A 400 of the request's schema, naming the field. */
const badRequest = (reply: Reply, field: string) => {
  assert.strictEqual(reply.status, 400, reply.text)
  assert.include(reply.json().message, `"${field}"`)
}

/** The body of a PUT /ticket-quote/{id} that sends the quote back as read, with `changes`. */
const quoteBody = (quote: any, changes: Record<string, unknown> = {}) => ({
  ticketId: quote.ticketId,
  currencyId: quote.currencyId,
  state: quote.state,
  validUntil: quote.validUntil,
  lines: quote.lines,
  ...(quote.notes === undefined ? {} : { notes: quote.notes }),
  ...changes
})

/** A part's body for a PUT: its writable fields. */
const partBody = (part: any, changes: Record<string, unknown> = {}) => {
  const { createdAt: _c, fileName: _f, geometry: _g, id: _i, productionTimes: _p, totalPrice: _t, unitPrice: _u, updatedAt: _m, ...body } = part
  return { ...body, ...changes }
}

/** Money compared in whole cents (or the currency's minor unit), as the engine computes it. */
const minor = (amount: number, digits = 2) => Math.round(amount * 10 ** digits)

for (const backend of backends) {
  layer(Layer.merge(TestApp(backend, {}, { modelFetcher: fetcher }), FileHostLive(FILES)), {
    timeout: 90_000,
    excludeTestServices: true
  })(`The orders engine's rules over HTTP (${backend})`, (it) => {
    /** A fresh app: a project in EUR with a draft ticket, PLA (black or white) for FDM, aluminium for CNC, and helpers. */
    const setup = Effect.gen(function*() {
      const host = yield* FileHost
      const { appId, call, customer, project, ticket } = yield* appWithTicket("rules")
      const pla = ok(yield* call("POST", "/material", { name: "PLA", technologyId: "fdm", colourIds: ["black", "white"] }), "pla")
      const aluminium = ok(yield* call("POST", "/material", { name: "Aluminium", technologyId: "cnc-milling" }), "aluminium")
      const newTicket = (name: string) => Effect.map(call("POST", "/ticket", { projectId: project.id, name }), (reply) => ok(reply, "ticket"))
      const cube = (ticketId: string, changes: Record<string, unknown> = {}) => ({
        ticketId,
        name: "Cube",
        modelEndpoint: { url: `${host.url}/models/cube.stl` },
        technologyId: "fdm",
        materialId: pla.id,
        quantity: 7,
        ...changes
      })
      const part = (ticketId: string, changes: Record<string, unknown> = {}) =>
        Effect.map(call("POST", "/ticket-model", cube(ticketId, changes)), (reply) => ok(reply, "part"))
      const item = (ticketId: string, unitPrice = 50) =>
        Effect.map(call("POST", "/item", { ticketId, name: "Setup fee", quantity: 1, unitPrice }), (reply) => ok(reply, "item"))
      const quote = (ticketId: string, body: Record<string, unknown> = {}) =>
        Effect.map(call("POST", `/ticket/${ticketId}/quote`, body), (reply) => ok(reply, "quote"))
      const ticketState = (id: string) => Effect.map(call("GET", `/ticket/lookup?identifier=${id}`), (reply) => ok(reply, "ticket").state as string)
      const quoteState = (id: string) => Effect.map(call("GET", `/ticket-quote/${id}`), (reply) => ok(reply, "quote").state as string)
      const accept = (q: any) => Effect.map(call("PUT", `/ticket-quote/${q.id}`, quoteBody(q, { state: "accepted" })), (reply) => ok(reply, "accept"))
      return { appId, call, customer, project, ticket, pla, aluminium, newTicket, cube, part, item, quote, ticketState, quoteState, accept, host }
    })

    // -------------------------------------------------------------------------------------------
    // Rule 1: the ticket

    it.effect("ticket: draft → quoted → accepted → in_production; cancel from draft, quoted and accepted only (409 naming the state)", () =>
      Effect.gen(function*() {
        const { accept, appId, call, item, newTicket, part, quote, quoteState, ticket, ticketState } = yield* setup
        assert.strictEqual(yield* ticketState(ticket.id), "draft")
        yield* part(ticket.id)
        const sent = yield* quote(ticket.id)
        assert.strictEqual(yield* ticketState(ticket.id), "quoted")
        yield* accept(sent)
        assert.strictEqual(yield* ticketState(ticket.id), "accepted")
        ok(yield* call("PUT", `/ticket/${ticket.id}/send-to-production`), "send to production")
        assert.strictEqual(yield* ticketState(ticket.id), "in_production")
        refused(yield* call("PUT", `/ticket/${ticket.id}/cancel`), 409, "Conflict", ticket.number, "is in_production")
        refused(yield* call("POST", `/ticket/${ticket.id}/quote`, {}), 409, "Conflict", ticket.number, "is in_production")
        // completed is production's to set (all service jobs done); here it is set directly.
        yield* patch("ticket", appId, ticket.id, { state: "completed" })
        refused(yield* call("PUT", `/ticket/${ticket.id}/cancel`), 409, "Conflict", ticket.number, "is completed")

        // Cancelling a draft, a quoted ticket (its open quote withdrawn) and an accepted one (its accepted quote stays).
        const draft = yield* newTicket("Draft")
        assert.strictEqual(ok(yield* call("PUT", `/ticket/${draft.id}/cancel`), "cancel draft").state, "cancelled")
        const quoted = yield* newTicket("Quoted")
        yield* item(quoted.id)
        const open = yield* quote(quoted.id)
        assert.strictEqual(ok(yield* call("PUT", `/ticket/${quoted.id}/cancel`), "cancel quoted").state, "cancelled")
        assert.strictEqual(yield* quoteState(open.id), "withdrawn")
        refused(yield* call("PUT", `/ticket-quote/${open.id}`, quoteBody(open, { state: "accepted" })), 409, "Conflict", open.number, "is withdrawn")
        const agreed = yield* newTicket("Accepted")
        yield* item(agreed.id)
        const agreedQuote = yield* accept(yield* quote(agreed.id))
        assert.strictEqual(ok(yield* call("PUT", `/ticket/${agreed.id}/cancel`), "cancel accepted").state, "cancelled")
        assert.strictEqual(yield* quoteState(agreedQuote.id), "accepted")

        // From cancelled: no cancel, no quote, no acceptance.
        refused(yield* call("PUT", `/ticket/${draft.id}/cancel`), 409, "Conflict", draft.number, "is cancelled")
        refused(yield* call("POST", `/ticket/${quoted.id}/quote`, {}), 409, "Conflict", quoted.number, "is cancelled")
        refused(yield* call("PUT", "/ticket/no-such-ticket/cancel"), 404, "NotFound", "no-such-ticket")
        // A PUT of the ticket keeps its state.
        const renamed = ok(yield* call("PUT", `/ticket/${draft.id}`, { projectId: draft.projectId, name: "Renamed" }), "rename")
        assert.strictEqual(renamed.state, "cancelled")
      }))

    it.effect("ticket: parts and items change only while draft or quoted (409 naming the ticket and its state); nothing is changed", () =>
      Effect.gen(function*() {
        const { accept, call, cube, item, newTicket, part, quote, ticket } = yield* setup
        const kept = yield* part(ticket.id)
        const fee = yield* item(ticket.id)
        const catalogue = ok(yield* call("POST", "/catalogue", { name: "Standard" }), "catalogue")
        const model = ok(
          yield* call("POST", "/catalogue-model", {
            catalogueId: catalogue.id,
            name: "Knob",
            modelEndpoint: { url: "https://files.example/knob.stl" },
            configurations: [{ technologyId: "fdm", materialId: kept.materialId }]
          }),
          "catalogue model"
        )
        yield* accept(yield* quote(ticket.id))
        const closed = [ticket.number, "is accepted", "only while it is draft or quoted"]

        refused(yield* call("POST", "/ticket-model", cube(ticket.id)), 409, "Conflict", ...closed)
        refused(yield* call("PUT", `/ticket-model/${kept.id}`, partBody(kept, { quantity: 70 })), 409, "Conflict", ...closed)
        // The part is on the accepted quote as well: the referential rule (a part on an accepted quote) may refuse first, naming the part.
        const removal = yield* call("DELETE", `/ticket-model/${kept.id}`)
        refused(removal, 409, "Conflict")
        assert.match(removal.json().message, new RegExp(`${ticket.number} is accepted|${kept.id}`))
        refused(yield* call("PUT", `/ticket-model/${kept.id}/post-processing`, { serviceIds: ["sanding"] }), 409, "Conflict", ...closed)
        refused(
          yield* call("POST", "/ticket-model/from-catalogue", {
            ticketId: ticket.id,
            parts: [{ catalogueModelConfigurationId: model.configurations[0].id, quantity: 1 }]
          }),
          409,
          "Conflict",
          ...closed
        )
        refused(yield* call("POST", "/item", { ticketId: ticket.id, name: "Late fee", quantity: 1, unitPrice: 5 }), 409, "Conflict", ...closed)
        refused(yield* call("PUT", `/item/${fee.id}`, { ticketId: ticket.id, name: "Setup fee", quantity: 2, unitPrice: 50 }), 409, "Conflict", ...closed)

        // Moving a part or an item to an accepted ticket is a change of that ticket too.
        const draft = yield* newTicket("Other")
        const loose = yield* part(draft.id)
        refused(yield* call("PUT", `/ticket-model/${loose.id}`, partBody(loose, { ticketId: ticket.id })), 409, "Conflict", ...closed)
        const looseItem = yield* item(draft.id)
        refused(yield* call("PUT", `/item/${looseItem.id}`, { ticketId: ticket.id, name: "Moved", quantity: 1, unitPrice: 1 }), 409, "Conflict", ...closed)

        // Nothing changed.
        assert.deepStrictEqual(ok(yield* call("GET", `/ticket-model/${kept.id}`), "part"), kept)
        assert.deepStrictEqual((ok(yield* call("GET", `/ticket-model?ticketId=${ticket.id}`), "parts") as Array<any>).map((p) => p.id), [kept.id])
        assert.deepStrictEqual(ok(yield* call("GET", `/item/${fee.id}`), "item"), fee)
        assert.strictEqual(ok(yield* call("GET", `/ticket-model/${loose.id}`), "loose").ticketId, draft.id)

        // A cancelled ticket is closed as well.
        ok(yield* call("PUT", `/ticket/${draft.id}/cancel`), "cancel")
        refused(yield* call("DELETE", `/ticket-model/${loose.id}`), 409, "Conflict", draft.number, "is cancelled")
      }))

    it.effect("ticket: a change while quoted supersedes its open quote and returns it to draft", () =>
      Effect.gen(function*() {
        const { call, item, part, quote, quoteState, ticket, ticketState } = yield* setup
        const cube = yield* part(ticket.id)
        const first = yield* quote(ticket.id)
        assert.strictEqual(yield* ticketState(ticket.id), "quoted")

        // Replacing a part.
        ok(yield* call("PUT", `/ticket-model/${cube.id}`, partBody(cube, { quantity: 8 })), "replace")
        assert.strictEqual(yield* ticketState(ticket.id), "draft")
        assert.strictEqual(yield* quoteState(first.id), "superseded")
        refused(yield* call("PUT", `/ticket-quote/${first.id}`, quoteBody(first, { state: "accepted" })), 409, "Conflict", first.number, "is superseded")

        // Adding an item, creating a part, post-processing, deleting a part: each from quoted, each supersedes.
        const changes: ReadonlyArray<[string, Effect.Effect<unknown>]> = [
          ["item", item(ticket.id)],
          ["part", part(ticket.id)],
          ["post-processing", Effect.map(call("PUT", `/ticket-model/${cube.id}/post-processing`, { serviceIds: ["sanding"] }), (r) => ok(r, "pp"))],
          ["delete", Effect.map(call("DELETE", `/ticket-model/${cube.id}`), (r) => ok(r, "delete"))]
        ]
        for (const [what, change] of changes) {
          const open = yield* quote(ticket.id)
          assert.strictEqual(yield* ticketState(ticket.id), "quoted", what)
          yield* change
          assert.strictEqual(yield* ticketState(ticket.id), "draft", what)
          assert.strictEqual(yield* quoteState(open.id), "superseded", what)
        }
      }))

    // -------------------------------------------------------------------------------------------
    // Rule 2: the quote

    it.effect("quote: sent → accepted or rejected; every other state is final (409 naming it); a PUT that changes nothing answers the quote", () =>
      Effect.gen(function*() {
        const { accept, call, item, newTicket, quote, ticket, ticketState } = yield* setup
        yield* item(ticket.id)
        const sent = yield* quote(ticket.id)
        const accepted = yield* accept(sent)
        assert.strictEqual(accepted.state, "accepted")
        // Retrying the acceptance is harmless; moving it back is not.
        assert.deepStrictEqual(ok(yield* call("PUT", `/ticket-quote/${sent.id}`, quoteBody(accepted)), "retried"), accepted)
        refused(yield* call("PUT", `/ticket-quote/${sent.id}`, quoteBody(accepted, { state: "sent" })), 409, "Conflict", sent.number, "is accepted")
        refused(yield* call("PUT", `/ticket-quote/${sent.id}`, quoteBody(accepted, { notes: "amended" })), 409, "Conflict", "is accepted")
        refused(yield* call("POST", `/ticket/${ticket.id}/quote`, {}), 409, "Conflict", ticket.number, "is accepted")

        const other = yield* newTicket("Rejected")
        yield* item(other.id)
        const offer = yield* quote(other.id)
        const rejected = ok(yield* call("PUT", `/ticket-quote/${offer.id}`, quoteBody(offer, { state: "rejected" })), "reject")
        assert.strictEqual(rejected.state, "rejected")
        assert.strictEqual(yield* ticketState(other.id), "quoted")
        refused(yield* call("PUT", `/ticket-quote/${offer.id}`, quoteBody(rejected, { state: "accepted" })), 409, "Conflict", offer.number, "is rejected")

        // A PUT moves a sent quote to accepted or rejected only: the other states are the engine's.
        const again = yield* quote(other.id)
        for (const state of ["superseded", "withdrawn", "expired"]) {
          refused(yield* call("PUT", `/ticket-quote/${again.id}`, quoteBody(again, { state })), 409, "Conflict", again.number, "is sent", state)
        }
        refused(yield* call("PUT", "/ticket-quote/no-such-quote", quoteBody(again)), 404, "NotFound", "no-such-quote")
      }))

    it.effect("quote: a newer quote supersedes the open one; only the newest sent quote can be accepted", () =>
      Effect.gen(function*() {
        const { accept, appId, call, item, quote, quoteState, ticket } = yield* setup
        yield* item(ticket.id)
        const first = yield* quote(ticket.id)
        const second = yield* quote(ticket.id)
        assert.strictEqual(yield* quoteState(first.id), "superseded")
        refused(yield* call("PUT", `/ticket-quote/${first.id}`, quoteBody(first, { state: "accepted" })), 409, "Conflict", first.number, "is superseded")
        // Two open quotes of one ticket (stored before this rule): the older cannot be accepted.
        yield* patch("ticketQuote", appId, first.id, { state: "sent" })
        refused(
          yield* call("PUT", `/ticket-quote/${first.id}`, quoteBody(first, { state: "accepted" })),
          409,
          "Conflict",
          first.number,
          "not the newest sent quote",
          second.number
        )
        assert.strictEqual((yield* accept(second)).state, "accepted")
      }))

    it.effect("quote: after validUntil it reads as expired (get, list, state filter) and cannot be accepted", () =>
      Effect.gen(function*() {
        const { appId, call, item, quote, ticket } = yield* setup
        yield* item(ticket.id)
        const sent = yield* quote(ticket.id)
        const past = new Date(Date.now() - 60_000).toISOString()
        // A validity is set only to the future (test/http/quote-replacement.test.ts): time passes here in storage.
        refused(yield* call("PUT", `/ticket-quote/${sent.id}`, quoteBody(sent, { validUntil: past })), 422, "ValidationError", "validUntil", past)
        yield* patch("ticketQuote", appId, sent.id, { validUntil: past })
        const lapsed = ok(yield* call("GET", `/ticket-quote/${sent.id}`), "lapsed")
        assert.strictEqual(lapsed.state, "expired")
        assert.strictEqual(ok(yield* call("GET", `/ticket-quote/${sent.id}`), "get").state, "expired")
        const ids = (reply: Reply) => (ok(reply, "list") as Array<any>).map((q) => q.id)
        assert.deepStrictEqual(ids(yield* call("GET", `/ticket-quote?ticketId=${ticket.id}&state=expired`)), [sent.id])
        assert.deepStrictEqual(ids(yield* call("GET", `/ticket-quote?ticketId=${ticket.id}&state=sent`)), [])
        assert.deepStrictEqual(
          (ok(yield* call("GET", `/ticket-quote?ticketId=${ticket.id}`), "all") as Array<any>).map((q) => q.state),
          ["expired"]
        )
        refused(yield* call("PUT", `/ticket-quote/${sent.id}`, quoteBody(lapsed, { state: "accepted" })), 409, "Conflict", sent.number, "is expired")
        // An expired quote is not open: a new quote of the ticket is, and can be accepted.
        const fresh = yield* quote(ticket.id)
        assert.strictEqual(ok(yield* call("GET", `/ticket-quote/${sent.id}`), "still expired").state, "expired")
        assert.strictEqual(ok(yield* call("PUT", `/ticket-quote/${fresh.id}`, quoteBody(fresh, { state: "accepted" })), "accept").state, "accepted")
      }))

    it.effect("quote: ticketId and currencyId cannot change (422 naming the field)", () =>
      Effect.gen(function*() {
        const { call, item, newTicket, quote, ticket } = yield* setup
        yield* item(ticket.id)
        const sent = yield* quote(ticket.id)
        const other = yield* newTicket("Other")
        refused(yield* call("PUT", `/ticket-quote/${sent.id}`, quoteBody(sent, { ticketId: other.id })), 422, "ValidationError", "ticketId", ticket.number)
        refused(yield* call("PUT", `/ticket-quote/${sent.id}`, quoteBody(sent, { currencyId: "USD" })), 422, "ValidationError", "currencyId")
        assert.deepStrictEqual(ok(yield* call("GET", `/ticket-quote/${sent.id}`), "unchanged"), sent)
      }))

    it.effect("quote: lines are the engine's; a PUT may override a unit price (totals recomputed), nothing else (422 naming lines.N.<field>)", () =>
      Effect.gen(function*() {
        const { call, item, newTicket, part, quote, ticket } = yield* setup
        const cube = yield* part(ticket.id)
        const fee = yield* item(ticket.id)
        const sent = yield* quote(ticket.id)
        assert.deepStrictEqual(sent.lines.map((line: any) => line.ticketModelId ?? line.itemId), [cube.id, fee.id])
        const [partLine, feeLine] = sent.lines
        const put = (lines: ReadonlyArray<unknown>) => call("PUT", `/ticket-quote/${sent.id}`, quoteBody(sent, { lines }))

        // A total sent is the line's as read or as the override makes it: another is refused, never replaced silently.
        refused(
          yield* put([{ ...partLine, unitPrice: 1.25, total: 999 }, feeLine]),
          422,
          "ValidationError",
          "lines.0.total: sent 999, the engine's 8.75"
        )
        const discounted = ok(yield* put([{ ...partLine, unitPrice: 1.25 }, { ...feeLine, description: "Setup and fixtures" }]), "override")
        assert.deepStrictEqual(discounted.lines[0], { ...partLine, unitPrice: 1.25, total: 8.75 })
        assert.strictEqual(discounted.lines[1].description, "Setup and fixtures")
        assert.strictEqual(minor(discounted.total), minor(8.75) + minor(feeLine.total))

        const elsewhere = yield* newTicket("Elsewhere")
        const foreignPart = yield* part(elsewhere.id)
        const foreignItem = yield* item(elsewhere.id)
        const { ticketModelId: _t, ...unpointed } = partLine
        refused(yield* put([{ ...partLine, ticketModelId: foreignPart.id }, feeLine]), 422, "ValidationError", "lines.0.ticketModelId", ticket.number)
        refused(yield* put([partLine, { ...feeLine, itemId: foreignItem.id }]), 422, "ValidationError", "lines.1.itemId", ticket.number)
        refused(yield* put([{ ...partLine, ticketModelId: "no-such-part" }, feeLine]), 422, "ValidationError", "lines.0.ticketModelId")
        refused(yield* put([unpointed, feeLine]), 422, "ValidationError", "lines.0.ticketModelId")
        refused(yield* put([{ ...partLine, itemId: fee.id }, feeLine]), 422, "ValidationError", "lines.0.itemId")
        refused(yield* put([partLine, partLine]), 422, "ValidationError", "lines.1.ticketModelId")
        refused(yield* put([{ ...partLine, quantity: 1 }, feeLine]), 422, "ValidationError", "lines.0.quantity")
        refused(yield* put([{ ...partLine, unitPrice: 1.255 }, feeLine]), 422, "ValidationError", "lines.0.unitPrice")
        refused(yield* put([partLine]), 422, "ValidationError", "lines:", fee.id)
        refused(yield* put([]), 422, "ValidationError", "lines:")
        assert.deepStrictEqual(ok(yield* call("GET", `/ticket-quote/${sent.id}`), "as overridden"), discounted)
      }))

    // -------------------------------------------------------------------------------------------
    // Rule 4: eligibility

    it.effect("eligibility: a part's material is of its technology, its colour one of the material's, its configuration of its technology", () =>
      Effect.gen(function*() {
        const { aluminium, call, cube, pla, ticket } = yield* setup
        refused(yield* call("POST", "/ticket-model", cube(ticket.id, { materialId: aluminium.id })), 422, "ValidationError", "materialId", "cnc-milling")
        refused(yield* call("POST", "/ticket-model", cube(ticket.id, { colourId: "red" })), 422, "ValidationError", "colourId", "black, white")
        assert.strictEqual(ok(yield* call("POST", "/ticket-model", cube(ticket.id, { colourId: "white" })), "white PLA").colourId, "white")
        // A material that lists no colours does not restrict them.
        const resin = ok(yield* call("POST", "/material", { name: "Resin", technologyId: "sla" }), "resin")
        ok(yield* call("POST", "/ticket-model", cube(ticket.id, { technologyId: "sla", materialId: resin.id, colourId: "red" })), "red resin")

        const catalogue = ok(yield* call("POST", "/catalogue", { name: "Parts" }), "catalogue")
        const model = ok(
          yield* call("POST", "/catalogue-model", {
            catalogueId: catalogue.id,
            name: "Knob",
            modelEndpoint: { url: "https://files.example/knob.stl" },
            configurations: [{ technologyId: "fdm", materialId: pla.id }]
          }),
          "model"
        )
        const fromConfiguration = {
          ticketId: ticket.id,
          catalogueModelConfigurationId: model.configurations[0].id,
          technologyId: "sla",
          materialId: resin.id,
          quantity: 1
        }
        refused(yield* call("POST", "/ticket-model", fromConfiguration), 422, "ValidationError", "technologyId", model.configurations[0].id)
        ok(yield* call("POST", "/ticket-model", { ...fromConfiguration, technologyId: "fdm", materialId: pla.id }), "same technology")

        // A catalogue configuration: its material of its technology, its colour one of the material's.
        const body = (configuration: Record<string, unknown>) => ({
          catalogueId: catalogue.id,
          name: "Bracket",
          modelEndpoint: { url: "https://files.example/bracket.stl" },
          configurations: [{ technologyId: "fdm", materialId: pla.id }, configuration]
        })
        refused(
          yield* call("POST", "/catalogue-model", body({ technologyId: "fdm", materialId: aluminium.id })),
          422,
          "ValidationError",
          "configurations.1.materialId"
        )
        refused(
          yield* call("POST", "/catalogue-model", body({ technologyId: "fdm", materialId: pla.id, colourId: "red" })),
          422,
          "ValidationError",
          "configurations.1.colourId"
        )
      }))

    it.effect("eligibility from the other side: what parts and configurations are made of cannot change under them (422 naming the field)", () =>
      Effect.gen(function*() {
        const { appId, call, cube, pla, ticket } = yield* setup
        const material = (body: Record<string, unknown>) => call("PUT", `/material/${pla.id}`, { name: "PLA", technologyId: "fdm", ...body })
        ok(yield* call("POST", "/ticket-model", cube(ticket.id, { colourId: "white" })), "white part")
        const catalogue = ok(yield* call("POST", "/catalogue", { name: "Parts" }), "catalogue")
        const configuration = { technologyId: "fdm", materialId: pla.id, colourId: "black" }
        const modelBody = (configurations: ReadonlyArray<Record<string, unknown>>) => ({
          catalogueId: catalogue.id,
          name: "Knob",
          modelEndpoint: { url: "https://files.example/knob.stl" },
          configurations
        })
        const model = ok(yield* call("POST", "/catalogue-model", modelBody([configuration])), "model")

        // A material's technology is that of the parts and configurations made of it.
        refused(yield* material({ technologyId: "sla" }), 422, "ValidationError", "technologyId: material PLA", "1 part (ticketModel)", "1 catalogue model")
        // Its colours keep those of the parts and configurations made of it.
        refused(yield* material({ colourIds: ["black"] }), 422, "ValidationError", "colourIds", "is white")
        refused(yield* material({ colourIds: ["white"] }), 422, "ValidationError", "colourIds", `catalogue model Knob (${model.id}) is black`)
        const grown = ok(yield* material({ colourIds: ["black", "white", "red"] }), "a colour added")
        assert.deepStrictEqual(grown.colourIds, ["black", "white", "red"])

        // A configuration that parts were made from keeps its technology.
        const id = model.configurations[0].id
        ok(
          yield* call("POST", "/ticket-model", {
            ticketId: ticket.id,
            catalogueModelConfigurationId: id,
            technologyId: "fdm",
            materialId: pla.id,
            quantity: 1
          }),
          "part from the configuration"
        )
        const resin = ok(yield* call("POST", "/material", { name: "Resin", technologyId: "sla" }), "resin")
        refused(
          yield* call("PUT", `/catalogue-model/${model.id}`, modelBody([{ id, technologyId: "sla", materialId: resin.id }])),
          422,
          "ValidationError",
          "configurations.0.technologyId",
          "1 part (ticketModel)"
        )

        // A material is of its series' technology, and a series with materials keeps its technology.
        const series = yield* Effect.provide(
          Effect.flatMap(RecordRepository, (records) => records.insert("materialSeries", appId, { technologyId: "fdm", name: "Filaments" })),
          RecordRepository.layer
        )
        refused(
          yield* call("POST", "/material", { name: "Resin", technologyId: "sla", materialSeriesId: series.id }),
          422,
          "ValidationError",
          "materialSeriesId",
          "is fdm"
        )
        ok(yield* call("POST", "/material", { name: "PETG", technologyId: "fdm", materialSeriesId: series.id }), "PETG in the series")
        refused(
          yield* call("PUT", `/material-series/${series.id}`, { technologyId: "sla", name: "Filaments" }),
          422,
          "ValidationError",
          "technologyId: material series",
          "1 material (material)"
        )
      }))

    it.effect("eligibility: a machining strategy is for a service the part has, by the ids productionTimes.services shows", () =>
      Effect.gen(function*() {
        const { call, part, ticket } = yield* setup
        const cube = yield* part(ticket.id, { serviceIds: ["sanding"] })
        const shown = cube.productionTimes.services.map((service: any) => service.serviceId)
        assert.deepStrictEqual(shown, ["fdm", "sanding"])
        const strategy = { strategy: "finishing", toolIds: ["t1"] }
        for (const serviceId of shown) {
          const set = ok(yield* call("PUT", `/ticket-model/${cube.id}/machining-strategy/${serviceId}`, strategy), serviceId)
          assert.strictEqual(set.serviceId, serviceId)
        }
        refused(yield* call("PUT", `/ticket-model/${cube.id}/machining-strategy/painting`, strategy), 422, "ValidationError", "serviceId", "painting")
        refused(yield* call("PUT", `/ticket-model/${cube.id}/machining-strategy/cnc-milling`, strategy), 422, "ValidationError", "serviceId")
        // A strategy goes when its service leaves the part.
        ok(yield* call("PUT", `/ticket-model/${cube.id}/post-processing`, { serviceIds: [] }), "no services")
        assert.strictEqual((yield* call("GET", `/ticket-model/${cube.id}/machining-strategy/sanding`)).text, "")
        assert.strictEqual(ok(yield* call("GET", `/ticket-model/${cube.id}/machining-strategy/fdm`), "fdm").strategy, "finishing")
      }))

    // -------------------------------------------------------------------------------------------
    // Rule 6: money

    it.effect("money: unitPrice × quantity = totalPrice exactly; lines sum to the total; another currency converts at its recorded rate", () =>
      Effect.gen(function*() {
        const { call, item, part, project, quote, ticket } = yield* setup
        const cube = yield* part(ticket.id)
        assert.strictEqual(minor(cube.totalPrice), minor(cube.unitPrice) * 7)
        yield* item(ticket.id, 12.35)
        refused(yield* call("POST", "/item", { ticketId: ticket.id, name: "Odd", quantity: 3, unitPrice: 1.005 }), 422, "ValidationError", "unitPrice")

        const currencies = ok(yield* call("GET", "/currency"), "currencies") as Array<any>
        const rate = (id: string) => currencies.find((currency) => currency.id === id)
        assert.deepInclude(rate("EUR"), { minorUnits: 2, exchangeRate: 1 })
        assert.deepInclude(rate("USD"), { minorUnits: 2, exchangeRate: 1.08 })
        assert.deepInclude(rate("JPY"), { minorUnits: 0, exchangeRate: 162 })

        const eur = yield* quote(ticket.id)
        assert.strictEqual(eur.exchangeRate, 1)
        assert.deepStrictEqual(eur.lines.map((line: any) => line.unitPrice), [cube.unitPrice, 12.35])
        const exact = (q: any, digits = 2) => {
          for (const line of q.lines) assert.strictEqual(minor(line.total, digits), minor(line.unitPrice, digits) * line.quantity)
          assert.strictEqual(minor(q.total, digits), q.lines.reduce((sum: number, line: any) => sum + minor(line.total, digits), 0))
        }
        exact(eur)

        const usd = yield* quote(ticket.id, { currencyId: "USD" })
        assert.strictEqual(usd.exchangeRate, 1.08)
        assert.strictEqual(usd.lines[0].unitPrice, Math.round(cube.unitPrice * 1.08 * 100) / 100)
        assert.strictEqual(usd.lines[1].unitPrice, 13.34, "12.35 × 1.08 = 13.338")
        exact(usd)

        const yen = yield* quote(ticket.id, { currencyId: "JPY" })
        assert.strictEqual(yen.lines[1].unitPrice, 2001, "12.35 × 162 = 2000.7, in whole yen")
        assert.isTrue(yen.lines.every((line: any) => Number.isInteger(line.unitPrice) && Number.isInteger(line.total)))
        exact(yen, 0)
        refused(
          yield* call("PUT", `/ticket-quote/${yen.id}`, quoteBody(yen, { lines: [yen.lines[0], { ...yen.lines[1], unitPrice: 2000.5 }] })),
          422,
          "ValidationError",
          "lines.1.unitPrice",
          "JPY"
        )

        // The app's own rate, for one quote; the base currency's rate is 1.
        const own = yield* quote(ticket.id, { currencyId: "USD", exchangeRate: 1.1 })
        assert.strictEqual(own.exchangeRate, 1.1)
        assert.strictEqual(own.lines[1].unitPrice, 13.59, "12.35 × 1.1 = 13.585")
        refused(yield* call("POST", `/ticket/${ticket.id}/quote`, { currencyId: "EUR", exchangeRate: 1.2 }), 422, "ValidationError", "exchangeRate")
        // The project's currency is the default.
        const swiss = ok(yield* call("PUT", `/project/${project.id}`, { customerId: project.customerId, name: project.name, currencyId: "CHF" }), "project")
        assert.strictEqual(swiss.currencyId, "CHF")
        const chf = yield* quote(ticket.id)
        assert.deepStrictEqual([chf.currencyId, chf.exchangeRate], ["CHF", 0.94])
      }))

    it.effect("money: report metrics give value per currency and in EUR with the rates used, over createdAt[from]/createdAt[to]", () =>
      Effect.gen(function*() {
        const { call, item, newTicket, quote, ticket } = yield* setup
        yield* item(ticket.id, 100)
        yield* quote(ticket.id)
        const second = yield* newTicket("Dollars")
        yield* item(second.id, 100)
        yield* quote(second.id, { currencyId: "USD" })
        const third = yield* newTicket("More dollars")
        yield* item(third.id, 10)
        yield* quote(third.id, { currencyId: "USD", exchangeRate: 1.25 })

        const today = new Date().toISOString().slice(0, 10)
        const metrics = ok(yield* call("GET", `/report-metrics?createdAt%5Bfrom%5D=${today}&createdAt%5Bto%5D=${today}`), "metrics")
        assert.strictEqual(metrics.from, today)
        assert.strictEqual(metrics.to, today)
        assert.strictEqual(metrics.baseCurrencyId, "EUR")
        assert.strictEqual(metrics.quotesSent, 3)
        // USD 108 at 1.08 and USD 12.50 at 1.25: EUR 100 and 10.
        assert.deepStrictEqual(metrics.byCurrency, [
          { currencyId: "EUR", quotesSent: 1, quotedValue: 100, baseValue: 100, exchangeRates: [1] },
          { currencyId: "USD", quotesSent: 2, quotedValue: 120.5, baseValue: 110, exchangeRates: [1.08, 1.25] }
        ])
        assert.strictEqual(metrics.quotedValue, 210, "in EUR, never EUR and USD added together")
        const one = ok(yield* call("GET", `/report-metrics?createdAt=${today}`), "one day")
        assert.strictEqual(one.quotesSent, 3)
        const past = ok(yield* call("GET", "/report-metrics?createdAt%5Bfrom%5D=2001-01-01&createdAt%5Bto%5D=2001-12-31"), "past")
        assert.deepStrictEqual([past.quotesSent, past.quotedValue, past.byCurrency], [0, 0, []])
        badRequest(yield* call("GET", `/report-metrics?from=${today}`), "from")
      }))

    // -------------------------------------------------------------------------------------------
    // Rule 8: the catalogue

    it.effect("catalogue: the file-name rule, production parameters checked on write, configuration ids unique per app", () =>
      Effect.gen(function*() {
        const { call, pla } = yield* setup
        const catalogue = ok(yield* call("POST", "/catalogue", { name: "Parts" }), "catalogue")
        const body = (
          configurations: ReadonlyArray<Record<string, unknown>>,
          modelEndpoint: Record<string, unknown> = { url: "https://files.example/knob.stl" }
        ) => ({
          catalogueId: catalogue.id,
          name: "Knob",
          modelEndpoint,
          configurations
        })
        const plain = { technologyId: "fdm", materialId: pla.id }

        badRequest(yield* call("POST", "/catalogue-model", body([plain], { url: "https://files.example/download?id=7" })), "modelEndpoint.fileName")
        const named = ok(yield* call("POST", "/catalogue-model", body([plain], { url: "https://files.example/download?id=7", fileName: "knob.stl" })), "named")
        badRequest(yield* call("PUT", `/catalogue-model/${named.id}`, body([plain], { url: "https://files.example/download?id=8" })), "modelEndpoint.fileName")

        refused(
          yield* call("POST", "/catalogue-model", body([plain, { ...plain, productionParameterIds: { colourDepth: "x" } }])),
          422,
          "UnknownReference",
          "configurations.1.productionParameterIds.colourDepth"
        )
        refused(
          yield* call("POST", "/catalogue-model", body([{ ...plain, productionParameterIds: { layerHeight: "sla-lh-0.05" } }])),
          422,
          "UnknownReference",
          "configurations.0.productionParameterIds.layerHeight"
        )
        refused(
          yield* call("PUT", `/catalogue-model/${named.id}`, body([{ ...plain, id: named.configurations[0].id, productionParameterIds: { infill: "lots" } }])),
          422,
          "UnknownReference",
          "configurations.0.productionParameterIds.infill"
        )

        const fixed = ok(yield* call("POST", "/catalogue-model", body([{ ...plain, id: "knob-pla" }])), "fixed id")
        assert.strictEqual(fixed.configurations[0].id, "knob-pla")
        refused(
          yield* call("POST", "/catalogue-model", body([plain, { ...plain, id: "knob-pla" }])),
          409,
          "Conflict",
          "configurations.1.id",
          "knob-pla",
          fixed.id
        )
        refused(
          yield* call("PUT", `/catalogue-model/${named.id}`, body([{ ...plain, id: named.configurations[0].id }, { ...plain, id: "knob-pla" }])),
          409,
          "Conflict",
          "configurations.1.id",
          "knob-pla"
        )
        refused(
          yield* call("POST", "/catalogue-model", body([{ ...plain, id: "twice" }, { ...plain, id: "twice" }])),
          422,
          "ValidationError",
          "configurations.1.id",
          "twice"
        )
        // A replace keeps its own ids; another app may use the same id.
        ok(yield* call("PUT", `/catalogue-model/${fixed.id}`, body([{ ...plain, id: "knob-pla", name: "Knob, PLA" }])), "replace keeps its id")
        const other = yield* setup
        const otherCatalogue = ok(yield* other.call("POST", "/catalogue", { name: "Theirs" }), "their catalogue")
        ok(
          yield* other.call("POST", "/catalogue-model", {
            ...body([{ technologyId: "fdm", materialId: other.pla.id, id: "knob-pla" }]),
            catalogueId: otherCatalogue.id
          }),
          "another app"
        )
      }))
  })
}
