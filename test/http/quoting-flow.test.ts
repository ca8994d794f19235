/**
 * The whole quoting flow through the HTTP surface, with real model files
 * served from a local host: parts are analysed and priced (production
 * times per service, unit and total prices), a PUT with new production
 * parameters recalculates, the ticket is quoted from its parts' prices,
 * the quote accepted, the ticket sent to production; the workflow refuses
 * the moves its states do not allow, naming the state. Two tests follow
 * the walkthroughs of README.md and docs/integration.md call for call.
 */
import { assert, layer } from "@effect/vitest"
import { Duration, Effect, Layer } from "effect"
import { modelFetcherLayer } from "../../src/engine/geometry/ModelFetcher.ts"
import { binaryStl, box, cubeWithHole, obj, threeMf } from "../../src/engine/geometry/writers.ts"
import { seedDemoData } from "../../src/engine/seed.ts"
import { backends } from "../support/backends.ts"
import { FileHost, FileHostLive } from "../support/fileHost.ts"
import { appWithTicket, ok } from "../support/http.ts"
import { type Reply, TestApp, TestClient } from "../support/TestApp.ts"

const FILES = {
  "/models/bracket.stl": binaryStl(box(40, 20, 10)),
  "/models/cube.stl": binaryStl(box(20, 20, 20)),
  "/models/housing.3mf": threeMf({ unit: "millimeter", objects: [{ id: 1, mesh: box(20, 30, 40) }], items: [{ objectId: 1 }] }),
  "/models/holed.obj": obj(cubeWithHole(30, 10))
}

const fetcher = modelFetcherLayer({ allowPrivate: true, timeout: Duration.seconds(5), placeholderHosts: ["example"] })

const refused = (reply: Reply, status: number, includes: string) => {
  assert.strictEqual(reply.status, status, reply.text)
  assert.include(reply.json().message, includes)
}

for (const backend of backends) {
  layer(Layer.merge(TestApp(backend, {}, { modelFetcher: fetcher }), FileHostLive(FILES)), {
    timeout: 60_000,
    excludeTestServices: true
  })(`The quoting flow over HTTP (${backend})`, (it) => {
    const setup = Effect.gen(function*() {
      const host = yield* FileHost
      const { call, project, ticket } = yield* appWithTicket("quoting")
      const material = (name: string, technologyId: string) => Effect.map(call("POST", "/material", { name, technologyId }), (reply) => ok(reply, name))
      return { call, host, project, ticket, material }
    })

    /** A fresh app's secret and its calls, as the walkthroughs make them (`$BASE` is /v1). */
    const walkthroughApp = (appId: string) =>
      Effect.gen(function*() {
        const client = yield* TestClient
        const { value } = yield* client.createSecret(appId)
        return (method: string, path: string, body?: unknown) =>
          Effect.map(client.call(method, `/v1${path}`, { secret: `Bearer ${value}`, body }), (reply) => ok(reply, `${method} ${path}`))
      })

    it.effect("README: quote a demo part: catalogue parts, quote, acceptance, production, the nearest machine", () =>
      Effect.gen(function*() {
        const appId = `readme-${Math.random().toString(36).slice(2)}`
        yield* seedDemoData(appId)
        const call = yield* walkthroughApp(appId)
        const [customer] = (yield* call("GET", "/customer?externalReference=demo-acme")) as Array<any>
        const project = yield* call("POST", "/project", { customerId: customer.id, name: "Demo order" })
        const ticket = yield* call("POST", "/ticket", { projectId: project.id, name: "Demo ticket" })
        const models = (yield* call("GET", "/catalogue-model")) as Array<any>
        assert.includeMembers(models.flatMap((model) => model.configurations.map((c: any) => c.id)), ["demo-bearing-block-fdm", "demo-spacer-mjf"])

        const parts = (yield* call("POST", "/ticket-model/from-catalogue", {
          ticketId: ticket.id,
          parts: [{ catalogueModelConfigurationId: "demo-bearing-block-fdm", quantity: 10 }, { catalogueModelConfigurationId: "demo-spacer-mjf", quantity: 50 }]
        })) as Array<any>
        for (const part of parts) assert.strictEqual(Math.round(part.totalPrice * 100), Math.round(part.unitPrice * 100) * part.quantity)

        const quote = yield* call("POST", `/ticket/${ticket.id}/quote`, {})
        assert.deepStrictEqual([quote.state, quote.currencyId, quote.exchangeRate], ["sent", "EUR", 1])
        // jq '.state = "accepted"': the quote as read
        const accepted = yield* call("PUT", `/ticket-quote/${quote.id}`, { ...quote, state: "accepted" })
        assert.deepStrictEqual([accepted.number, accepted.state], [quote.number, "accepted"])

        const jobs = (yield* call("PUT", `/ticket/${ticket.id}/send-to-production`)) as Array<any>
        assert.sameMembers(jobs.map((job) => job.technologyId), ["fdm", "mjf"])
        const nearest = (yield* call("POST", "/machine/by-proximity", { latitude: 48.14, longitude: 11.58, technologyId: "fdm" })) as Array<any>
        assert.isAbove(nearest.length, 0)
      }))

    it.effect("docs/integration.md: the walkthrough from customer to production, step by step", () =>
      Effect.gen(function*() {
        const host = yield* FileHost
        const MODEL_URL = `${host.url}/models/bracket.stl`
        const call = yield* walkthroughApp(`guide-${Math.random().toString(36).slice(2)}`)
        const customer = yield* call("POST", "/customer", { name: "Acme Robotics", email: "buyer@example.com", externalReference: "CRM-1042" })
        const project = yield* call("POST", "/project", { customerId: customer.id, name: "Gearbox", currencyId: "EUR" })
        const ticket = yield* call("POST", "/ticket", { projectId: project.id, name: "Prototype run" })
        assert.strictEqual(ticket.state, "draft")
        assert.includeMembers(((yield* call("GET", "/technology")) as Array<any>).map((technology) => technology.id), ["fdm"])
        const material = yield* call("POST", "/material", { name: "PLA", technologyId: "fdm" })
        const part = yield* call("POST", "/ticket-model", {
          ticketId: ticket.id,
          modelEndpoint: { url: MODEL_URL },
          technologyId: "fdm",
          materialId: material.id,
          quantity: 2
        })

        const read = yield* call("GET", `/ticket-model/${part.id}`)
        assert.strictEqual(read.geometry.volume, 40 * 20 * 10)
        assert.strictEqual(Math.round(read.totalPrice * 100), Math.round(read.unitPrice * 100) * 2)
        const quote = yield* call("POST", `/ticket/${ticket.id}/quote`, { validDays: 30 })
        assert.deepStrictEqual(quote.lines, [{
          description: read.fileName,
          ticketModelId: part.id,
          quantity: 2,
          manufacturability: "ok",
          unitPrice: read.unitPrice,
          total: read.totalPrice
        }])
        // jq '.state = "accepted"': the quote as read
        const accepted = yield* call("PUT", `/ticket-quote/${quote.id}`, { ...quote, state: "accepted" })
        assert.deepStrictEqual([accepted.state, accepted.total], ["accepted", quote.total])

        const jobs = (yield* call("PUT", `/ticket/${ticket.id}/send-to-production`)) as Array<any>
        assert.deepStrictEqual(jobs.map((job) => job.state), ["queued"])
        const found = yield* call("GET", `/ticket/lookup?identifier=${ticket.id}`)
        assert.deepStrictEqual([found.number, found.state], [ticket.number, "in_production"])
      }))

    it.effect("parts are priced from their files; new parameters recalculate; the quote, acceptance and production follow", () =>
      Effect.gen(function*() {
        const { call, host, material, ticket } = yield* setup
        const pla = yield* material("PLA", "fdm")
        const aluminium = yield* material("Aluminium", "cnc-milling")
        ok(yield* call("POST", "/machine-group", { name: "FDM farm", technologyId: "fdm", hourlyRate: 6 }), "machine group")

        const printed = ok(
          yield* call("POST", "/ticket-model", {
            ticketId: ticket.id,
            name: "Cube",
            modelEndpoint: { url: `${host.url}/models/cube.stl` },
            technologyId: "fdm",
            materialId: pla.id,
            quantity: 4,
            productionParameterIds: { layerHeight: "fdm-lh-0.2", infill: "fdm-infill-30" },
            serviceIds: ["sanding"]
          }),
          "fdm part"
        )
        assert.strictEqual(printed.geometry.volume, 8000)
        const times = printed.productionTimes
        assert.deepStrictEqual(times.services.map((service: any) => service.serviceId), ["fdm", "sanding"])
        assert.deepStrictEqual(times.services[1], { serviceId: "sanding", cycleTime: 144, programmingTime: 0, setupTime: 300 })
        assert.isAbove(times.services[0].cycleTime, 0)
        assert.strictEqual(times.cycleTime, Math.round((times.services[0].cycleTime + 144) * 10) / 10)
        assert.strictEqual(times.setupTime, 900)
        assert.isAbove(printed.totalPrice, 0)
        // Exact in cents: the total is four times the unit price.
        assert.strictEqual(Math.round(printed.totalPrice * 100), Math.round(printed.unitPrice * 100) * 4)
        assert.deepStrictEqual(ok(yield* call("GET", `/ticket-model/${printed.id}`), "read").productionTimes, times)

        // New production parameters: the PUT recalculates, and the next read returns the new times.
        const { id: _id, fileName: _f, geometry: _g, productionTimes: _p, unitPrice: _u, totalPrice: _t, createdAt: _c, updatedAt: _m, ...body } = printed
        const finer = ok(
          yield* call("PUT", `/ticket-model/${printed.id}`, { ...body, productionParameterIds: { layerHeight: "fdm-lh-0.1", infill: "fdm-infill-30" } }),
          "replace"
        )
        assert.isAbove(finer.productionTimes.services[0].cycleTime, times.services[0].cycleTime * 1.9)
        assert.isAbove(finer.totalPrice, printed.totalPrice)
        assert.deepStrictEqual(ok(yield* call("GET", `/ticket-model/${printed.id}`), "reread").productionTimes, finer.productionTimes)
        // More of the same part: the batch's setup spreads over more parts.
        const more = ok(yield* call("PUT", `/ticket-model/${printed.id}`, { ...body, quantity: 40 }), "quantity")
        assert.isBelow(more.unitPrice, printed.unitPrice)
        assert.isAbove(more.totalPrice, printed.totalPrice)

        const milled = ok(
          yield* call("POST", "/ticket-model", {
            ticketId: ticket.id,
            name: "Housing",
            modelEndpoint: { url: `${host.url}/models/housing.3mf` },
            technologyId: "cnc-milling",
            materialId: aluminium.id,
            quantity: 2,
            productionParameterIds: { tolerance: "cnc-tol-0.05" }
          }),
          "cnc part"
        )
        assert.strictEqual(milled.productionTimes.setupTime, 1200 + 120 * 6)
        assert.strictEqual(milled.productionTimes.programmingTime, 1800 + 600 * 6)

        const quote = ok(yield* call("POST", `/ticket/${ticket.id}/quote`, {}), "quote")
        assert.deepStrictEqual(
          quote.lines.map((line: any) => [line.ticketModelId, line.quantity, line.unitPrice, line.total]),
          [[printed.id, 40, more.unitPrice, more.totalPrice], [milled.id, 2, milled.unitPrice, milled.totalPrice]]
        )
        assert.strictEqual(Math.round(quote.total * 100), Math.round(more.totalPrice * 100) + Math.round(milled.totalPrice * 100))
        assert.strictEqual(quote.state, "sent")
        assert.strictEqual(ok(yield* call("GET", `/ticket/lookup?identifier=${ticket.id}`), "ticket").state, "quoted")

        const { ticketId, currencyId, validUntil, lines } = quote
        ok(yield* call("PUT", `/ticket-quote/${quote.id}`, { ticketId, currencyId, validUntil, lines, state: "accepted" }), "accept")
        assert.strictEqual(ok(yield* call("GET", `/ticket/lookup?identifier=${ticket.id}`), "ticket").state, "accepted")

        const jobs = ok(yield* call("PUT", `/ticket/${ticket.id}/send-to-production`), "production") as Array<any>
        assert.sameMembers(jobs.map((job) => job.technologyId), ["fdm", "cnc-milling"])
        assert.strictEqual(ok(yield* call("GET", `/ticket/lookup?identifier=${ticket.id}`), "ticket").state, "in_production")

        // Refused moves name the state.
        refused(yield* call("POST", `/ticket/${ticket.id}/quote`, {}), 409, "is in_production")
        refused(yield* call("PUT", `/ticket/${ticket.id}/send-to-production`), 409, "is in_production")
        refused(yield* call("PUT", `/ticket/${ticket.id}/cancel`), 409, "is in_production")
        const { id: _pid, fileName: _pf, geometry: _pg, productionTimes: _pp, unitPrice: _pu, totalPrice: _pt, createdAt: _pc, updatedAt: _pm, ...milledBody } =
          milled
        refused(yield* call("PUT", `/ticket-model/${milled.id}`, { ...milledBody, quantity: 3 }), 409, "is in_production")
      }))

    it.effect("a catalogue model is analysed when written; a part from one of its configurations shares its geometry, and is priced", () =>
      Effect.gen(function*() {
        const { call, host, material, ticket } = yield* setup
        const nylon = yield* material("PA12", "sls")
        const catalogue = ok(yield* call("POST", "/catalogue", { name: "Spare parts" }), "catalogue")
        const model = ok(
          yield* call("POST", "/catalogue-model", {
            catalogueId: catalogue.id,
            name: "Holed block",
            modelEndpoint: { url: `${host.url}/models/holed.obj` },
            configurations: [{
              name: "PA12 blasted",
              technologyId: "sls",
              materialId: nylon.id,
              productionParameterIds: { surfaceFinish: "sls-finish-blasted" }
            }]
          }),
          "catalogue model"
        )
        const [part] = ok(
          yield* call("POST", "/ticket-model/from-catalogue", {
            ticketId: ticket.id,
            parts: [{ catalogueModelConfigurationId: model.configurations[0].id, quantity: 3 }]
          }),
          "from catalogue"
        ) as Array<any>
        // 30 mm cube with a 10 mm square hole through it, analysed once when the catalogue model was written.
        assert.strictEqual(model.geometry.volume, 30 ** 3 - 10 * 10 * 30)
        assert.strictEqual(part.fileName, "holed.obj")
        assert.deepStrictEqual(part.geometry, model.geometry)
        assert.deepStrictEqual(part.productionTimes.services.map((service: any) => service.serviceId), ["sls"])
        assert.isAbove(part.totalPrice, 0)
      }))

    it.effect("a part whose model is on a placeholder host has no geometry and no price: quoting it is a 409", () =>
      Effect.gen(function*() {
        const { call, material, ticket } = yield* setup
        const pla = yield* material("PLA", "fdm")
        const part = ok(
          yield* call("POST", "/ticket-model", {
            ticketId: ticket.id,
            name: "Sketch",
            modelEndpoint: { url: "https://files.example/models/sketch.stl" },
            technologyId: "fdm",
            materialId: pla.id,
            quantity: 1
          }),
          "part"
        )
        for (const field of ["geometry", "productionTimes", "unitPrice", "totalPrice"]) assert.isNull(part[field], field)
        refused(yield* call("POST", `/ticket/${ticket.id}/quote`, {}), 409, "part Sketch has no price yet")
      }))

    it.effect("the app's machine rate prices the part: a cheaper machine makes the next calculation cheaper", () =>
      Effect.gen(function*() {
        const { call, host, material, ticket } = yield* setup
        const resin = yield* material("Resin", "sla")
        const body = {
          ticketId: ticket.id,
          modelEndpoint: { url: `${host.url}/models/cube.stl` },
          technologyId: "sla",
          materialId: resin.id,
          quantity: 1
        }
        const atDefault = ok(yield* call("POST", "/ticket-model", body), "default rate")
        ok(
          yield* call("POST", "/machine", { name: "Form 4", technologyId: "sla", location: { latitude: 48.1, longitude: 11.6 }, hourlyRate: 2 }),
          "machine"
        )
        const cheaper = ok(yield* call("PUT", `/ticket-model/${atDefault.id}`, body), "repriced")
        assert.deepStrictEqual(cheaper.productionTimes, atDefault.productionTimes)
        assert.isBelow(cheaper.totalPrice, atDefault.totalPrice)
      }))
  })
}
