/**
 * Issue 15, rules 5, 7 and the gateway's part of 8, through HTTP:
 *
 * - 5: deleting a record that others reference is a 409 naming each
 *   referencing resource and how many, for declared references and the ones
 *   inside records; a delete racing a write that references the record
 *   never leaves the reference dangling.
 * - 7: numbers per app and prefix (an app's first ticket is T-000001), no two
 *   alike under concurrent creates; an `externalReference` held by one record
 *   per app and resource, also under concurrent writes.
 * - 8: an endpoint that declares no query parameters or no body answers 400
 *   naming what it does not take, on the router and on the direct record read alike.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { request as httpRequest } from "node:http"
import { RecordRepository, type StoredRecord } from "../../src/engine/RecordRepository.ts"
import { backends } from "../support/backends.ts"
import { appWithTicket, ok } from "../support/http.ts"
import { type Reply, TestApp, TestClient } from "../support/TestApp.ts"

/** Inserts a record straight into the engine's store (what no endpoint creates as needed here). */
const insert = (resource: string, appId: string, data: StoredRecord) =>
  Effect.gen(function*() {
    const records = yield* RecordRepository
    return yield* records.insert(resource, appId, data)
  }).pipe(Effect.provide(RecordRepository.layer))

/** An engine refusal: status, `type`, the engine as its source, and the words it must say. */
const refused = (reply: Reply, status: number, type: string, ...says: ReadonlyArray<string>) => {
  assert.strictEqual(reply.status, status, reply.text)
  const body = reply.json()
  assert.deepStrictEqual([body.code, body.type], [status, type], reply.text)
  assert.strictEqual(reply.headers.get("x-error-source"), "engine")
  for (const words of says) assert.include(body.message, words)
  return body.message as string
}

/** A gateway 400: `type`, no engine involved, and the name it gives in quotes (or the words it says). */
const badRequest = (reply: { status: number; text: string; headers: Headers }, type: string, says: string) => {
  assert.strictEqual(reply.status, 400, reply.text)
  const body = JSON.parse(reply.text)
  assert.deepStrictEqual([body.code, body.type], [400, type], reply.text)
  assert.include(body.message, says)
  assert.isNull(reply.headers.get("x-error-source"))
}

const PART_URL = "https://files.example/models/bracket.stl"
const MUNICH = { latitude: 48.14, longitude: 11.58 }

for (const backend of backends) {
  layer(TestApp(backend), { timeout: 120_000, excludeTestServices: true })(`Issue 15: integrity, numbers, undeclared input (${backend})`, (it) => {
    // ---------------------------------------------------------------------------------------------
    // Rule 5: referential integrity

    it.effect("5: a material used by parts, a catalogue configuration, a reel group and a blank cannot be deleted; unused, it can", () =>
      Effect.gen(function*() {
        const { call, ticket } = yield* appWithTicket("integrity-material")
        const material = ok(yield* call("POST", "/material", { name: "PLA", technologyId: "fdm" }), "material")
        const part = (materialId: string) =>
          call("POST", "/ticket-model", { ticketId: ticket.id, modelEndpoint: { url: PART_URL }, technologyId: "fdm", materialId, quantity: 2 })
        const parts = [ok(yield* part(material.id), "part 1"), ok(yield* part(material.id), "part 2")]
        const catalogue = ok(yield* call("POST", "/catalogue", { name: "Spares" }), "catalogue")
        const model = ok(
          yield* call("POST", "/catalogue-model", {
            catalogueId: catalogue.id,
            name: "Bracket",
            modelEndpoint: { url: PART_URL },
            configurations: [{ technologyId: "fdm", materialId: material.id }]
          }),
          "catalogue model"
        )
        ok(yield* call("POST", "/reel-group", { name: "PLA black", materialId: material.id }), "reel group")
        ok(yield* call("POST", "/blank", { name: "PLA block", materialId: material.id, dimensions: { x: 10, y: 10, z: 10 } }), "blank")

        const message = refused(
          yield* call("DELETE", `/material/${material.id}`),
          409,
          "Conflict",
          `material ${material.id} is used by `,
          "2 parts (ticketModel)",
          "1 catalogue model (catalogueModel)",
          "1 reel group (reelGroup)",
          "1 blank (blank)",
          "it cannot be deleted"
        )
        assert.match(message, /^material \S+ is used by .+ and .+: it cannot be deleted$/)
        assert.strictEqual(ok(yield* call("GET", `/material/${material.id}`), "still there").id, material.id)

        // Another material, used by a part and a configuration only: free once they are gone.
        const other = ok(yield* call("POST", "/material", { name: "PETG", technologyId: "fdm" }), "other material")
        const otherPart = ok(yield* part(other.id), "other part")
        ok(
          yield* call("PUT", `/catalogue-model/${model.id}`, {
            catalogueId: catalogue.id,
            name: "Bracket",
            modelEndpoint: { url: PART_URL },
            configurations: [{ ...model.configurations[0], materialId: other.id }]
          }),
          "configuration moved to the other material"
        )
        refused(yield* call("DELETE", `/material/${other.id}`), 409, "Conflict", "1 part (ticketModel)", "1 catalogue model (catalogueModel)")
        ok(yield* call("DELETE", `/ticket-model/${otherPart.id}`), "part deleted")
        ok(yield* call("DELETE", `/catalogue-model/${model.id}`), "catalogue model deleted")
        assert.strictEqual(ok(yield* call("DELETE", `/material/${other.id}`), "unused material deleted").id, other.id)
        assert.lengthOf(parts, 2)
      }))

    it.effect("5: a material series with materials, a machine group with machines or jobs, a machine in a job cannot be deleted", () =>
      Effect.gen(function*() {
        const { appId, call, ticket } = yield* appWithTicket("integrity-production")
        const series = yield* insert("materialSeries", appId, { technologyId: "fdm", name: "Filaments" })
        ok(yield* call("POST", "/material", { name: "PLA", technologyId: "fdm", materialSeriesId: series.id }), "material in the series")
        refused(yield* call("DELETE", `/material-series/${series.id}`), 409, "Conflict", `materialSeries ${series.id} is used by 1 material (material)`)

        const group = ok(yield* call("POST", "/machine-group", { name: "Printers", technologyId: "fdm" }), "group")
        const machines = [
          ok(yield* call("POST", "/machine", { name: "P1", technologyId: "fdm", machineGroupId: group.id, location: MUNICH }), "machine 1"),
          ok(yield* call("POST", "/machine", { name: "P2", technologyId: "fdm", machineGroupId: group.id, location: MUNICH }), "machine 2")
        ]
        refused(yield* call("DELETE", `/machine-group/${group.id}`), 409, "Conflict", `machineGroup ${group.id} is used by 2 machines (machine)`)

        const material = ok(yield* call("POST", "/material", { name: "PETG", technologyId: "fdm" }), "material for a part")
        const part = ok(
          yield* call("POST", "/ticket-model", {
            ticketId: ticket.id,
            modelEndpoint: { url: PART_URL },
            technologyId: "fdm",
            materialId: material.id,
            quantity: 1
          }),
          "part"
        )
        const job = ok(
          yield* call("POST", "/service-job", {
            name: "Job",
            technologyId: "fdm",
            machineGroupId: group.id,
            machineId: machines[0].id,
            ticketModelIds: [part.id]
          }),
          "job"
        )
        refused(yield* call("DELETE", `/machine-group/${group.id}`), 409, "Conflict", "2 machines (machine) and 1 service job (serviceJob)")
        refused(yield* call("DELETE", `/machine/${machines[0].id}`), 409, "Conflict", `machine ${machines[0].id} is used by 1 service job (serviceJob)`)
        // The other machine holds nothing a delete must keep.
        assert.strictEqual(ok(yield* call("DELETE", `/machine/${machines[1].id}`), "machine 2 deleted").id, machines[1].id)

        // A service job with a production note about it.
        ok(yield* call("POST", "/production-note", { serviceJobId: job.id, body: "Nozzle changed" }), "note")
        refused(yield* call("DELETE", `/service-job/${job.id}`), 409, "Conflict", `serviceJob ${job.id} is used by 1 production note (productionNote)`)
      }))

    it.effect("5: a part in a service job or on an accepted quote cannot be deleted; on a sent quote it can", () =>
      Effect.gen(function*() {
        const { appId, call, ticket } = yield* appWithTicket("integrity-part")
        const material = ok(yield* call("POST", "/material", { name: "PLA", technologyId: "fdm" }), "material")
        const part = () =>
          Effect.map(
            call("POST", "/ticket-model", { ticketId: ticket.id, modelEndpoint: { url: PART_URL }, technologyId: "fdm", materialId: material.id, quantity: 1 }),
            (reply) => ok(reply, "part")
          )
        const [inJob, accepted, sent] = [yield* part(), yield* part(), yield* part()]

        ok(yield* call("POST", "/service-job", { name: "Job", technologyId: "fdm", ticketModelIds: [inJob.id] }), "job")
        refused(
          yield* call("DELETE", `/ticket-model/${inJob.id}`),
          409,
          "Conflict",
          `ticketModel ${inJob.id} is used by `,
          "1 service job (serviceJob)",
          "1 PPS record (pps)"
        )

        // Quotes as the engine stores them (the ticket stays a draft, so only integrity speaks).
        const line = (partId: string) => ({ description: "Part", ticketModelId: partId, quantity: 1, unitPrice: 10, total: 10 })
        const quote = (state: string, partId: string) =>
          insert("ticketQuote", appId, { ticketId: ticket.id, currencyId: "EUR", state, validUntil: "2099-01-01T00:00:00Z", lines: [line(partId)], total: 10 })
        yield* quote("accepted", accepted.id)
        yield* quote("sent", sent.id)
        refused(
          yield* call("DELETE", `/ticket-model/${accepted.id}`),
          409,
          "Conflict",
          `ticketModel ${accepted.id} is used by 1 accepted ticket quote (ticketQuote)`
        )
        assert.strictEqual(ok(yield* call("DELETE", `/ticket-model/${sent.id}`), "part on a sent quote").id, sent.id)
      }))

    it.effect("5: a catalogue model whose configuration made a part cannot be deleted", () =>
      Effect.gen(function*() {
        const { call, ticket } = yield* appWithTicket("integrity-catalogue")
        const material = ok(yield* call("POST", "/material", { name: "PLA", technologyId: "fdm" }), "material")
        const catalogue = ok(yield* call("POST", "/catalogue", { name: "Spares" }), "catalogue")
        const model = ok(
          yield* call("POST", "/catalogue-model", {
            catalogueId: catalogue.id,
            name: "Knob",
            modelEndpoint: { url: PART_URL },
            configurations: [{ technologyId: "fdm", materialId: material.id }]
          }),
          "catalogue model"
        )
        ok(
          yield* call("POST", "/ticket-model", {
            ticketId: ticket.id,
            catalogueModelConfigurationId: model.configurations[0].id,
            technologyId: "fdm",
            materialId: material.id,
            quantity: 1
          }),
          "part from the configuration"
        )
        refused(yield* call("DELETE", `/catalogue-model/${model.id}`), 409, "Conflict", `catalogueModel ${model.id} is used by 1 part (ticketModel)`)
        // A replace that drops the configuration deletes it: refused alike; one that keeps its id is a replace.
        const body = (configurations: ReadonlyArray<Record<string, unknown>>) => ({
          catalogueId: catalogue.id,
          name: "Knob",
          modelEndpoint: { url: PART_URL },
          configurations
        })
        const configuration = model.configurations[0]
        refused(
          yield* call("PUT", `/catalogue-model/${model.id}`, body([{ technologyId: "fdm", materialId: material.id }])),
          409,
          "Conflict",
          `configuration ${configuration.id} of catalogueModel ${model.id} is used by 1 part (ticketModel): a replace cannot drop it`
        )
        const kept = ok(yield* call("PUT", `/catalogue-model/${model.id}`, body([{ ...configuration, name: "Knob, PLA" }])), "kept")
        assert.strictEqual(kept.configurations[0].id, configuration.id)
      }))

    it.effect("5: a delete racing writes that reference the record never leaves a reference dangling", () =>
      Effect.gen(function*() {
        const { call, ticket } = yield* appWithTicket("integrity-race")
        for (let round = 0; round < 10; round++) {
          const material = ok(yield* call("POST", "/material", { name: `PLA ${round}`, technologyId: "fdm" }), "material")
          const write = call("POST", "/ticket-model", {
            ticketId: ticket.id,
            modelEndpoint: { url: PART_URL },
            technologyId: "fdm",
            materialId: material.id,
            quantity: 1
          })
          const [created, removed] = yield* Effect.all([write, call("DELETE", `/material/${material.id}`)], { concurrency: "unbounded" })
          if (removed.status === 200) {
            // The delete won: the part was refused, naming the field, or came later and found the material gone.
            refused(created, 422, "UnknownReference", "materialId")
            assert.strictEqual((yield* call("GET", `/material/${material.id}`)).text, "")
          } else {
            refused(removed, 409, "Conflict", "1 part (ticketModel)")
            assert.strictEqual(ok(created, "part").materialId, material.id)
          }
        }
      }))

    it.effect("5: a workflow's write racing a delete of what it references never leaves a reference dangling", () =>
      Effect.gen(function*() {
        const { call } = yield* appWithTicket("integrity-workflow-race")
        const filament = ok(yield* call("POST", "/material", { name: "Filament", technologyId: "fdm" }), "filament")
        for (let round = 0; round < 10; round++) {
          // A reel group (written by the reel workflow, not the record operations) and the material it is of.
          const material = ok(yield* call("POST", "/material", { name: `PLA ${round}`, technologyId: "fdm" }), "material")
          const [created, removed] = yield* Effect.all([
            call("POST", "/reel-group", { name: `PLA ${round}`, materialId: material.id }),
            call("DELETE", `/material/${material.id}`)
          ], { concurrency: "unbounded" })
          if (removed.status === 200) {
            refused(created, 422, "UnknownReference", "materialId")
          } else {
            refused(removed, 409, "Conflict", "1 reel group (reelGroup)")
            assert.strictEqual(ok(created, "reel group").materialId, material.id)
          }

          // A reel put on a machine while the machine is deleted: the delete releases it, or the reel is refused.
          const group = ok(yield* call("POST", "/reel-group", { name: `Spool ${round}`, materialId: filament.id }), "spool group")
          const [reel] = ok(yield* call("POST", `/inventory-product-location/${group.id}/reel`, { reels: [{ remainingWeight: 500 }] }), "reel")
          const machine = ok(yield* call("POST", "/machine", { name: `P${round}`, technologyId: "fdm", location: MUNICH }), "machine")
          const [loaded, gone] = yield* Effect.all([
            call("PUT", "/reel", { id: reel.id, reelGroupId: group.id, remainingWeight: 500, machineId: machine.id }),
            call("DELETE", `/machine/${machine.id}`)
          ], { concurrency: "unbounded" })
          assert.strictEqual(ok(gone, "machine deleted").id, machine.id)
          if (loaded.status !== 200) refused(loaded, 422, "UnknownReference", "machineId")
          const [after] = ok(yield* call("GET", `/inventory-product-location/${group.id}/reel`), "the group's reels")
          assert.isNull(after.machineId, `round ${round}: the reel names deleted machine ${machine.id}`)
        }
      }))

    // ---------------------------------------------------------------------------------------------
    // Rule 7: numbers and identifiers

    it.effect("7: numbers are per app and per kind: each app's first project and ticket are P-000001 and T-000001", () =>
      Effect.gen(function*() {
        const first = yield* appWithTicket("numbers-a")
        const second = yield* appWithTicket("numbers-b")
        for (const app of [first, second]) {
          assert.strictEqual(app.project.number, "P-000001")
          assert.strictEqual(app.ticket.number, "T-000001")
        }
        const next = ok(yield* first.call("POST", "/ticket", { projectId: first.project.id, name: "Second" }), "second ticket")
        assert.strictEqual(next.number, "T-000002")
        // The other app's counter did not move.
        const theirs = ok(yield* second.call("POST", "/ticket", { projectId: second.project.id, name: "Second" }), "their second ticket")
        assert.strictEqual(theirs.number, "T-000002")
        assert.strictEqual(ok(yield* first.call("GET", "/ticket/lookup?identifier=T-000002"), "lookup by number").id, next.id)
        // A replace keeps the number.
        const replaced = ok(yield* first.call("PUT", `/ticket/${next.id}`, { projectId: first.project.id, name: "Renamed" }), "replace")
        assert.strictEqual(replaced.number, "T-000002")
      }))

    it.effect("7: an app's first quote is Q-000001", () =>
      Effect.gen(function*() {
        const { call, ticket } = yield* appWithTicket("numbers-quote")
        ok(yield* call("POST", "/item", { ticketId: ticket.id, name: "Setup fee", quantity: 1, unitPrice: 50 }), "item")
        assert.strictEqual(ok(yield* call("POST", `/ticket/${ticket.id}/quote`, {}), "quote").number, "Q-000001")
      }))

    it.effect("7: concurrent creates never get the same number, and leave no gap", () =>
      Effect.gen(function*() {
        const { call, project } = yield* appWithTicket("numbers-concurrent")
        const created = yield* Effect.all(
          Array.from({ length: 24 }, (_, i) => call("POST", "/ticket", { projectId: project.id, name: `Run ${i}` })),
          { concurrency: "unbounded" }
        )
        const numbers = created.map((reply) => ok(reply, "ticket").number as string).sort()
        assert.deepStrictEqual(numbers, Array.from({ length: 24 }, (_, i) => `T-${String(i + 2).padStart(6, "0")}`))
      }))

    it.effect("7: an externalReference is one record's per app and resource: a create or replace with a taken one is a 409 naming the holder", () =>
      Effect.gen(function*() {
        const { call, customer, project, ticket } = yield* appWithTicket("external")
        const holder = ok(yield* call("POST", "/ticket", { projectId: project.id, name: "Holder", externalReference: "ext-1" }), "holder")
        const taken = `externalReference ext-1 is already ticket ${holder.number} (id ${holder.id})`
        refused(yield* call("POST", "/ticket", { projectId: project.id, name: "Copy", externalReference: "ext-1" }), 409, "Conflict", taken)
        refused(yield* call("PUT", `/ticket/${ticket.id}`, { projectId: project.id, name: "Copy", externalReference: "ext-1" }), 409, "Conflict", taken)
        // The holder keeps it on its own replace; another resource and another app may use the value.
        ok(yield* call("PUT", `/ticket/${holder.id}`, { projectId: project.id, name: "Holder v2", externalReference: "ext-1" }), "holder replace")
        ok(yield* call("POST", "/project", { customerId: customer.id, name: "Other", externalReference: "ext-1" }), "a project with the value")
        const other = yield* appWithTicket("external-other")
        ok(yield* other.call("POST", "/ticket", { projectId: other.project.id, name: "Theirs", externalReference: "ext-1" }), "another app's ticket")
        assert.strictEqual(ok(yield* call("GET", "/ticket/lookup?identifier=ext-1"), "lookup").id, holder.id)

        // A record without a number is named by its id.
        const crm = ok(yield* call("POST", "/customer", { name: "Globex", email: "a@globex.example", externalReference: "CRM-1" }), "customer")
        refused(
          yield* call("POST", "/customer", { name: "Globex 2", email: "b@globex.example", externalReference: "CRM-1" }),
          409,
          "Conflict",
          `externalReference CRM-1 is already customer ${crm.id}`
        )
        // Once released, the value is free again.
        ok(yield* call("PUT", `/customer/${crm.id}`, { name: "Globex", email: "a@globex.example" }), "released")
        ok(yield* call("POST", "/customer", { name: "Globex 2", email: "b@globex.example", externalReference: "CRM-1" }), "taken anew")
      }))

    it.effect("7: concurrent creates with one externalReference: one wins, every other is the 409 naming it", () =>
      Effect.gen(function*() {
        const { call, project } = yield* appWithTicket("external-concurrent")
        const replies = yield* Effect.all(
          Array.from({ length: 12 }, (_, i) => call("POST", "/ticket", { projectId: project.id, name: `Race ${i}`, externalReference: "PO-race" })),
          { concurrency: "unbounded" }
        )
        const winners = replies.filter((reply) => reply.status === 200).map((reply) => reply.json())
        assert.lengthOf(winners, 1, replies.map((reply) => reply.text).join("\n"))
        const winner = winners[0]
        for (const reply of replies.filter((reply) => reply.status !== 200)) {
          refused(reply, 409, "Conflict", `externalReference PO-race is already ticket ${winner.number} (id ${winner.id})`)
        }
        const listed = ok(yield* call("GET", "/ticket/lookup?identifier=PO-race"), "lookup")
        assert.strictEqual(listed.id, winner.id)
        // The refused creates gave their numbers back.
        assert.strictEqual(winner.number, "T-000002")
      }))

    // ---------------------------------------------------------------------------------------------
    // Rule 8: what an endpoint does not declare

    /** A request with any method and body (fetch sends no body with GET or DELETE). */
    const send = (method: string, path: string, secret: string, body?: string) =>
      Effect.gen(function*() {
        const client = yield* TestClient
        return yield* Effect.promise(() =>
          new Promise<{ status: number; text: string; headers: Headers }>((resolve, reject) => {
            const req = httpRequest(`${client.baseUrl}${path}`, {
              method,
              headers: {
                authorization: secret,
                ...(body === undefined ? {} : { "content-type": "application/json", "content-length": Buffer.byteLength(body) })
              }
            }, (res) => {
              const chunks: Array<Buffer> = []
              res.on("data", (chunk: Buffer) => chunks.push(chunk))
              res.on("end", () => {
                const headers = new Headers()
                for (const [name, value] of Object.entries(res.headers)) if (typeof value === "string") headers.set(name, value)
                resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8"), headers })
              })
            })
            req.on("error", reject)
            req.end(body)
          })
        )
      })

    it.effect("8: a query parameter on an endpoint that declares none is a 400 naming it", () =>
      Effect.gen(function*() {
        const client = yield* TestClient
        const { customer, ticket } = yield* appWithTicket("undeclared-query")
        const { value: secret } = yield* client.createSecret(`undeclared-${Math.random().toString(36).slice(2)}`)
        const cases: ReadonlyArray<readonly [string, string, string]> = [
          ["GET", `/v1/customer/${customer.id}?expand=1`, "GET /v1/customer/{id} takes no query parameters"],
          ["GET", "/v1/app?verbose=true", "GET /v1/app takes no query parameters"],
          ["PUT", `/v1/ticket/${ticket.id}/send-to-production?force=1`, "PUT /v1/ticket/{id}/send-to-production takes no query parameters"],
          ["DELETE", "/v1/material/m-1?cascade=true", "DELETE /v1/material/{id} takes no query parameters"]
        ]
        for (const [method, path, says] of cases) {
          const reply = yield* send(method, path, secret)
          const name = new URL(path, "http://x").searchParams.keys().next().value!
          badRequest(reply, "UnknownField", `Unknown query parameter "${name}": ${says}`)
        }
        // An empty query string names nothing: the read answers as without it.
        const empty = yield* client.call("GET", "/v1/customer/no-such-customer?", { secret })
        assert.deepStrictEqual([empty.status, empty.text], [200, ""])
        // An endpoint with a query already refuses a parameter it does not know.
        badRequest(yield* send("GET", "/v1/customer?expand=1", secret), "UnknownField", `Unknown query parameter "expand"`)
      }))

    it.effect("8: a body on an endpoint that declares none is a 400 saying it takes none, on the direct read and the router alike", () =>
      Effect.gen(function*() {
        const { call, customer } = yield* appWithTicket("undeclared-body")
        const client = yield* TestClient
        const appSecret = (yield* client.createSecret(`undeclared-body-${Math.random().toString(36).slice(2)}`)).value
        const material = ok(yield* client.call("POST", "/v1/material", { secret: appSecret, body: { name: "PLA", technologyId: "fdm" } }), "material")
        // A body with fields on a write that takes none names each field (test/rest/http-habits.test.ts has the rest).
        badRequest(
          yield* send("PUT", "/v1/service-job/job-1/timeline/start", appSecret, "{\"x\":1}"),
          "UnknownField",
          "Unknown field \"x\": PUT /v1/service-job/{id}/timeline/start takes no body"
        )
        const cases: ReadonlyArray<readonly [string, string, string]> = [
          ["DELETE", `/v1/material/${material.id}`, "DELETE /v1/material/{id}"],
          ["GET", `/v1/material/${material.id}`, "GET /v1/material/{id}"],
          ["GET", `/v1/material/${material.id}?`, "GET /v1/material/{id}"],
          ["GET", "/v1/app", "GET /v1/app"]
        ]
        for (const [method, path, route] of cases) {
          badRequest(yield* send(method, path, appSecret, "{\"x\":1}"), "UnexpectedBody", `The request body must be empty: ${route} takes no body`)
        }
        // The direct read (no query string) and the router's route (an empty one) answer alike.
        const direct = yield* send("GET", `/v1/material/${material.id}`, appSecret, "{}")
        const routed = yield* send("GET", `/v1/material/${material.id}?`, appSecret, "{}")
        assert.deepStrictEqual([direct.status, direct.text], [routed.status, routed.text])
        // Nothing was deleted; without a body (fetch sends `Content-Length: 0` on a PUT) the calls answer.
        assert.strictEqual(ok(yield* client.call("GET", `/v1/material/${material.id}`, { secret: appSecret }), "material").id, material.id)
        assert.strictEqual(ok(yield* client.call("DELETE", `/v1/material/${material.id}`, { secret: appSecret }), "deleted").id, material.id)
        assert.strictEqual(ok(yield* call("GET", `/customer/${customer.id}`), "read").id, customer.id)
        const empty = yield* send("PUT", "/v1/service-job/job-1/timeline/start", appSecret, "")
        refused({ ...empty, json: () => JSON.parse(empty.text) }, 404, "NotFound", "job-1")
      }))
  })
}
