/**
 * The production side of the engine's rules (issue 15), as an integrator
 * meets them through HTTP and MCP, one test per rule: a ticket goes to
 * production only once accepted and is completed when its service jobs are
 * done; service jobs and their PPS records move queued → running ⇄ paused →
 * done; a part is in at most one open job of its own technology; machines,
 * reels and reel groups agree on technology and weight; reel-group paths and
 * lists keep the spec's conventions. Each refusal is checked for its status,
 * `type` and the field or state its message names. The state tables these
 * tests follow are in docs/workflows-production.md.
 */
import { assert, layer } from "@effect/vitest"
import { Duration, Effect, Layer } from "effect"
import { modelFetcherLayer } from "../../src/engine/geometry/ModelFetcher.ts"
import { binaryStl, box } from "../../src/engine/geometry/writers.ts"
import { backends } from "../support/backends.ts"
import { FileHost, FileHostLive } from "../support/fileHost.ts"
import { appWithTicket, ok } from "../support/http.ts"
import { mcpToolCall } from "../support/mcp.ts"
import { type Reply, TestApp, TestClient } from "../support/TestApp.ts"

const FILES = { "/models/cube.stl": binaryStl(box(20, 20, 20)) }
const MUNICH = { latitude: 48.1351, longitude: 11.582 }

/** Parts are priced from real files on the local host (so they can be quoted); `*.example` stays a placeholder. */
const fetcher = modelFetcherLayer({ allowPrivate: true, timeout: Duration.seconds(5), placeholderHosts: ["example"] })

/** An engine refusal: its status, `type`, `code`, the engine named as the source, and each of `names` in the message. */
const refused = (reply: Reply, status: number, type: string, ...names: ReadonlyArray<string>) => {
  assert.strictEqual(reply.status, status, reply.text)
  const body = reply.json()
  assert.strictEqual(body.code, status)
  assert.strictEqual(body.type, type, reply.text)
  assert.strictEqual(reply.headers.get("x-error-source"), "engine")
  for (const name of names) assert.include(body.message, name)
  return body.message as string
}

/** The JSON-RPC message of an MCP reply, plain JSON or the last SSE event. */
const rpcMessage = (text: string) => {
  const trimmed = text.trim()
  if (trimmed.startsWith("{")) return JSON.parse(trimmed)
  const data = trimmed.split("\n").filter((line) => line.startsWith("data:")).map((line) => line.slice(5).trim()).filter((line) => line !== "")
  return JSON.parse(data[data.length - 1]!)
}

for (const backend of backends) {
  layer(Layer.merge(TestApp(backend, {}, { modelFetcher: fetcher }), FileHostLive(FILES)), {
    timeout: 60_000,
    excludeTestServices: true
  })(`Production rules over HTTP and MCP (${backend})`, (it) => {
    /** A fresh app with a project, an FDM and an SLA material, and helpers to build tickets, parts and jobs through the API. */
    const setup = Effect.gen(function*() {
      const host = yield* FileHost
      const client = yield* TestClient
      const { appId, call, project } = yield* appWithTicket("rules-production")
      const { value: secret } = yield* client.createSecret(appId)
      const body = (what: string) => (reply: Reply) => ok(reply, what)
      const post = (path: string, payload: unknown) => Effect.map(call("POST", path, payload), body(`POST ${path}`))
      const put = (path: string, payload?: unknown) => Effect.map(call("PUT", path, payload), body(`PUT ${path}`))
      const get = (path: string) => Effect.map(call("GET", path), body(`GET ${path}`))
      const materials = {
        fdm: yield* post("/material", { name: "PLA", technologyId: "fdm" }),
        sla: yield* post("/material", { name: "Resin", technologyId: "sla" })
      }
      const ticket = (name: string) => post("/ticket", { projectId: project.id, name })
      /** A part priced from a real model file, so that its ticket can be quoted. */
      const part = (ticketId: string, technologyId: "fdm" | "sla", quantity: number) =>
        post("/ticket-model", {
          ticketId,
          modelEndpoint: { url: `${host.url}/models/cube.stl` },
          technologyId,
          materialId: materials[technologyId].id,
          quantity
        })
      const stateOf = (ticketId: string) => Effect.map(get(`/ticket/lookup?identifier=${ticketId}`), (found) => found.state as string)
      /** The public flow to an accepted ticket: a quote of its parts and items, accepted as sent. */
      const accept = (ticketId: string) =>
        Effect.gen(function*() {
          const quote = yield* post(`/ticket/${ticketId}/quote`, {})
          const { currencyId, lines, validUntil } = quote
          yield* put(`/ticket-quote/${quote.id}`, { ticketId, currencyId, validUntil, lines, state: "accepted" })
          assert.strictEqual(yield* stateOf(ticketId), "accepted")
        })
      /** An accepted ticket with parts of the given technologies and quantities. */
      const acceptedTicket = (name: string, parts: ReadonlyArray<readonly ["fdm" | "sla", number]>) =>
        Effect.gen(function*() {
          const created = yield* ticket(name)
          const made: Array<any> = []
          for (const [technologyId, quantity] of parts) made.push(yield* part(created.id, technologyId, quantity))
          yield* accept(created.id)
          return { ticket: created, parts: made }
        })
      const job = (name: string, technologyId: string, ticketModelIds: ReadonlyArray<string>, extra: Record<string, unknown> = {}) =>
        post("/service-job", { name, technologyId, ticketModelIds, ...extra })
      /** The job's PPS record of the part. */
      const recordOf = (jobId: string, partId: string) =>
        Effect.map(get(`/service-job/${jobId}/production`), (production) => production.pps.find((r: any) => r.ticketModelId === partId))
      const progress = (jobId: string, ppsId: string, state: string, producedQuantity: number, scrappedQuantity = 0) =>
        call("PUT", `/service-job/${jobId}/production/${ppsId}`, { state, producedQuantity, scrappedQuantity })
      return { appId, secret, client, call, post, put, get, materials, project, ticket, part, stateOf, accept, acceptedTicket, job, recordOf, progress }
    })

    // Rule 1, production side: send to production needs `accepted`.
    it.effect("a ticket goes to production only once accepted: draft and quoted are refused naming the state", () =>
      Effect.gen(function*() {
        const { call, post, get, ticket, part, accept, stateOf } = yield* setup
        const fdmGroup = yield* post("/machine-group", { name: "FDM farm", technologyId: "fdm" })
        const t = yield* ticket("Assembly")
        const p1 = yield* part(t.id, "fdm", 5)
        const p2 = yield* part(t.id, "fdm", 1)
        const p3 = yield* part(t.id, "sla", 2)

        refused(yield* call("PUT", `/ticket/${t.id}/send-to-production`), 409, "Conflict", `ticket ${t.number} is draft`, "accepted")
        yield* post(`/ticket/${t.id}/quote`, {})
        refused(yield* call("PUT", `/ticket/${t.id}/send-to-production`), 409, "Conflict", `ticket ${t.number} is quoted`, "accepted")
        assert.deepStrictEqual(yield* get(`/service-job?ticketId=${t.id}`), [], "a refused send makes no job")

        const [quote] = yield* get(`/ticket-quote?ticketId=${t.id}`)
        const { currencyId, lines, validUntil } = quote
        ok(yield* call("PUT", `/ticket-quote/${quote.id}`, { ticketId: t.id, currencyId, validUntil, lines, state: "accepted" }), "accept")
        const jobs = ok(yield* call("PUT", `/ticket/${t.id}/send-to-production`), "send") as Array<any>
        assert.strictEqual(yield* stateOf(t.id), "in_production")
        assert.strictEqual(jobs.length, 2)
        const fdm = jobs.find((job) => job.technologyId === "fdm")
        const sla = jobs.find((job) => job.technologyId === "sla")
        assert.include(fdm, { name: `${t.number} fdm`, ticketId: t.id, machineGroupId: fdmGroup.id, state: "queued" })
        assert.sameMembers(fdm.ticketModelIds, [p1.id, p2.id])
        assert.strictEqual(sla.machineGroupId, null)
        assert.deepStrictEqual(sla.ticketModelIds, [p3.id])
        const pps = yield* get(`/pps?serviceJobId=${fdm.id}`)
        assert.sameDeepMembers(pps.map((r: any) => ({ part: r.ticketModelId, quantity: r.quantity, state: r.state })), [
          { part: p1.id, quantity: 5, state: "planned" },
          { part: p2.id, quantity: 1, state: "planned" }
        ])

        refused(yield* call("PUT", `/ticket/${t.id}/send-to-production`), 409, "Conflict", `ticket ${t.number} is in_production`)
        refused(yield* call("PUT", "/ticket/no-ticket/send-to-production"), 404, "NotFound", "no-ticket")
        // Accepted with items only: nothing to produce.
        const itemsOnly = yield* ticket("Fees")
        yield* post("/item", { ticketId: itemsOnly.id, name: "Setup fee", quantity: 1, unitPrice: 50 })
        yield* accept(itemsOnly.id)
        refused(yield* call("PUT", `/ticket/${itemsOnly.id}/send-to-production`), 422, "ValidationError", "no parts")
      }))

    it.effect("send_ticket_to_production on an unaccepted ticket is an MCP tool error naming the state", () =>
      Effect.gen(function*() {
        const { client, secret, call, ticket, part, post } = yield* setup
        const t = yield* ticket("Over MCP")
        yield* part(t.id, "fdm", 1)
        const tool = (id: string) =>
          Effect.promise(async () => {
            const response = await mcpToolCall(client.baseUrl, secret, "send_ticket_to_production", { id })
            assert.strictEqual(response.status, 200)
            return rpcMessage(await response.text()).result as { isError?: boolean; content: Array<{ type: string; text: string }> }
          })
        const errorOf = (result: { isError?: boolean; content: Array<{ type: string; text: string }> }) => {
          assert.isTrue(result.isError)
          return JSON.parse(result.content.find((block) => block.type === "text")!.text)
        }
        const draft = errorOf(yield* tool(t.id))
        assert.include(draft, { code: 409, type: "Conflict" })
        assert.include(draft.message, `ticket ${t.number} is draft`)
        yield* post(`/ticket/${t.id}/quote`, {})
        const quoted = errorOf(yield* tool(t.id))
        assert.include(quoted, { code: 409, type: "Conflict" })
        assert.include(quoted.message, `ticket ${t.number} is quoted`)
        // The same refusal as the REST API's.
        assert.deepStrictEqual(quoted, (yield* call("PUT", `/ticket/${t.id}/send-to-production`)).json())
      }))

    it.effect("a ticket is completed when all its service jobs are done", () =>
      Effect.gen(function*() {
        const { call, put, get, acceptedTicket, stateOf, recordOf, progress } = yield* setup
        const { parts: [fdmPart, slaPart], ticket } = yield* acceptedTicket("Two technologies", [["fdm", 2], ["sla", 1]])
        const jobs = ok(yield* call("PUT", `/ticket/${ticket.id}/send-to-production`), "send") as Array<any>
        const fdm = jobs.find((job) => job.technologyId === "fdm")
        const sla = jobs.find((job) => job.technologyId === "sla")
        yield* put(`/service-job/${fdm.id}/timeline/start`)
        yield* put(`/service-job/${sla.id}/timeline/start`)

        const fdmRecord = yield* recordOf(fdm.id, fdmPart.id)
        ok(yield* progress(fdm.id, fdmRecord.id, "done", 2), "fdm done")
        const fdmDone = yield* get(`/service-job/${fdm.id}`)
        assert.strictEqual(fdmDone.state, "done", "its only record is done: the job is done")
        assert.isString(fdmDone.timeline.at(-1).stoppedAt, "and its running interval closed")
        assert.strictEqual(yield* stateOf(ticket.id), "in_production", "the SLA job is still running")

        const slaRecord = yield* recordOf(sla.id, slaPart.id)
        ok(yield* progress(sla.id, slaRecord.id, "done", 1), "sla done")
        assert.strictEqual((yield* get(`/service-job/${sla.id}/production`)).state, "done")
        assert.strictEqual(yield* stateOf(ticket.id), "completed")
        refused(yield* call("PUT", `/ticket/${ticket.id}/send-to-production`), 409, "Conflict", `ticket ${ticket.number} is completed`)
      }))

    // Rule 3: service jobs and production records.
    it.effect("a job moves queued → running ⇄ paused → done: production needs a started job, done needs the planned quantity", () =>
      Effect.gen(function*() {
        const { call, put, get, ticket, part, job, recordOf, progress } = yield* setup
        const t = yield* ticket("Brackets")
        const [p1, p2] = [yield* part(t.id, "fdm", 3), yield* part(t.id, "fdm", 2)]
        const created = yield* job("Brackets", "fdm", [p1.id, p2.id])
        const [r1, r2] = [yield* recordOf(created.id, p1.id), yield* recordOf(created.id, p2.id)]

        refused(yield* progress(created.id, r1.id, "in_production", 1), 409, "Conflict", `service job ${created.id} is queued`)
        refused(yield* call("PUT", `/service-job/${created.id}/timeline/stop`), 409, "Conflict", "is queued")
        yield* put(`/service-job/${created.id}/timeline/start`)
        refused(yield* call("PUT", `/service-job/${created.id}/timeline/start`), 409, "Conflict", "is running")
        const paused = yield* put(`/service-job/${created.id}/timeline/stop`)
        assert.strictEqual(paused.state, "paused")

        refused(yield* progress(created.id, r1.id, "done", 0), 422, "ValidationError", "producedQuantity", "planned quantity 3")
        refused(yield* progress(created.id, r1.id, "in_production", 4), 422, "ValidationError", "producedQuantity", "planned quantity 3")
        // Scrapped pieces come besides the good ones: 3 good and 1 scrapped is done.
        assert.include(ok(yield* progress(created.id, r1.id, "done", 3, 1), "r1 done"), { state: "done", producedQuantity: 3, scrappedQuantity: 1 })
        refused(yield* progress(created.id, r1.id, "in_production", 2), 409, "Conflict", `pps ${r1.id} is done`)
        assert.strictEqual((yield* get(`/service-job/${created.id}`)).state, "paused", "one record is not done yet")

        ok(yield* progress(created.id, r2.id, "done", 2), "r2 done")
        const done = yield* get(`/service-job/${created.id}`)
        assert.strictEqual(done.state, "done", "all records done leave the job done, not paused")
        assert.include(yield* get(`/service-job/${created.id}/production`), { state: "done", quantity: 5, producedQuantity: 5, scrappedQuantity: 1 })

        refused(yield* call("PUT", `/service-job/${created.id}/timeline/start`), 409, "Conflict", "is done")
        refused(yield* progress(created.id, r2.id, "done", 2), 409, "Conflict", `service job ${created.id} is done`)
        refused(
          yield* call("PUT", `/service-job/${created.id}`, { name: "Renamed", technologyId: "fdm", ticketModelIds: [p1.id] }),
          409,
          "Conflict",
          `service job ${created.id} is done`
        )
        const renamed = yield* put(`/service-job/${created.id}`, { name: "Renamed", technologyId: "fdm", ticketModelIds: [p1.id, p2.id] })
        assert.include(renamed, { name: "Renamed", state: "done" })
      }))

    it.effect("a part is in at most one open service job: create, replace and send to production refuse it naming the other job", () =>
      Effect.gen(function*() {
        const { call, put, acceptedTicket, job, recordOf, progress } = yield* setup
        const { parts: [p1, p2], ticket } = yield* acceptedTicket("Shared", [["fdm", 1], ["fdm", 1]])
        const first = yield* job("First", "fdm", [p1.id])
        const second = yield* job("Second", "fdm", [p2.id])

        refused(
          yield* call("POST", "/service-job", { name: "Again", technologyId: "fdm", ticketModelIds: [p1.id] }),
          409,
          "Conflict",
          `service job ${first.id} is queued`,
          p1.id
        )
        refused(
          yield* call("PUT", `/service-job/${second.id}`, { name: "Second", technologyId: "fdm", ticketModelIds: [p2.id, p1.id] }),
          409,
          "Conflict",
          `service job ${first.id} is queued`
        )
        refused(yield* call("PUT", `/ticket/${ticket.id}/send-to-production`), 409, "Conflict", `service job ${first.id}`, p1.id)

        // Done, the job is no longer open: the part may be made again in a new job, with a record of its own.
        yield* put(`/service-job/${first.id}/timeline/start`)
        ok(yield* progress(first.id, (yield* recordOf(first.id, p1.id)).id, "done", 1), "done")
        const rework = yield* job("Rework", "fdm", [p1.id])
        assert.notStrictEqual((yield* recordOf(rework.id, p1.id)).id, (yield* recordOf(first.id, p1.id)).id)
      }))

    it.effect("all parts of a job share its technology on create and replace, as do its machine group and machine", () =>
      Effect.gen(function*() {
        const { call, post, ticket, part, job } = yield* setup
        const t = yield* ticket("Mixed")
        const [fdmPart, slaPart] = [yield* part(t.id, "fdm", 1), yield* part(t.id, "sla", 1)]
        refused(
          yield* call("POST", "/service-job", { name: "FDM", technologyId: "fdm", ticketModelIds: [fdmPart.id, slaPart.id] }),
          422,
          "ValidationError",
          "ticketModelIds",
          slaPart.id
        )
        const fdmJob = yield* job("FDM", "fdm", [fdmPart.id])
        refused(
          yield* call("PUT", `/service-job/${fdmJob.id}`, { name: "FDM", technologyId: "fdm", ticketModelIds: [slaPart.id] }),
          422,
          "ValidationError",
          "ticketModelIds",
          slaPart.id
        )
        refused(
          yield* call("PUT", `/service-job/${fdmJob.id}`, { name: "FDM", technologyId: "sla", ticketModelIds: [fdmPart.id] }),
          422,
          "ValidationError",
          "ticketModelIds",
          fdmPart.id
        )
        const slaGroup = yield* post("/machine-group", { name: "Resin room", technologyId: "sla" })
        refused(
          yield* call("PUT", `/service-job/${fdmJob.id}`, { name: "FDM", technologyId: "fdm", ticketModelIds: [fdmPart.id], machineGroupId: slaGroup.id }),
          422,
          "ValidationError",
          "machineGroupId"
        )
        const slaMachine = yield* post("/machine", { name: "Form", technologyId: "sla", location: MUNICH })
        refused(
          yield* call("POST", "/service-job", { name: "J", technologyId: "fdm", ticketModelIds: [], machineId: slaMachine.id }),
          422,
          "ValidationError",
          "machineId"
        )
      }))

    it.effect("a job can be deleted only while queued", () =>
      Effect.gen(function*() {
        const { call, put, ticket, part, job } = yield* setup
        const t = yield* ticket("Deletions")
        const [p1, p2, p3] = [yield* part(t.id, "fdm", 1), yield* part(t.id, "fdm", 1), yield* part(t.id, "fdm", 1)]
        const running = yield* job("Running", "fdm", [p1.id])
        yield* put(`/service-job/${running.id}/timeline/start`)
        refused(yield* call("DELETE", `/service-job/${running.id}`), 409, "Conflict", `service job ${running.id} is running`)
        yield* put(`/service-job/${running.id}/timeline/stop`)
        refused(yield* call("DELETE", `/service-job/${running.id}`), 409, "Conflict", "is paused")
        const source = yield* job("Source", "fdm", [p2.id])
        yield* put("/service-job/merge", { targetServiceJobId: running.id, sourceServiceJobIds: [source.id] })
        refused(yield* call("DELETE", `/service-job/${source.id}`), 409, "Conflict", "is merged")
        const queued = yield* job("Queued", "fdm", [p3.id])
        assert.strictEqual(ok(yield* call("DELETE", `/service-job/${queued.id}`), "delete").id, queued.id)
      }))

    it.effect("a part taken out of a job and put back keeps its production record", () =>
      Effect.gen(function*() {
        const { call, put, get, ticket, part, job, recordOf, progress } = yield* setup
        const t = yield* ticket("Round trip")
        const [p1, p2] = [yield* part(t.id, "fdm", 4), yield* part(t.id, "fdm", 2)]
        const created = yield* job("Job", "fdm", [p1.id, p2.id])
        yield* put(`/service-job/${created.id}/timeline/start`)
        const record = yield* recordOf(created.id, p1.id)
        ok(yield* progress(created.id, record.id, "in_production", 2, 1), "progress")

        yield* put(`/service-job/${created.id}`, { name: "Job", technologyId: "fdm", ticketModelIds: [p2.id] })
        assert.include(yield* get(`/pps/${record.id}`), { serviceJobId: null, state: "in_production", producedQuantity: 2, scrappedQuantity: 1 })
        assert.deepStrictEqual((yield* get(`/service-job/${created.id}/production`)).pps.map((r: any) => r.ticketModelId), [p2.id])

        yield* put(`/service-job/${created.id}`, { name: "Job", technologyId: "fdm", ticketModelIds: [p2.id, p1.id] })
        assert.include(yield* recordOf(created.id, p1.id), { id: record.id, state: "in_production", producedQuantity: 2, scrappedQuantity: 1 })
        assert.lengthOf(yield* get(`/pps?ticketModelId=${p1.id}`), 1, "one record, never a second")

        // The same when the part goes to another job by replaces, or its queued job is deleted.
        yield* put(`/service-job/${created.id}`, { name: "Job", technologyId: "fdm", ticketModelIds: [p2.id] })
        const other = yield* job("Other", "fdm", [p1.id])
        assert.strictEqual((yield* recordOf(other.id, p1.id)).id, record.id)
        ok(yield* call("DELETE", `/service-job/${other.id}`), "delete")
        assert.include(yield* get(`/pps/${record.id}`), { serviceJobId: null, producedQuantity: 2, scrappedQuantity: 1 })
      }))

    // Rule 4: eligibility on the production side.
    it.effect("a machine is of its group's technology", () =>
      Effect.gen(function*() {
        const { call, post } = yield* setup
        const fdmGroup = yield* post("/machine-group", { name: "Printers", technologyId: "fdm" })
        refused(
          yield* call("POST", "/machine", { name: "Form", technologyId: "sla", machineGroupId: fdmGroup.id, location: MUNICH }),
          422,
          "ValidationError",
          "technologyId",
          fdmGroup.id
        )
        const printer = yield* post("/machine", { name: "P1", technologyId: "fdm", machineGroupId: fdmGroup.id, location: MUNICH })
        refused(
          yield* call("PUT", `/machine/${printer.id}`, { name: "P1", technologyId: "sla", machineGroupId: fdmGroup.id, location: MUNICH }),
          422,
          "ValidationError",
          "technologyId"
        )
        // From the group's side: its technology is its machines', so it cannot change under them.
        yield* post("/machine", { name: "P2", technologyId: "fdm", machineGroupId: fdmGroup.id, location: MUNICH })
        refused(
          yield* call("PUT", `/machine-group/${fdmGroup.id}`, { name: "Printers", technologyId: "sla" }),
          422,
          "ValidationError",
          "technologyId: machine group",
          "2 machines (machine)"
        )
        const unchanged = yield* call("GET", `/machine-group/${fdmGroup.id}`)
        assert.strictEqual(unchanged.json().technologyId, "fdm")
        // Other fields change freely; an empty group takes another technology.
        assert.strictEqual((yield* call("PUT", `/machine-group/${fdmGroup.id}`, { name: "FDM farm", technologyId: "fdm" })).json().name, "FDM farm")
        const empty = yield* post("/machine-group", { name: "Spare", technologyId: "fdm" })
        assert.strictEqual((yield* call("PUT", `/machine-group/${empty.id}`, { name: "Spare", technologyId: "sla" })).json().technologyId, "sla")
      }))

    it.effect("a machine group or machine named by a service job keeps its technology; so does a part in a job", () =>
      Effect.gen(function*() {
        const { call, post, ticket, part, materials, job } = yield* setup
        const group = yield* post("/machine-group", { name: "Printers", technologyId: "fdm" })
        const printer = yield* post("/machine", { name: "P1", technologyId: "fdm", location: MUNICH })
        const t = yield* ticket("Jobs by hand")
        const p = yield* part(t.id, "fdm", 2)
        yield* job("By hand", "fdm", [p.id], { machineGroupId: group.id, machineId: printer.id })
        refused(
          yield* call("PUT", `/machine-group/${group.id}`, { name: "Printers", technologyId: "sla" }),
          422,
          "ValidationError",
          "technologyId",
          "1 service job (serviceJob)"
        )
        refused(
          yield* call("PUT", `/machine/${printer.id}`, { name: "P1", technologyId: "sla", location: MUNICH }),
          422,
          "ValidationError",
          "technologyId: machine",
          "1 service job (serviceJob)"
        )
        // The part's ticket is a draft, so the part can change, but not out of its job's technology.
        const { createdAt: _c, fileName: _f, geometry: _g, id: _i, productionTimes: _p, totalPrice: _t, unitPrice: _u, updatedAt: _m, ...body } = p
        refused(
          yield* call("PUT", `/ticket-model/${p.id}`, { ...body, technologyId: "sla", materialId: materials.sla.id }),
          422,
          "ValidationError",
          "technologyId: part",
          "1 service job (serviceJob)"
        )
        assert.strictEqual((yield* call("PUT", `/ticket-model/${p.id}`, { ...body, quantity: 3 })).json().quantity, 3)
      }))

    it.effect("reels are loaded only on machines of their material's technology", () =>
      Effect.gen(function*() {
        const { call, post, put, materials } = yield* setup
        const pla = yield* post("/reel-group", { name: "PLA black", materialId: materials.fdm.id })
        const [reel] = yield* post(`/inventory-product-location/${pla.id}/reel`, { reels: [{ remainingWeight: 500 }] })
        const printer = yield* post("/machine", { name: "Printer", technologyId: "fdm", location: MUNICH })
        const resinPrinter = yield* post("/machine", { name: "Form", technologyId: "sla", location: MUNICH })

        refused(yield* call("PUT", `/machine/${resinPrinter.id}/reels`, { reelIds: [reel.id] }), 422, "ValidationError", "reelIds", reel.id)
        refused(
          yield* call("PUT", "/reel", { id: reel.id, reelGroupId: pla.id, remainingWeight: 500, machineId: resinPrinter.id }),
          422,
          "ValidationError",
          "machineId"
        )
        assert.deepStrictEqual((yield* put(`/machine/${printer.id}/reels`, { reelIds: [reel.id] })).reelIds, [reel.id])

        // Loaded, the reel keeps its machine, its group's material and the material's technology in agreement.
        refused(
          yield* call("PUT", `/machine/${printer.id}`, { name: "Printer", technologyId: "sla", location: MUNICH }),
          422,
          "ValidationError",
          "technologyId",
          reel.id
        )
        refused(
          yield* call("PUT", "/reel-group", { id: pla.id, name: "PLA black", materialId: materials.sla.id }),
          422,
          "ValidationError",
          "materialId",
          reel.id
        )
        refused(yield* call("PUT", `/material/${materials.fdm.id}`, { name: "PLA", technologyId: "sla" }), 422, "ValidationError", "technologyId")
      }))

    it.effect("a reel holds at most its group's reel weight", () =>
      Effect.gen(function*() {
        const { call, post, get, materials } = yield* setup
        const group = yield* post("/reel-group", { name: "PLA 750 g", materialId: materials.fdm.id, reelWeight: 750 })
        refused(
          yield* call("POST", `/inventory-product-location/${group.id}/reel`, { reels: [{ remainingWeight: 700 }, { remainingWeight: 1200 }] }),
          422,
          "ValidationError",
          "reels.1.remainingWeight"
        )
        assert.deepStrictEqual(yield* get(`/inventory-product-location/${group.id}/reel`), [], "all or none")
        const [reel] = yield* post(`/inventory-product-location/${group.id}/reel`, { reels: [{ remainingWeight: 750 }] })
        refused(yield* call("PUT", "/reel", { id: reel.id, reelGroupId: group.id, remainingWeight: 1200 }), 422, "ValidationError", "remainingWeight")
        refused(
          yield* call("PUT", "/reel-group", { id: group.id, name: "PLA 500 g", materialId: materials.fdm.id, reelWeight: 500 }),
          422,
          "ValidationError",
          "reelWeight",
          reel.id
        )
      }))

    // Rule 8: spec conventions on the production side.
    it.effect("reel-group paths with an id that is no number answer as a missing group; the document declares integers", () =>
      Effect.gen(function*() {
        const { call, client, post, get, materials } = yield* setup
        const group = yield* post("/reel-group", { name: "PLA", materialId: materials.fdm.id })
        for (const id of ["abc", "7abc", "1.5", "-3", "0"]) {
          const missing = yield* call("GET", `/reel-group/${id}`)
          assert.strictEqual(missing.status, 200, `${id}: ${missing.text}`)
          assert.strictEqual(missing.text, "", id)
          assert.deepStrictEqual(yield* get(`/inventory-product-location/${id}/reel`), [], id)
          refused(yield* call("POST", `/inventory-product-location/${id}/reel`, { reels: [{ remainingWeight: 1 }] }), 404, "NotFound", id)
        }
        assert.deepStrictEqual(yield* get(`/reel-group/${String(group.id).padStart(6, "0")}`), group, "leading zeros name the same group")
        assert.deepStrictEqual(yield* get(`/reel-group?ids=abc&ids=${group.id}`), [group])

        const document = (yield* client.call("GET", "/openapi.json")).json()
        const parameter = (path: string, method: string, name: string) => document.paths[path][method].parameters.find((p: any) => p.name === name)
        const integer = { type: "integer", format: "int32", minimum: 1, maximum: 2_147_483_647 }
        assert.deepStrictEqual(parameter("/v1/reel-group/{id}", "get", "id").schema, integer)
        for (const method of ["get", "post"]) {
          assert.deepStrictEqual(
            parameter("/v1/inventory-product-location/{inventoryProductLocationId}/reel", method, "inventoryProductLocationId").schema,
            integer
          )
        }
        assert.deepStrictEqual(parameter("/v1/reel-group", "get", "ids").schema.anyOf[0], integer)
      }))

    it.effect("reel-group and service-job-production lists page with limit, offset and ids", () =>
      Effect.gen(function*() {
        const { call, post, get, materials, job } = yield* setup
        const groups: Array<any> = []
        for (const name of ["A", "B", "C"]) groups.push(yield* post("/reel-group", { name, materialId: materials.fdm.id }))
        assert.deepStrictEqual(yield* get("/reel-group?limit=2"), groups.slice(0, 2))
        assert.deepStrictEqual(yield* get("/reel-group?limit=2&offset=2"), groups.slice(2))
        assert.deepStrictEqual(yield* get(`/reel-group?ids=${groups[0].id}&ids=${groups[2].id}&offset=1`), [groups[2]])

        const jobs: Array<any> = []
        for (const name of ["J1", "J2", "J3"]) jobs.push(yield* job(name, "fdm", []))
        const ids = (productions: Array<any>) => productions.map((production) => production.serviceJobId)
        assert.deepStrictEqual(ids(yield* get("/service-job-production?limit=2")), [jobs[0].id, jobs[1].id])
        assert.deepStrictEqual(ids(yield* get("/service-job-production?limit=2&offset=2")), [jobs[2].id])
        assert.deepStrictEqual(ids(yield* get(`/service-job-production?ids=${jobs[1].id}&ids=${jobs[2].id}`)), [jobs[1].id, jobs[2].id])
        assert.deepStrictEqual(ids(yield* get(`/service-job-production?serviceJobIds=${jobs[0].id}`)), [jobs[0].id], "the older name still works")
        for (const query of ["limit=0", "limit=1001", "offset=-1", "limit=two"]) {
          assert.strictEqual((yield* call("GET", `/service-job-production?${query}`)).status, 400, query)
          assert.strictEqual((yield* call("GET", `/reel-group?${query}`)).status, 400, query)
        }
      }))
  })
}
