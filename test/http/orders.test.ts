/**
 * The orders engine through HTTP: projects, tickets, items, notes,
 * catalogues, parts with their model versions, post-processing, machining
 * strategies, similarity, quotes and their acceptance. One happy path per
 * operation, plus the conventions: a missing id is an empty 200, a relation
 * to a missing record is the engine's 4xx, a move the state does not allow
 * is a 409 naming the state.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { CatalogueGroup, CatalogueModelGroup } from "../../src/contract/groups/catalogue.ts"
import {
  ItemGroup,
  MeetingNoteGroup,
  ModelVersionGroup,
  ProductionNoteGroup,
  ProjectGroup,
  TicketGroup,
  TicketModelGroup,
  TicketQuoteGroup
} from "../../src/contract/groups/orders.ts"
import { backends } from "../support/backends.ts"
import { coverage, ok, patch } from "../support/http.ts"
import { type Reply, TestApp, TestClient } from "../support/TestApp.ts"

const engineError = (reply: Reply, status: number, includes: string) => {
  assert.strictEqual(reply.status, status, reply.text)
  const body = reply.json()
  assert.strictEqual(body.code, status)
  assert.include(body.message, includes)
  assert.strictEqual(reply.headers.get("x-error-source"), "engine")
}

const badRequest = (reply: Reply, field: string) => {
  assert.strictEqual(reply.status, 400, reply.text)
  assert.include(reply.json().message, `"${field}"`)
}

const geometry = (x: number, y: number, z: number) => ({
  volume: x * y * z,
  surfaceArea: 2 * (x * y + y * z + x * z),
  boundingBox: { x, y, z },
  triangleCount: 12,
  watertight: true
})

for (const backend of backends) {
  layer(TestApp(backend), { timeout: 60_000, excludeTestServices: true })(`Orders over HTTP (${backend})`, (it) => {
    const covered = coverage(
      [
        CatalogueGroup,
        CatalogueModelGroup,
        ItemGroup,
        MeetingNoteGroup,
        ModelVersionGroup,
        ProductionNoteGroup,
        ProjectGroup,
        TicketGroup,
        TicketModelGroup,
        TicketQuoteGroup
      ],
      ["ticket.sendToProduction", "item.remove"]
    )
    /** A fresh app with a customer, a project (in USD) and a draft ticket. */
    const setup = Effect.gen(function*() {
      const client = yield* TestClient
      const appId = `orders-${Math.random().toString(36).slice(2)}`
      const { value } = yield* client.createSecret(appId)
      const call = (method: string, path: string, body?: unknown) =>
        client.call(method, `/v1${path}`, { secret: value, body }).pipe(Effect.tap((reply) => Effect.sync(() => covered.record(method, `/v1${path}`, reply))))
      const customer = ok(yield* call("POST", "/customer", { name: "Acme", email: "buyer@acme.example" }), "customer")
      const project = ok(yield* call("POST", "/project", { customerId: customer.id, name: "Gearbox", currencyId: "USD" }), "project")
      const ticket = ok(yield* call("POST", "/ticket", { projectId: project.id, name: "Prototype run" }), "ticket")
      const material = ok(yield* call("POST", "/material", { name: "PLA", technologyId: "fdm" }), "material")
      const part = (body: Record<string, unknown> = {}) =>
        call("POST", "/ticket-model", {
          ticketId: ticket.id,
          modelEndpoint: { url: "https://files.example/models/bracket.stl" },
          technologyId: "fdm",
          materialId: material.id,
          quantity: 2,
          ...body
        })
      return { appId, call, customer, project, ticket, material, part }
    })

    it.effect("projects: create, get, list, replace, lookup by id, number and external reference", () =>
      Effect.gen(function*() {
        const { call, customer } = yield* setup
        const project = ok(yield* call("POST", "/project", { customerId: customer.id, name: "Housing", externalReference: "ERP-77" }), "create")
        assert.match(project.number, /^P-\d{6}$/)
        assert.deepStrictEqual(ok(yield* call("GET", `/project/${project.id}`), "get"), project)
        assert.deepStrictEqual(ok(yield* call("GET", "/project?externalReference=ERP-77"), "list"), [project])
        for (const identifier of [project.id, project.number, "ERP-77"]) {
          assert.strictEqual(ok(yield* call("GET", `/project/lookup?identifier=${identifier}`), `lookup ${identifier}`).id, project.id)
        }
        const unknown = yield* call("GET", "/project/lookup?identifier=P-999999")
        assert.strictEqual(unknown.status, 200)
        assert.strictEqual(unknown.text, "")
        const replaced = ok(yield* call("PUT", `/project/${project.id}`, { customerId: customer.id, name: "Housing v2" }), "replace")
        assert.strictEqual(replaced.number, project.number, "the number survives a replace")
        assert.isUndefined(replaced.externalReference)
        engineError(yield* call("POST", "/project", { customerId: "missing", name: "X" }), 422, "customerId")
      }))

    it.effect("tickets: create in draft, lookup, replace keeps number and state; a missing project is the engine's 422", () =>
      Effect.gen(function*() {
        const { call, project, ticket } = yield* setup
        assert.strictEqual(ticket.state, "draft")
        assert.match(ticket.number, /^T-\d{6}$/)
        for (const identifier of [ticket.id, ticket.number]) {
          assert.deepStrictEqual(ok(yield* call("GET", `/ticket/lookup?identifier=${identifier}`), "lookup"), ticket)
        }
        assert.strictEqual((yield* call("GET", "/ticket/lookup?identifier=nothing")).text, "")
        const replaced = ok(yield* call("PUT", `/ticket/${ticket.id}`, { projectId: project.id, name: "Renamed", externalReference: "PO-1" }), "replace")
        assert.strictEqual(replaced.state, "draft")
        assert.strictEqual(replaced.number, ticket.number)
        assert.strictEqual(ok(yield* call("GET", "/ticket/lookup?identifier=PO-1"), "lookup by reference").id, ticket.id)
        badRequest(yield* call("PUT", `/ticket/${ticket.id}`, { name: "No project" }), "projectId")
        engineError(yield* call("POST", "/ticket", { projectId: "no-such-project", name: "Orphan" }), 422, "projectId")
        engineError(yield* call("PUT", "/ticket/no-such-ticket", { projectId: project.id, name: "X" }), 404, "not found")
      }))

    it.effect("items: create, list, get by partItemId, replace; delete is not implemented", () =>
      Effect.gen(function*() {
        const { call, ticket } = yield* setup
        const item = ok(yield* call("POST", "/item", { ticketId: ticket.id, name: "Packaging", quantity: 3, unitPrice: 1.5 }), "create")
        assert.deepStrictEqual(ok(yield* call("GET", `/item/${item.id}`), "get"), item)
        assert.strictEqual((yield* call("GET", "/item/missing")).text, "")
        assert.deepStrictEqual(ok(yield* call("GET", `/item?ticketId=${ticket.id}`), "list"), [item])
        const replaced = ok(yield* call("PUT", `/item/${item.id}`, { ticketId: ticket.id, name: "Crate", quantity: 1, unitPrice: 20 }), "replace")
        assert.strictEqual(replaced.name, "Crate")
        const removed = yield* call("DELETE", `/item/${item.id}`)
        assert.deepStrictEqual(removed.json(), { code: 501, message: "Deleting an item is not implemented", type: "NotImplemented" })
        assert.strictEqual(removed.status, 501)
        engineError(yield* call("POST", "/item", { ticketId: "missing", name: "X", quantity: 1, unitPrice: 1 }), 422, "ticketId")
      }))

    it.effect("meeting and production notes: create and list", () =>
      Effect.gen(function*() {
        const { call, customer, project, ticket } = yield* setup
        const meeting = ok(
          yield* call("POST", "/meeting-note", { customerId: customer.id, projectId: project.id, title: "Kick-off", body: "Agreed on PLA" }),
          "meeting"
        )
        assert.deepStrictEqual(ok(yield* call("GET", `/meeting-note?customerId=${customer.id}`), "meeting list"), [meeting])
        const note = ok(yield* call("POST", "/production-note", { ticketId: ticket.id, body: "Print flat side down", author: "Ada" }), "production")
        assert.deepStrictEqual(ok(yield* call("GET", `/production-note?ticketId=${ticket.id}`), "production list"), [note])
        engineError(yield* call("POST", "/meeting-note", { customerId: "missing", title: "X", body: "Y" }), 422, "customerId")
      }))

    it.effect("catalogues: a project and its models; configurations get ids that replaces keep", () =>
      Effect.gen(function*() {
        const { appId, call, customer, material } = yield* setup
        const catalogue = ok(yield* call("POST", "/catalogue", { name: "Spare parts", customerId: customer.id }), "catalogue.create")
        const body = {
          catalogueId: catalogue.id,
          name: "Knob",
          modelEndpoint: { url: "https://files.example/catalogue/knob.stl" },
          configurations: [{ name: "Black PLA", technologyId: "fdm", materialId: material.id, colourId: "black" }]
        }
        const model = ok(yield* call("POST", "/catalogue-model", body), "catalogueModel.create")
        const firstId = model.configurations[0].id
        assert.match(firstId, /^[0-9a-f-]{36}$/)
        assert.deepStrictEqual(ok(yield* call("GET", `/catalogue-model/${model.id}`), "get"), model)
        assert.deepStrictEqual(ok(yield* call("GET", `/catalogue-model?catalogueId=${catalogue.id}`), "list"), [model])
        const replaced = ok(
          yield* call("PUT", `/catalogue-model/${model.id}`, {
            ...body,
            configurations: [model.configurations[0], { name: "White PLA", technologyId: "fdm", materialId: material.id, colourId: "white" }]
          }),
          "replace"
        )
        assert.strictEqual(replaced.configurations[0].id, firstId)
        assert.match(replaced.configurations[1].id, /^[0-9a-f-]{36}$/)
        assert.notStrictEqual(replaced.configurations[1].id, firstId)
        // A configuration priced as a part made from it (test/http/price-breaks.test.ts): none without the model's geometry.
        const configurationBreaks = `/catalogue-model-configuration/${firstId}/price-breaks`
        engineError(yield* call("POST", configurationBreaks, { quantities: [1, 10] }), 409, "has no price yet")
        yield* patch("catalogueModel", appId, model.id, { geometry: geometry(20, 20, 20) })
        const breaks = ok(yield* call("POST", configurationBreaks, { quantities: [10, 1] }), "configuration price breaks")
        assert.deepStrictEqual(breaks.breaks.map((b: any) => [b.quantity, b.unitPrice, b.totalPrice]), [[10, 1.83, 18.3], [1, 6.93, 6.93]])
        engineError(
          yield* call("POST", "/catalogue-model", { ...body, configurations: [{ technologyId: "fdm", materialId: "nope" }] }),
          422,
          "configurations.0.materialId"
        )
        assert.strictEqual(ok(yield* call("DELETE", `/catalogue-model/${model.id}`), "remove").id, model.id)
        assert.strictEqual((yield* call("GET", `/catalogue-model/${model.id}`)).text, "")
      }))

    it.effect("parts: create from the minimal payload, get, list, replace with a new model version, delete", () =>
      Effect.gen(function*() {
        const { call, part, ticket, material } = yield* setup
        const created = ok(yield* part(), "ticketModel.create")
        assert.strictEqual(created.fileName, "bracket.stl")
        for (const field of ["geometry", "productionTimes", "unitPrice", "totalPrice"]) assert.isNull(created[field], field)
        assert.deepStrictEqual(ok(yield* call("GET", `/ticket-model/${created.id}`), "get"), created)
        assert.deepStrictEqual(ok(yield* call("GET", `/ticket-model?ticketId=${ticket.id}`), "list"), [created])
        assert.strictEqual((yield* call("GET", "/ticket-model/missing")).text, "")

        const versions = () =>
          call("GET", `/model-version?ticketModelId=${created.id}`).pipe(Effect.map((reply) => ok(reply, "modelVersion.list") as Array<any>))
        const [first] = yield* versions()
        assert.strictEqual(first.version, 1)
        assert.strictEqual(first.fileName, "bracket.stl")
        assert.deepStrictEqual(first.modelEndpoint, { url: "https://files.example/models/bracket.stl" })
        assert.isNull(first.geometry)

        const same = {
          ticketId: ticket.id,
          name: "Bracket",
          modelEndpoint: { url: "https://files.example/models/bracket.stl" },
          technologyId: "fdm",
          materialId: material.id,
          quantity: 5,
          productionParameterIds: { layerHeight: "fdm-lh-0.1", infill: "fdm-infill-60" }
        }
        const renamed = ok(yield* call("PUT", `/ticket-model/${created.id}`, same), "replace, same model")
        assert.strictEqual(renamed.quantity, 5)
        assert.strictEqual((yield* versions()).length, 1, "the same model adds no version")

        const remodelled = ok(
          yield* call("PUT", `/ticket-model/${created.id}`, {
            ...same,
            modelEndpoint: { url: "https://files.example/download?id=8", fileName: "bracket-v2.3mf" }
          }),
          "replace, new model"
        )
        assert.strictEqual(remodelled.fileName, "bracket-v2.3mf")
        const after = yield* versions()
        assert.deepStrictEqual(after.map((v) => v.version).sort(), [1, 2])
        const second = after.find((v) => v.version === 2)
        assert.strictEqual(second.fileName, "bracket-v2.3mf")
        assert.deepStrictEqual(ok(yield* call("GET", `/model-version/${second.id}`), "modelVersion.get"), second)

        engineError(
          yield* call("PUT", `/ticket-model/${created.id}`, { ...same, productionParameterIds: { layerHeight: "sla-lh-0.05" } }),
          422,
          "productionParameterIds.layerHeight"
        )
        engineError(yield* part({ productionParameterIds: { colourDepth: "x" } }), 422, "productionParameterIds.colourDepth")
        engineError(yield* part({ ticketId: "missing-ticket" }), 422, "ticketId")
        engineError(yield* part({ materialId: "missing-material" }), 422, "materialId")

        assert.strictEqual(ok(yield* call("DELETE", `/ticket-model/${created.id}`), "remove").id, created.id)
        assert.strictEqual((yield* call("GET", `/ticket-model/${created.id}`)).text, "")
        assert.deepStrictEqual(yield* versions(), [], "the versions go with the part")
        engineError(yield* call("DELETE", `/ticket-model/${created.id}`), 404, "not found")
      }))

    it.effect("parts: the 400s name modelEndpoint, catalogueModelConfigurationId and modelEndpoint.fileName", () =>
      Effect.gen(function*() {
        const { call, ticket, material } = yield* setup
        const base = { ticketId: ticket.id, technologyId: "fdm", materialId: material.id, quantity: 1 }
        badRequest(yield* call("POST", "/ticket-model", base), "modelEndpoint")
        badRequest(
          yield* call("POST", "/ticket-model", { ...base, modelEndpoint: { url: "https://files.example/a.stl" }, catalogueModelConfigurationId: "c" }),
          "catalogueModelConfigurationId"
        )
        badRequest(yield* call("POST", "/ticket-model", { ...base, modelEndpoint: { url: "https://files.example/download?id=7" } }), "modelEndpoint.fileName")
        const named = ok(
          yield* call("POST", "/ticket-model", { ...base, modelEndpoint: { url: "https://files.example/download?id=7", fileName: "gear.stl" } }),
          "with fileName"
        )
        assert.strictEqual(named.fileName, "gear.stl")
      }))

    it.effect("parts from a catalogue configuration, one by one and in bulk", () =>
      Effect.gen(function*() {
        const { call, ticket, material } = yield* setup
        const catalogue = ok(yield* call("POST", "/catalogue", { name: "Standard parts" }), "catalogue")
        const model = ok(
          yield* call("POST", "/catalogue-model", {
            catalogueId: catalogue.id,
            name: "Hinge",
            modelEndpoint: { url: "https://files.example/catalogue/hinge.stl" },
            configurations: [
              { name: "Hinge, black", technologyId: "fdm", materialId: material.id, colourId: "black", productionParameterIds: { layerHeight: "fdm-lh-0.3" } },
              { technologyId: "fdm", materialId: material.id }
            ]
          }),
          "catalogue model"
        )
        const [black, plain] = model.configurations
        const single = ok(
          yield* call("POST", "/ticket-model", {
            ticketId: ticket.id,
            catalogueModelConfigurationId: plain.id,
            technologyId: "fdm",
            materialId: material.id,
            quantity: 4
          }),
          "create from a configuration"
        )
        assert.strictEqual(single.fileName, "hinge.stl")
        assert.strictEqual(single.catalogueModelConfigurationId, plain.id)
        engineError(
          yield* call("POST", "/ticket-model", {
            ticketId: ticket.id,
            catalogueModelConfigurationId: "nope",
            technologyId: "fdm",
            materialId: material.id,
            quantity: 1
          }),
          422,
          "catalogueModelConfigurationId"
        )

        const parts = ok(
          yield* call("POST", "/ticket-model/from-catalogue", {
            ticketId: ticket.id,
            parts: [{ catalogueModelConfigurationId: black.id, quantity: 10 }, { catalogueModelConfigurationId: plain.id, quantity: 1 }]
          }),
          "fromCatalogue"
        ) as Array<any>
        assert.strictEqual(parts.length, 2)
        assert.strictEqual(parts[0].name, "Hinge, black")
        assert.strictEqual(parts[0].colourId, "black")
        assert.strictEqual(parts[0].quantity, 10)
        // The configuration's parameters, and the default of each it leaves out: what the part is priced with.
        assert.deepStrictEqual(parts[0].productionParameterIds, { layerHeight: "fdm-lh-0.3", infill: "fdm-infill-30", walls: "fdm-walls-2" })
        assert.strictEqual(parts[1].name, "Hinge")
        assert.strictEqual(parts[1].fileName, "hinge.stl")
        const versions = ok(yield* call("GET", `/model-version?ticketModelId=${parts[0].id}`), "versions") as Array<any>
        assert.deepStrictEqual(versions.map((v) => v.version), [1])

        const before = (ok(yield* call("GET", `/ticket-model?ticketId=${ticket.id}`), "list") as Array<unknown>).length
        engineError(
          yield* call("POST", "/ticket-model/from-catalogue", {
            ticketId: ticket.id,
            parts: [{ catalogueModelConfigurationId: black.id, quantity: 1 }, { catalogueModelConfigurationId: "nope", quantity: 1 }]
          }),
          422,
          "parts.1.catalogueModelConfigurationId"
        )
        assert.strictEqual((ok(yield* call("GET", `/ticket-model?ticketId=${ticket.id}`), "list") as Array<unknown>).length, before, "all or nothing")
        engineError(
          yield* call("POST", "/ticket-model/from-catalogue", { ticketId: "missing", parts: [{ catalogueModelConfigurationId: black.id, quantity: 1 }] }),
          422,
          "ticketId"
        )
      }))

    it.effect("post-processing: sets services that apply to the part's technology", () =>
      Effect.gen(function*() {
        const { call, part } = yield* setup
        const created = ok(yield* part(), "part")
        const updated = ok(yield* call("PUT", `/ticket-model/${created.id}/post-processing`, { serviceIds: ["sanding", "painting"] }), "setPostProcessing")
        assert.deepStrictEqual(updated.serviceIds, ["sanding", "painting"])
        assert.strictEqual(updated.fileName, created.fileName)
        assert.deepStrictEqual(ok(yield* call("GET", `/ticket-model/${created.id}`), "get").serviceIds, ["sanding", "painting"])
        engineError(yield* call("PUT", `/ticket-model/${created.id}/post-processing`, { serviceIds: ["sanding", "anodizing"] }), 422, "serviceIds.1")
        engineError(yield* call("PUT", `/ticket-model/${created.id}/post-processing`, { serviceIds: ["gilding"] }), 422, "serviceIds.0")
        engineError(yield* call("PUT", "/ticket-model/missing/post-processing", { serviceIds: [] }), 404, "missing")
      }))

    it.effect("machining strategies: none reads empty, set, read back, overwrite; a missing part or service is refused", () =>
      Effect.gen(function*() {
        const { call, part } = yield* setup
        const created = ok(yield* part({ serviceIds: ["painting"] }), "part")
        const path = `/ticket-model/${created.id}/machining-strategy/painting`
        const none = yield* call("GET", path)
        assert.strictEqual(none.status, 200)
        assert.strictEqual(none.text, "")
        const set = ok(yield* call("PUT", path, { strategy: "roughing_and_finishing", toolIds: ["t1", "t2"], stepover: 0.4 }), "set")
        assert.deepStrictEqual(set, {
          ticketModelId: created.id,
          serviceId: "painting",
          strategy: "roughing_and_finishing",
          toolIds: ["t1", "t2"],
          stepover: 0.4
        })
        assert.deepStrictEqual(ok(yield* call("GET", path), "get"), set)
        const again = ok(yield* call("PUT", path, { strategy: "adaptive", toolIds: [] }), "overwrite")
        assert.deepStrictEqual(again, { ticketModelId: created.id, serviceId: "painting", strategy: "adaptive", toolIds: [] })
        assert.deepStrictEqual(ok(yield* call("GET", path), "get again"), again)
        engineError(yield* call("PUT", "/ticket-model/missing/machining-strategy/painting", { strategy: "adaptive", toolIds: [] }), 404, "missing")
        engineError(yield* call("PUT", `/ticket-model/${created.id}/machining-strategy/gilding`, { strategy: "adaptive", toolIds: [] }), 422, "serviceId")
        // The manufacturing step is one of the part's services too: its id is the technology's.
        ok(yield* call("PUT", `/ticket-model/${created.id}/machining-strategy/fdm`, { strategy: "finishing", toolIds: [] }), "the fdm step")
      }))

    it.effect("similarity: ranks the app's analysed parts, best first; a part without geometry is a 409", () =>
      Effect.gen(function*() {
        const { appId, call, part } = yield* setup
        const [a, b, c, d] = [
          ok(yield* part(), "a"),
          ok(yield* part(), "b"),
          ok(yield* part(), "c"),
          ok(yield* part(), "d")
        ]
        engineError(yield* call("POST", `/ticket-model/${a.id}/similarity`, {}), 409, "no geometry yet")
        yield* patch("ticketModel", appId, a.id, { geometry: geometry(40, 20, 10) })
        yield* patch("ticketModel", appId, b.id, { geometry: geometry(42, 21, 10) })
        yield* patch("ticketModel", appId, c.id, { geometry: geometry(400, 10, 10) })
        // d has no geometry: it is not ranked.
        const ranked = ok(yield* call("POST", `/ticket-model/${a.id}/similarity`, {}), "similarity") as Array<any>
        assert.deepStrictEqual(ranked.map((r) => r.ticketModelId), [b.id, c.id])
        assert.isAbove(ranked[0].score, ranked[1].score)
        for (const r of ranked) assert.isTrue(r.score >= 0 && r.score <= 1)
        assert.notInclude(ranked.map((r) => r.ticketModelId), d.id)
        const limited = ok(yield* call("POST", `/ticket-model/${a.id}/similarity`, { limit: 1 }), "limit") as Array<any>
        assert.deepStrictEqual(limited.map((r) => r.ticketModelId), [b.id])
        engineError(yield* call("POST", "/ticket-model/missing/similarity", {}), 404, "missing")
      }))

    it.effect("price breaks: the part priced at each quantity asked, as a write at that quantity prices it (test/http/price-breaks.test.ts)", () =>
      Effect.gen(function*() {
        const { appId, call, part } = yield* setup
        const created = ok(yield* part(), "part")
        engineError(yield* call("POST", `/ticket-model/${created.id}/price-breaks`, { quantities: [1, 10] }), 409, "has no price yet")
        yield* patch("ticketModel", appId, created.id, { geometry: geometry(20, 20, 20) })
        const answer = ok(yield* call("POST", `/ticket-model/${created.id}/price-breaks`, { quantities: [10, 1] }), "price breaks")
        assert.deepStrictEqual(answer.breaks.map((b: any) => [b.quantity, b.unitPrice, b.totalPrice]), [[10, 1.83, 18.3], [1, 6.93, 6.93]])
        assert.isNull(answer.leadTimeBasis, "no machines: no lead times")
      }))

    it.effect("model versions: resolve fields by name and dotted path", () =>
      Effect.gen(function*() {
        const { appId, call, part } = yield* setup
        const created = ok(yield* part(), "part")
        const [version] = ok(yield* call("GET", `/model-version?ticketModelId=${created.id}`), "versions") as Array<any>
        yield* patch("modelVersion", appId, version.id, { geometry: geometry(10, 20, 30) })
        const resolved = ok(
          yield* call("POST", `/model-version/${version.id}/fields-resolve`, {
            fields: ["fileName", "version", "geometry.volume", "geometry.watertight", "geometry.boundingBox", "nothing.here"]
          }),
          "fieldsResolve"
        )
        assert.deepStrictEqual(resolved, {
          modelVersionId: version.id,
          values: {
            fileName: "bracket.stl",
            version: 1,
            "geometry.volume": 6000,
            "geometry.watertight": true,
            "geometry.boundingBox": null,
            "nothing.here": null
          }
        })
        engineError(yield* call("POST", "/model-version/missing/fields-resolve", { fields: ["fileName"] }), 404, "missing")
        assert.strictEqual((yield* call("GET", "/model-version/missing")).text, "")
      }))

    it.effect("quotes: priced parts and items into a sent quote, converted to the project's currency; the ticket becomes quoted, then accepted", () =>
      Effect.gen(function*() {
        const { appId, call, part, ticket, project } = yield* setup
        const empty = ok(yield* call("POST", "/ticket", { projectId: project.id, name: "Empty" }), "empty ticket")
        engineError(yield* call("POST", `/ticket/${empty.id}/quote`, {}), 422, "no parts or items")
        engineError(yield* call("POST", "/ticket/missing/quote", {}), 404, "missing")

        const bracket = ok(yield* part({ name: "Bracket" }), "part")
        engineError(yield* call("POST", `/ticket/${ticket.id}/quote`, {}), 409, "part Bracket has no price yet")
        yield* patch("ticketModel", appId, bracket.id, { unitPrice: 12.5, totalPrice: 25 })
        const item = ok(yield* call("POST", "/item", { ticketId: ticket.id, name: "Packaging", quantity: 3, unitPrice: 1.1 }), "item")

        const before = Date.now()
        const quote = ok(yield* call("POST", `/ticket/${ticket.id}/quote`, {}), "ticket.quote")
        assert.match(quote.number, /^Q-\d{6}$/)
        assert.strictEqual(quote.state, "sent")
        assert.strictEqual(quote.currencyId, "USD", "the project's currency")
        assert.strictEqual(quote.exchangeRate, 1.08, "USD's reference rate, recorded")
        assert.strictEqual(quote.ticketId, ticket.id)
        // EUR 12.50 and 1.10 at 1.08: USD 13.50 and 1.188, rounded to 1.19; totals are quantity × unit price.
        assert.deepStrictEqual(quote.lines, [
          { description: "Bracket", ticketModelId: bracket.id, quantity: 2, unitPrice: 13.5, total: 27 },
          { description: "Packaging", itemId: item.id, quantity: 3, unitPrice: 1.19, total: 3.57 }
        ])
        assert.strictEqual(quote.total, 30.57)
        const days = (Date.parse(quote.validUntil) - before) / 86_400_000
        assert.isTrue(days > 29.9 && days < 30.1, `validUntil ${quote.validUntil}`)
        assert.strictEqual(ok(yield* call("GET", `/ticket/lookup?identifier=${ticket.id}`), "ticket").state, "quoted")
        assert.deepStrictEqual(ok(yield* call("GET", `/ticket-quote/${quote.id}`), "ticketQuote.get"), quote)
        assert.strictEqual((yield* call("GET", "/ticket-quote/missing")).text, "")

        // A PUT overrides a unit price; the engine recomputes the line total and the total (a total sent that is neither is refused).
        const { ticketId, currencyId, validUntil, lines } = quote
        const body = { ticketId, currencyId, validUntil, lines, state: "sent" }
        engineError(
          yield* call("PUT", `/ticket-quote/${quote.id}`, { ...body, lines: [lines[0], { ...lines[1], unitPrice: 1, total: 5 }] }),
          422,
          "lines.1.total"
        )
        const { total: _sent, ...overridden } = lines[1]
        const discounted = ok(
          yield* call("PUT", `/ticket-quote/${quote.id}`, { ...body, lines: [lines[0], { ...overridden, unitPrice: 1 }] }),
          "ticketQuote.replace"
        )
        assert.deepStrictEqual(discounted.lines[1], { ...lines[1], unitPrice: 1, total: 3 })
        assert.strictEqual(discounted.total, 30)
        assert.strictEqual(discounted.number, quote.number)

        // A newer quote supersedes it; the newer one is accepted, and the ticket with it.
        const second = ok(yield* call("POST", `/ticket/${ticket.id}/quote`, { currencyId: "GBP", validDays: 7, notes: "Rush" }), "override")
        assert.strictEqual(second.currencyId, "GBP")
        assert.strictEqual(second.exchangeRate, 0.85)
        assert.strictEqual(second.notes, "Rush")
        engineError(yield* call("POST", `/ticket/${ticket.id}/quote`, { currencyId: "XYZ" }), 422, "currencyId")
        const listed = ok(yield* call("GET", `/ticket-quote?ticketId=${ticket.id}`), "ticketQuote.list") as Array<any>
        assert.deepStrictEqual(listed.map((q) => [q.id, q.state]), [[quote.id, "superseded"], [second.id, "sent"]])

        const secondBody = { ticketId, currencyId: "GBP", validUntil: second.validUntil, lines: second.lines, notes: "Rush", state: "accepted" }
        const accepted = ok(yield* call("PUT", `/ticket-quote/${second.id}`, secondBody), "accept")
        assert.strictEqual(accepted.state, "accepted")
        assert.strictEqual(ok(yield* call("GET", `/ticket/lookup?identifier=${ticket.id}`), "ticket").state, "accepted")
        engineError(yield* call("PUT", `/ticket-quote/${quote.id}`, { ...body, state: "accepted" }), 409, "superseded")
      }))

    it.effect("tickets: cancel a draft, quoted or accepted ticket; its open quote is withdrawn", () =>
      Effect.gen(function*() {
        const { call, project, ticket } = yield* setup
        ok(yield* call("POST", "/item", { ticketId: ticket.id, name: "Setup fee", quantity: 1, unitPrice: 50 }), "item")
        const quote = ok(yield* call("POST", `/ticket/${ticket.id}/quote`, {}), "quote")
        const cancelled = ok(yield* call("PUT", `/ticket/${ticket.id}/cancel`), "ticket.cancel")
        assert.strictEqual(cancelled.id, ticket.id)
        assert.strictEqual(cancelled.state, "cancelled")
        assert.strictEqual(ok(yield* call("GET", `/ticket-quote/${quote.id}`), "quote").state, "withdrawn")
        engineError(yield* call("PUT", `/ticket/${ticket.id}/cancel`), 409, "is cancelled")
        engineError(yield* call("PUT", "/ticket/missing/cancel"), 404, "missing")
        const draft = ok(yield* call("POST", "/ticket", { projectId: project.id, name: "Never quoted" }), "draft")
        assert.strictEqual(ok(yield* call("PUT", `/ticket/${draft.id}/cancel`), "cancel a draft").state, "cancelled")
      }))

    it.effect("quotes: a ticket accepted, in production, completed or cancelled cannot be quoted (409 naming the state)", () =>
      Effect.gen(function*() {
        const { appId, call, part, ticket } = yield* setup
        const created = ok(yield* part(), "part")
        yield* patch("ticketModel", appId, created.id, { unitPrice: 1, totalPrice: 2 })
        for (const state of ["accepted", "in_production", "completed", "cancelled"]) {
          yield* patch("ticket", appId, ticket.id, { state })
          engineError(yield* call("POST", `/ticket/${ticket.id}/quote`, {}), 409, state)
        }
        assert.deepStrictEqual(ok(yield* call("GET", `/ticket-quote?ticketId=${ticket.id}`), "no quote"), [])
      }))

    it.effect("keeps another app's parts and quotes to their app", () =>
      Effect.gen(function*() {
        const { part } = yield* setup
        const created = ok(yield* part(), "part")
        const other = yield* setup
        assert.strictEqual((yield* other.call("GET", `/ticket-model/${created.id}`)).text, "")
        assert.strictEqual((yield* other.call("GET", `/ticket-model/${created.id}/machining-strategy/painting`)).text, "")
        engineError(yield* other.call("PUT", `/ticket-model/${created.id}/post-processing`, { serviceIds: [] }), 404, created.id)
        engineError(yield* other.call("POST", `/ticket-model/${created.id}/similarity`, {}), 404, created.id)
      }))

    it.effect("had a successful call of every operation of its groups (runs last)", () => Effect.sync(() => assert.deepStrictEqual(covered.missing(), [])))
  })
}
