/**
 * The events the engine writes with its changes (issue 20, items 1 and 2):
 * each operation, driven through HTTP, adds exactly the events of the moves
 * it made, in order, in the app's feed (the `engine_event` rows), each with
 * `data.object` equal to what a GET of the record answers right after, and
 * the state it left; a refused operation, or one rolled back half way, adds
 * none. The expiry sweep stores `expired` with one event per quote. The
 * catalogue is docs/events.md.
 */
import { assert, layer } from "@effect/vitest"
import { Duration, Effect, Layer, Option, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import pg from "pg"
import { modelFetcherLayer } from "../../src/engine/geometry/ModelFetcher.ts"
import { binaryStl, box } from "../../src/engine/geometry/writers.ts"
import { expireQuotes, EXPIRY_BATCH } from "../../src/engine/orders/quoteExpiry.ts"
import { RecordRepository } from "../../src/engine/RecordRepository.ts"
import { AppConfig } from "../../src/services/AppConfig.ts"
import { backends } from "../support/backends.ts"
import { FileHost, FileHostLive } from "../support/fileHost.ts"
import { appWithTicket, ok, patch } from "../support/http.ts"
import { type Reply, TestApp } from "../support/TestApp.ts"

const FILES = { "/models/cube.stl": binaryStl(box(20, 20, 20)), "/models/bracket.stl": binaryStl(box(40, 20, 10)) }

/** Parts are priced from real files on the local host; `*.example` is a placeholder (no geometry, no price). */
const fetcher = modelFetcherLayer({ allowPrivate: true, timeout: Duration.seconds(5), placeholderHosts: ["example"] })

interface FeedEvent {
  readonly type: string
  readonly appId: string
  readonly data: any
}

/**
 * The app's events in the order they were written, read from the outbox;
 * `next` answers those written since its last call, so each operation's
 * events are checked alone.
 */
const feedOf = (appId: string) => {
  let last = 0
  const read = (after: number) =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql<{ seq: string | number; type: string; app_id: string; data: unknown }>`
        SELECT seq, type, app_id, data FROM engine_event WHERE app_id = ${appId} AND seq > ${after} ORDER BY seq`
      return rows
    })
  return {
    /** The events written since the last call. */
    next: Effect.gen(function*() {
      const rows = yield* read(last)
      if (rows.length > 0) last = Number(rows.at(-1)!.seq)
      return rows.map((row): FeedEvent => ({
        type: row.type,
        appId: row.app_id,
        data: typeof row.data === "string" ? JSON.parse(row.data) : row.data
      }))
    }),
    /** Every event of the app. */
    all: Effect.map(read(0), (rows) => rows.map((row) => ({ type: row.type, data: typeof row.data === "string" ? JSON.parse(row.data) : row.data })))
  }
}

/** An engine refusal: its status, and each of `names` in the message. */
const refused = (reply: Reply, status: number, ...names: ReadonlyArray<string>) => {
  assert.strictEqual(reply.status, status, reply.text)
  for (const name of names) assert.include(reply.json().message, name)
}

for (const backend of backends) {
  layer(Layer.merge(TestApp(backend, {}, { modelFetcher: fetcher }), FileHostLive(FILES)), {
    timeout: 120_000,
    excludeTestServices: true
  })(`Events written with the changes (${backend})`, (it) => {
    /** A fresh app, its feed, and helpers to make its records through the API. */
    const setup = Effect.gen(function*() {
      const host = yield* FileHost
      const { appId, call, project, ticket } = yield* appWithTicket("events")
      const feed = feedOf(appId)
      const body = (what: string) => (reply: Reply) => ok(reply, what)
      const post = (path: string, payload: unknown) => Effect.map(call("POST", path, payload), body(`POST ${path}`))
      const put = (path: string, payload?: unknown) => Effect.map(call("PUT", path, payload), body(`PUT ${path}`))
      const get = (path: string) => Effect.map(call("GET", path), body(`GET ${path}`))
      const materials = {
        fdm: yield* post("/material", { name: "PLA", technologyId: "fdm" }),
        sla: yield* post("/material", { name: "Resin", technologyId: "sla" })
      }
      const partBody = (ticketId: string, technologyId: "fdm" | "sla", quantity: number, model = "cube.stl") => ({
        ticketId,
        modelEndpoint: { url: `${host.url}/models/${model}` },
        technologyId,
        materialId: materials[technologyId].id,
        quantity
      })
      const part = (ticketId: string, technologyId: "fdm" | "sla", quantity: number) => post("/ticket-model", partBody(ticketId, technologyId, quantity))
      const getTicket = (id: string) => get(`/ticket/lookup?identifier=${id}`)
      const accept = (quote: any) =>
        put(`/ticket-quote/${quote.id}`, {
          ticketId: quote.ticketId,
          currencyId: quote.currencyId,
          validUntil: quote.validUntil,
          lines: quote.lines,
          state: "accepted"
        })
      /**
       * Asserts the events written since the last check: their types in order,
       * each carrying the app's id; answers them.
       */
      const expectEvents = (types: ReadonlyArray<string>, what: string) =>
        Effect.gen(function*() {
          const events = yield* feed.next
          assert.deepStrictEqual(events.map((event) => event.type), types, what)
          for (const event of events) assert.strictEqual(event.appId, appId)
          return events
        })
      yield* feed.next
      return { appId, host, call, post, put, get, project, ticket, materials, partBody, part, getTicket, accept, expectEvents, feed }
    })

    it.effect("the quoting flow: parts, quotes and the ticket's moves each write their event, with the record as read", () =>
      Effect.gen(function*() {
        const { call, post, put, get, ticket, partBody, getTicket, accept, expectEvents } = yield* setup

        // A part from a real file: stored, analysed and priced, in one write.
        const part = yield* post("/ticket-model", partBody(ticket.id, "fdm", 4))
        const [created, analysed, priced] = yield* expectEvents(["ticket_model.created", "ticket_model.analysed", "ticket_model.priced"], "a new part")
        const read = yield* get(`/ticket-model/${part.id}`)
        for (const event of [created, analysed, priced]) assert.deepStrictEqual(event!.data, { object: read })

        // Renamed: no new model, the same price: nothing to announce. A new quantity prices it again.
        const writable = partBody(ticket.id, "fdm", 4)
        yield* put(`/ticket-model/${part.id}`, { ...writable, name: "Bracket" })
        yield* expectEvents([], "a rename")
        yield* put(`/ticket-model/${part.id}`, { ...writable, name: "Bracket", quantity: 8 })
        const [repriced] = yield* expectEvents(["ticket_model.priced"], "a new quantity")
        assert.deepStrictEqual(repriced!.data.object, yield* get(`/ticket-model/${part.id}`))
        assert.strictEqual(repriced!.data.object.quantity, 8)
        // A new model: analysed, and priced from it.
        yield* put(`/ticket-model/${part.id}`, { ...partBody(ticket.id, "fdm", 8, "bracket.stl"), name: "Bracket" })
        const [newModel, newPrice] = yield* expectEvents(["ticket_model.analysed", "ticket_model.priced"], "a new model")
        const bracket = yield* get(`/ticket-model/${part.id}`)
        assert.strictEqual(bracket.geometry.volume, 40 * 20 * 10)
        assert.deepStrictEqual([newModel!.data, newPrice!.data], [{ object: bracket }, { object: bracket }])

        // The first quote: sent, and the ticket quoted.
        const first = yield* post(`/ticket/${ticket.id}/quote`, {})
        const [sent, quoted] = yield* expectEvents(["ticket_quote.sent", "ticket.quoted"], "the first quote")
        assert.deepStrictEqual(sent!.data, { object: yield* get(`/ticket-quote/${first.id}`) })
        assert.deepStrictEqual(quoted!.data, { object: yield* getTicket(ticket.id), previousState: "draft" })

        // A second quote supersedes the first; the ticket stays quoted, with no move to announce.
        const second = yield* post(`/ticket/${ticket.id}/quote`, { validDays: 10 })
        const [superseded, sentAgain] = yield* expectEvents(["ticket_quote.superseded", "ticket_quote.sent"], "the second quote")
        assert.deepStrictEqual(superseded!.data, { object: yield* get(`/ticket-quote/${first.id}`), previousState: "sent" })
        assert.strictEqual(superseded!.data.object.state, "superseded")
        assert.deepStrictEqual(sentAgain!.data, { object: yield* get(`/ticket-quote/${second.id}`) })

        // Refused moves write nothing: the superseded quote accepted, an unknown quote, a revision that changes the ticket.
        refused(yield* call("PUT", `/ticket-quote/${first.id}`, { ...first, state: "accepted" }), 409, "superseded")
        refused(yield* call("PUT", `/ticket-quote/${second.id}`, { ...second, ticketId: "another", state: "accepted" }), 422, "ticketId")
        // A revision that stays sent is no move.
        yield* put(`/ticket-quote/${second.id}`, { ...second, notes: "Revised" })
        yield* expectEvents([], "refusals and a revision")

        // Accepted: the quote, then its ticket.
        yield* accept(second)
        const [acceptedQuote, acceptedTicket] = yield* expectEvents(["ticket_quote.accepted", "ticket.accepted"], "the acceptance")
        assert.deepStrictEqual(acceptedQuote!.data, { object: yield* get(`/ticket-quote/${second.id}`), previousState: "sent" })
        assert.deepStrictEqual(acceptedTicket!.data, { object: yield* getTicket(ticket.id), previousState: "quoted" })

        // An accepted ticket is neither quoted again nor changed; a retried acceptance answers the quote and writes nothing.
        refused(yield* call("POST", `/ticket/${ticket.id}/quote`, {}), 409, "accepted")
        refused(yield* call("PUT", `/ticket-model/${part.id}`, { ...writable, quantity: 2 }), 409, "accepted")
        yield* accept(yield* get(`/ticket-quote/${second.id}`))
        yield* expectEvents([], "refusals on an accepted ticket")

        // To production: the job, then the ticket's move.
        const [job] = yield* put(`/ticket/${ticket.id}/send-to-production`)
        const [jobCreated, inProduction] = yield* expectEvents(["service_job.created", "ticket.in_production"], "send to production")
        assert.deepStrictEqual(jobCreated!.data, { object: yield* get(`/service-job/${job.id}`) })
        assert.deepStrictEqual(inProduction!.data, { object: yield* getTicket(ticket.id), previousState: "accepted" })
        refused(yield* call("PUT", `/ticket/${ticket.id}/send-to-production`), 409, "in_production")
        yield* expectEvents([], "a second send")
      }))

    it.effect("a service job's moves and its PPS progress each write their event; the last record done completes the ticket", () =>
      Effect.gen(function*() {
        const { call, post, put, get, ticket, part, getTicket, accept, expectEvents } = yield* setup
        const made = yield* part(ticket.id, "fdm", 2)
        yield* accept(yield* post(`/ticket/${ticket.id}/quote`, {}))
        const [job] = yield* put(`/ticket/${ticket.id}/send-to-production`)
        yield* expectEvents(
          [
            "ticket_model.created",
            "ticket_model.analysed",
            "ticket_model.priced",
            "ticket_quote.sent",
            "ticket.quoted",
            "ticket_quote.accepted",
            "ticket.accepted",
            "service_job.created",
            "ticket.in_production"
          ],
          "the way to production"
        )
        const jobNow = () => get(`/service-job/${job.id}`)

        refused(yield* call("PUT", `/service-job/${job.id}/timeline/stop`), 409, "queued")
        yield* expectEvents([], "an illegal stop")
        yield* put(`/service-job/${job.id}/timeline/start`)
        const [started] = yield* expectEvents(["service_job.started"], "start")
        assert.deepStrictEqual(started!.data, { object: yield* jobNow(), previousState: "queued" })
        refused(yield* call("PUT", `/service-job/${job.id}/timeline/start`), 409, "running")
        yield* put(`/service-job/${job.id}/timeline/stop`)
        const [paused, stopped] = yield* expectEvents(["service_job.paused", "service_job.stopped"], "stop")
        assert.deepStrictEqual(paused!.data, { object: yield* jobNow(), previousState: "running" })
        assert.deepStrictEqual(stopped!.data, paused!.data)
        yield* put(`/service-job/${job.id}/timeline/start`)
        const [resumed] = yield* expectEvents(["service_job.started"], "start again")
        assert.strictEqual(resumed!.data.previousState, "paused")

        const [record] = yield* get(`/pps?serviceJobId=${job.id}`)
        refused(
          yield* call("PUT", `/service-job/${job.id}/production/${record.id}`, { state: "done", producedQuantity: 1, scrappedQuantity: 0 }),
          422,
          "producedQuantity"
        )
        yield* expectEvents([], "refused progress")
        yield* put(`/service-job/${job.id}/production/${record.id}`, { state: "in_production", producedQuantity: 1, scrappedQuantity: 0 })
        const [progress] = yield* expectEvents(["pps.updated"], "progress")
        assert.deepStrictEqual(progress!.data, { object: yield* get(`/pps/${record.id}`) })
        assert.strictEqual(progress!.data.object.producedQuantity, 1)

        // The last record done: the record, the job done, the ticket completed, in one write.
        yield* put(`/service-job/${job.id}/production/${record.id}`, { state: "done", producedQuantity: 2, scrappedQuantity: 1 })
        const [last, done, stoppedRunning, completed] = yield* expectEvents(
          ["pps.updated", "service_job.done", "service_job.stopped", "ticket.completed"],
          "the last record done"
        )
        assert.deepStrictEqual(stoppedRunning!.data, done!.data)
        assert.deepStrictEqual(last!.data, { object: yield* get(`/pps/${record.id}`) })
        assert.deepStrictEqual(done!.data, { object: yield* jobNow(), previousState: "running" })
        assert.strictEqual(done!.data.object.state, "done")
        assert.deepStrictEqual(completed!.data, { object: yield* getTicket(ticket.id), previousState: "in_production" })
        assert.strictEqual(made.ticketId, ticket.id)
      }))

    it.effect("merges and reassignments: merged sources, parts reassigned into their target", () =>
      Effect.gen(function*() {
        const { call, post, put, get, ticket, part, expectEvents } = yield* setup
        const [p1, p2, p3] = [yield* part(ticket.id, "fdm", 1), yield* part(ticket.id, "fdm", 1), yield* part(ticket.id, "fdm", 1)]
        yield* expectEvents(Array(3).fill(["ticket_model.created", "ticket_model.analysed", "ticket_model.priced"]).flat(), "three parts")

        const a = yield* post("/service-job", { name: "A", technologyId: "fdm", ticketModelIds: [p1.id] })
        const [createdA] = yield* expectEvents(["service_job.created"], "a job by hand")
        assert.deepStrictEqual(createdA!.data, { object: yield* get(`/service-job/${a.id}`) })
        const b = yield* post("/service-job", { name: "B", technologyId: "fdm", ticketModelIds: [p2.id] })
        const c = yield* post("/service-job", { name: "C", technologyId: "fdm", ticketModelIds: [p3.id] })
        yield* put(`/service-job/${b.id}/timeline/start`)
        yield* expectEvents(["service_job.created", "service_job.created", "service_job.started"], "two more jobs, one started")
        // A job by hand whose part is in another open job is refused, and writes nothing.
        refused(yield* call("POST", "/service-job", { name: "D", technologyId: "fdm", ticketModelIds: [p1.id] }), 409, a.id)
        yield* expectEvents([], "a refused job")

        yield* post("/service-job/reassign-ticket-models", { fromServiceJobId: a.id, toServiceJobId: c.id, ticketModelIds: [p1.id] })
        const [reassigned] = yield* expectEvents(["service_job.reassigned"], "a reassignment")
        assert.deepStrictEqual(reassigned!.data, { object: yield* get(`/service-job/${c.id}`), ticketModelIds: [p1.id], fromServiceJobIds: [a.id] })

        yield* put("/service-job/merge", { targetServiceJobId: c.id, sourceServiceJobIds: [b.id] })
        const [merged, stoppedMerged, into] = yield* expectEvents(["service_job.merged", "service_job.stopped", "service_job.reassigned"], "a merge")
        assert.deepStrictEqual(stoppedMerged!.data, { object: merged!.data.object, previousState: "running" })
        assert.deepStrictEqual(merged!.data, { object: yield* get(`/service-job/${b.id}`), previousState: "running", mergedIntoId: c.id })
        assert.strictEqual(merged!.data.object.state, "merged")
        assert.deepStrictEqual(into!.data, { object: yield* get(`/service-job/${c.id}`), ticketModelIds: [p2.id], fromServiceJobIds: [b.id] })

        refused(yield* call("PUT", "/service-job/merge", { targetServiceJobId: c.id, sourceServiceJobIds: [b.id] }), 409, "merged")
        refused(yield* call("POST", "/service-job/reassign-ticket-models", { fromServiceJobId: b.id, toServiceJobId: c.id, ticketModelIds: [p2.id] }), 409)
        yield* expectEvents([], "refused merge and reassignment")
      }))

    it.effect("an operation refused half way writes none of the events of what it had done", () =>
      Effect.gen(function*() {
        const { call, post, get, ticket, part, accept, getTicket, expectEvents } = yield* setup
        // Sending to production makes the FDM job first, then finds the SLA part in a job made by hand: all of it rolls back.
        yield* part(ticket.id, "fdm", 1)
        const resin = yield* part(ticket.id, "sla", 1)
        yield* accept(yield* post(`/ticket/${ticket.id}/quote`, {}))
        const byHand = yield* post("/service-job", { name: "By hand", technologyId: "sla", ticketModelIds: [resin.id] })
        const before = (yield* expectEvents(
          [
            ...Array(2).fill(["ticket_model.created", "ticket_model.analysed", "ticket_model.priced"]).flat(),
            "ticket_quote.sent",
            "ticket.quoted",
            "ticket_quote.accepted",
            "ticket.accepted",
            "service_job.created"
          ],
          "the way to the refusal"
        )).length
        assert.strictEqual(before, 11)
        refused(yield* call("PUT", `/ticket/${ticket.id}/send-to-production`), 409, byHand.id)
        yield* expectEvents([], "the rolled back send")
        assert.deepStrictEqual(yield* get(`/service-job?ticketId=${ticket.id}`), [])
        assert.strictEqual((yield* getTicket(ticket.id)).state, "accepted")

        // A ticket whose part has no price (its model on a placeholder host) is not quoted: the part is stored, nothing else.
        const other = yield* post("/ticket", { projectId: ticket.projectId, name: "Unpriced" })
        yield* post("/ticket-model", {
          ticketId: other.id,
          modelEndpoint: { url: "https://files.example/part.stl" },
          technologyId: "fdm",
          materialId: (yield* get("/material")).find((m: any) => m.technologyId === "fdm").id,
          quantity: 1
        })
        yield* expectEvents(["ticket_model.created"], "a part without a model to analyse")
        refused(yield* call("POST", `/ticket/${other.id}/quote`, {}), 409)
        yield* expectEvents([], "a refused quote")
      }))

    it.effect("cancelling: the ticket's move, its open quotes withdrawn without events; a change while quoted supersedes the quote", () =>
      Effect.gen(function*() {
        const { call, post, put, get, ticket, part, partBody, getTicket, expectEvents } = yield* setup
        const made = yield* part(ticket.id, "fdm", 1)
        yield* expectEvents(["ticket_model.created", "ticket_model.analysed", "ticket_model.priced"], "a part")
        // Post-processing is a change of the part like any other: priced again.
        yield* put(`/ticket-model/${made.id}/post-processing`, { serviceIds: ["sanding"] })
        const [sanded] = yield* expectEvents(["ticket_model.priced"], "post-processing")
        assert.deepStrictEqual(sanded!.data, { object: yield* get(`/ticket-model/${made.id}`) })
        assert.deepStrictEqual(sanded!.data.object.serviceIds, ["sanding"])
        const quote = yield* post(`/ticket/${ticket.id}/quote`, {})
        yield* expectEvents(["ticket_quote.sent", "ticket.quoted"], "quoted")

        // A change of its part while quoted: the quote superseded (the ticket back to draft, which has no event), the part priced.
        yield* put(`/ticket-model/${made.id}`, partBody(ticket.id, "fdm", 3))
        const [superseded, priced] = yield* expectEvents(["ticket_quote.superseded", "ticket_model.priced"], "a change while quoted")
        assert.deepStrictEqual(superseded!.data, { object: yield* get(`/ticket-quote/${quote.id}`), previousState: "sent" })
        assert.deepStrictEqual(priced!.data, { object: yield* get(`/ticket-model/${made.id}`) })
        assert.strictEqual((yield* getTicket(ticket.id)).state, "draft")

        const rejectedQuote = yield* post(`/ticket/${ticket.id}/quote`, {})
        yield* expectEvents(["ticket_quote.sent", "ticket.quoted"], "quoted again")
        yield* put(`/ticket-quote/${rejectedQuote.id}`, { ...rejectedQuote, state: "rejected" })
        const [rejected] = yield* expectEvents(["ticket_quote.rejected"], "a rejection, the ticket staying quoted")
        assert.deepStrictEqual(rejected!.data, { object: yield* get(`/ticket-quote/${rejectedQuote.id}`), previousState: "sent" })
        const again = yield* post(`/ticket/${ticket.id}/quote`, {})
        yield* expectEvents(["ticket_quote.sent"], "a quote of a quoted ticket, no other quote open")
        yield* put(`/ticket/${ticket.id}/cancel`)
        const [cancelled] = yield* expectEvents(["ticket.cancelled"], "the cancel")
        assert.deepStrictEqual(cancelled!.data, { object: yield* getTicket(ticket.id), previousState: "quoted" })
        assert.strictEqual((yield* get(`/ticket-quote/${again.id}`)).state, "withdrawn")
        refused(yield* call("PUT", `/ticket/${ticket.id}/cancel`), 409, "cancelled")
        yield* expectEvents([], "a second cancel")
      }))

    it.effect("reel.low: once when a write takes a reel under its group's threshold, not again while it stays under", () =>
      Effect.gen(function*() {
        const { call, post, put, get, materials, expectEvents } = yield* setup
        const group = yield* post("/reel-group", { name: "PLA", materialId: materials.fdm.id, reelWeight: 1000, lowWeightThreshold: 100 })
        assert.strictEqual(group.lowWeightThreshold, 100)
        assert.deepStrictEqual(yield* get(`/reel-group/${group.id}`), group, "the threshold reads back as written")
        const reelNow = (id: string) => Effect.map(get(`/reel?ids=${id}`), (reels) => reels[0])

        const [full, nearlyEmpty] = yield* post(`/inventory-product-location/${group.id}/reel`, { reels: [{ remainingWeight: 500 }, { remainingWeight: 50 }] })
        const [created] = yield* expectEvents(["reel.low"], "a new reel under the threshold")
        assert.deepStrictEqual(created!.data, { object: yield* reelNow(nearlyEmpty.id), threshold: 100 })

        const weigh = (remainingWeight: number) => put("/reel", { id: full.id, reelGroupId: group.id, remainingWeight })
        yield* weigh(150)
        yield* weigh(100)
        yield* expectEvents([], "at or above the threshold")
        yield* weigh(80)
        const [low] = yield* expectEvents(["reel.low"], "under it")
        assert.deepStrictEqual(low!.data, { object: yield* reelNow(full.id), threshold: 100 })
        assert.strictEqual(low!.data.object.remainingWeight, 80)
        yield* weigh(60)
        yield* expectEvents([], "still under it")
        refused(yield* call("PUT", "/reel", { id: full.id, reelGroupId: group.id, remainingWeight: 2000 }), 422, "remainingWeight")
        yield* weigh(120)
        yield* expectEvents([], "a refused write, then back above")
        yield* weigh(90)
        yield* expectEvents(["reel.low"], "under it again")

        // A higher threshold makes low the reels it puts under; those under the old one already are not announced again.
        const [spare] = yield* post(`/inventory-product-location/${group.id}/reel`, { reels: [{ remainingWeight: 150 }] })
        yield* expectEvents([], "a new reel above the threshold")
        const raised = yield* put("/reel-group", { ...group, lowWeightThreshold: 200 })
        assert.strictEqual(raised.lowWeightThreshold, 200)
        const [byGroup] = yield* expectEvents(["reel.low"], "a raised threshold")
        assert.deepStrictEqual(byGroup!.data, { object: yield* reelNow(spare.id), threshold: 200 })
        // Without the field the group has no threshold (a whole-record replace), and no reel is low.
        const { lowWeightThreshold: _threshold, ...withoutThreshold } = raised
        assert.notProperty(yield* put("/reel-group", withoutThreshold), "lowWeightThreshold")
        assert.notProperty(yield* get(`/reel-group/${group.id}`), "lowWeightThreshold")
        yield* weigh(10)
        yield* expectEvents([], "no threshold")
      }))

    it.effect("expireQuotes stores every app's quotes past their validity as expired, one event each, in batches; reads agree before and after", () =>
      Effect.gen(function*() {
        const { appId, post, get, ticket, part, expectEvents, feed } = yield* setup
        const sql = yield* SqlClient.SqlClient
        const records = yield* RecordRepository
        yield* part(ticket.id, "fdm", 1)
        const quote = yield* post(`/ticket/${ticket.id}/quote`, {})
        const other = yield* post("/ticket", { projectId: ticket.projectId, name: "Still valid" })
        yield* part(other.id, "fdm", 1)
        const valid = yield* post(`/ticket/${other.id}/quote`, {})
        yield* expectEvents(
          [...Array(2).fill(["ticket_model.created", "ticket_model.analysed", "ticket_model.priced", "ticket_quote.sent", "ticket.quoted"]).flat()],
          "two quoted tickets"
        )

        const past = new Date(Date.now() - 60_000).toISOString()
        const { createdAt: _c, updatedAt: _u, id: _i, number: _n, ...fields } = (yield* records.find("ticketQuote", appId, quote.id))!
        const many = 2 * EXPIRY_BATCH + 5
        // Made past their validity and swept in one transaction, so that no other sweep (the relay's) takes them first.
        const moved = yield* sql.withTransaction(Effect.gen(function*() {
          yield* records.replace("ticketQuote", appId, quote.id, { ...fields, validUntil: past })
          for (let index = 0; index < many; index++) {
            yield* records.insert("ticketQuote", appId, { ...fields, validUntil: past, lines: [] }, { numberPrefix: "Q" })
          }
          return yield* expireQuotes
        }))
        assert.strictEqual(moved, many + 1)

        const expired = yield* expectEvents(Array(many + 1).fill("ticket_quote.expired"), "the sweep")
        assert.strictEqual(new Set(expired.map((event) => event.data.object.id)).size, many + 1, "one event per quote")
        for (const event of expired) assert.deepStrictEqual([event.data.object.state, event.data.previousState], ["expired", "sent"])
        const read = yield* get(`/ticket-quote/${quote.id}`)
        assert.strictEqual(read.state, "expired")
        assert.deepStrictEqual(expired.find((event) => event.data.object.id === quote.id)!.data.object, read)
        assert.strictEqual((yield* records.find("ticketQuote", appId, quote.id))!.state, "expired", "stored as it reads")
        assert.deepStrictEqual((yield* get(`/ticket-quote?ticketId=${ticket.id}&state=expired&limit=1000`)).length, many + 1)
        assert.strictEqual((yield* get(`/ticket-quote/${valid.id}`)).state, "sent", "a valid quote stays sent")

        assert.strictEqual(yield* expireQuotes, 0, "nothing left to move")
        yield* expectEvents([], "a second sweep")
        assert.strictEqual((yield* feed.all).filter((event) => event.type === "ticket_quote.expired").length, many + 1)
      }).pipe(Effect.provide(RecordRepository.layer)))

    it.effect("a quote read as expired stays expired after the sweep; the GET before it and after it agree", () =>
      Effect.gen(function*() {
        const { appId, post, get, ticket, part } = yield* setup
        yield* part(ticket.id, "fdm", 1)
        const quote = yield* post(`/ticket/${ticket.id}/quote`, {})
        yield* patch("ticketQuote", appId, quote.id, { validUntil: new Date(Date.now() - 1000).toISOString() })
        const before = yield* get(`/ticket-quote/${quote.id}`)
        assert.strictEqual(before.state, "expired", "read as expired before any sweep")
        yield* expireQuotes.pipe(Effect.provide(RecordRepository.layer))
        const after = yield* get(`/ticket-quote/${quote.id}`)
        const { updatedAt: _before, ...same } = before
        const { updatedAt: _after, ...sameAfter } = after
        assert.deepStrictEqual(sameAfter, same)
      }))

    if (backend === "postgres") {
      it.effect("the sweep skips a quote whose ticket another transaction holds (a move under way), and takes it next time", () =>
        Effect.gen(function*() {
          const { appId, post, ticket, part, feed } = yield* setup
          yield* part(ticket.id, "fdm", 1)
          const quote = yield* post(`/ticket/${ticket.id}/quote`, {})
          yield* patch("ticketQuote", appId, quote.id, { validUntil: new Date(Date.now() - 1000).toISOString() })
          const url = Redacted.value(Option.getOrThrow((yield* AppConfig).databaseUrl))
          const holder = new pg.Client({ connectionString: url })
          yield* Effect.promise(async () => {
            await holder.connect()
            await holder.query("BEGIN")
            await holder.query("SELECT 1 FROM engine_record WHERE resource = 'ticket' AND id = $1 FOR UPDATE", [ticket.id])
          })
          const stateOf = Effect.map(
            Effect.flatMap(RecordRepository, (records) => records.find("ticketQuote", appId, quote.id)),
            (found) => found!.state
          )
          yield* expireQuotes
          const held = yield* stateOf
          yield* Effect.promise(async () => {
            await holder.query("ROLLBACK")
            await holder.end()
          })
          assert.strictEqual(held, "sent", "left for the next sweep")
          yield* expireQuotes
          assert.strictEqual(yield* stateOf, "expired")
          const expired = (yield* feed.all).filter((event) => event.type === "ticket_quote.expired")
          assert.deepStrictEqual(expired.map((event) => event.data.object.id), [quote.id])
        }).pipe(Effect.provide(RecordRepository.layer)))
    }
  })
}
