/**
 * Parts made from a catalogue configuration are made as it says, on every
 * path: `POST /ticket-model` with only `catalogueModelConfigurationId`
 * (technology, material, colour, production parameters and services all the
 * configuration's), `POST /ticket-model/from-catalogue`, MCP `create_part`
 * and the configuration's price breaks give the same unit price; the part
 * shows every parameter it is priced with. A value the caller sends as well
 * must be the configuration's: a 422 naming the field and both values.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { seedDemoData } from "../../src/engine/seed.ts"
import { backends } from "../support/backends.ts"
import { ok } from "../support/http.ts"
import { mcpToolCall } from "../support/mcp.ts"
import { type Reply, TestApp, TestClient } from "../support/TestApp.ts"

/** The demo's bearing block in PLA: layer height 0.2 mm, infill 60 %. */
const BEARING_BLOCK = "demo-bearing-block-fdm"

const refused = (reply: Reply, status: number, type: string, ...includes: ReadonlyArray<string>) => {
  assert.strictEqual(reply.status, status, reply.text)
  const body = reply.json()
  assert.strictEqual(body.type, type, reply.text)
  for (const text of includes) assert.include(body.message, text)
}

/** The JSON-RPC message of an MCP answer, a JSON body or the last event of a stream. */
const rpcMessage = (text: string) => {
  const trimmed = text.trim()
  if (trimmed.startsWith("{")) return JSON.parse(trimmed)
  const data = trimmed.split("\n").filter((line) => line.startsWith("data:")).map((line) => line.slice(5).trim()).filter((line) => line !== "")
  return JSON.parse(data[data.length - 1]!)
}

for (const backend of backends) {
  layer(TestApp(backend), { timeout: 60_000, excludeTestServices: true })(`Parts from a catalogue configuration (${backend})`, (it) => {
    /** A seeded app with a ticket; `call` is REST, `tool` MCP, both with the app's secret. */
    const setup = Effect.gen(function*() {
      const client = yield* TestClient
      const appId = `catalogue-parts-${Math.random().toString(36).slice(2)}`
      yield* seedDemoData(appId)
      const { value } = yield* client.createSecret(appId)
      const call = (method: string, path: string, body?: unknown) => client.call(method, `/v1${path}`, { secret: value, body })
      const tool = (name: string, args: Record<string, unknown>) =>
        Effect.promise(async () => rpcMessage(await (await mcpToolCall(client.baseUrl, value, name, args)).text()))
      const [customer] = ok(yield* call("GET", "/customer?externalReference=demo-acme"), "customer") as Array<any>
      const project = ok(yield* call("POST", "/project", { customerId: customer.id, name: "Spares" }), "project")
      const ticket = ok(yield* call("POST", "/ticket", { projectId: project.id, name: "Bearing blocks" }), "ticket")
      const models = ok(yield* call("GET", "/catalogue-model"), "catalogue models") as Array<any>
      const configuration = models.flatMap((model) => model.configurations).find((candidate) => candidate.id === BEARING_BLOCK)
      const pla = ok(yield* call("GET", `/material/${configuration.materialId}`), "PLA")
      return { call, pla, ticket, tool }
    })

    it.effect("the same configuration, the same part and unit price: POST /ticket-model, from-catalogue, MCP create_part, price breaks", () =>
      Effect.gen(function*() {
        const { call, pla, ticket, tool } = yield* setup
        const minimal = ok(
          yield* call("POST", "/ticket-model", { ticketId: ticket.id, catalogueModelConfigurationId: BEARING_BLOCK, quantity: 10 }),
          "from the configuration alone"
        )
        // What the agent sent: the technology and material, no parameters. Priced with the configuration's, not the defaults.
        const asTheAgentSent = ok(
          yield* call("POST", "/ticket-model", {
            ticketId: ticket.id,
            catalogueModelConfigurationId: BEARING_BLOCK,
            technologyId: "fdm",
            materialId: pla.id,
            quantity: 10
          }),
          "with technology and material"
        )
        const [fromCatalogue] = ok(
          yield* call("POST", "/ticket-model/from-catalogue", { ticketId: ticket.id, parts: [{ catalogueModelConfigurationId: BEARING_BLOCK, quantity: 10 }] }),
          "from-catalogue"
        ) as Array<any>
        const mcp = yield* tool("create_part", { ticketId: ticket.id, catalogueModelConfigurationId: BEARING_BLOCK, quantity: 10 })
        assert.notStrictEqual(mcp.result?.isError, true, JSON.stringify(mcp))
        const viaMcp = mcp.result.structuredContent
        const breaks = ok(
          yield* call("POST", `/catalogue-model-configuration/${BEARING_BLOCK}/price-breaks`, { quantities: [10] }),
          "price breaks"
        )

        const makeup = (part: any) => ({
          name: part.name,
          technologyId: part.technologyId,
          materialId: part.materialId,
          colourId: part.colourId,
          productionParameterIds: part.productionParameterIds,
          serviceIds: part.serviceIds,
          fileName: part.fileName,
          unitPrice: part.unitPrice,
          totalPrice: part.totalPrice,
          productionTimes: part.productionTimes
        })
        assert.deepStrictEqual(makeup(minimal), {
          name: "Bearing block, PLA",
          technologyId: "fdm",
          materialId: pla.id,
          colourId: undefined,
          // Every parameter it is priced with: the configuration's two, and the default wall count.
          productionParameterIds: { layerHeight: "fdm-lh-0.2", infill: "fdm-infill-60", walls: "fdm-walls-2" },
          serviceIds: undefined,
          fileName: "bearing-block.stl",
          unitPrice: 13.98,
          totalPrice: 139.8,
          productionTimes: minimal.productionTimes
        })
        for (const [what, part] of [["as the agent sent it", asTheAgentSent], ["from-catalogue", fromCatalogue], ["MCP create_part", viaMcp]]) {
          assert.deepStrictEqual(makeup(part), makeup(minimal), what)
        }
        assert.strictEqual(breaks.breaks[0].unitPrice, minimal.unitPrice, "the configuration's price breaks")

        const quote = ok(yield* call("POST", `/ticket/${ticket.id}/quote`, {}), "quote")
        assert.deepStrictEqual(quote.lines.map((line: any) => line.unitPrice), [13.98, 13.98, 13.98, 13.98])
      }))

    it.effect("a value sent that the configuration does not have is a 422 naming the field and both values", () =>
      Effect.gen(function*() {
        const { call, pla, ticket } = yield* setup
        const resin = ok(yield* call("GET", "/material?technologyId=sla"), "resin")[0]
        const part = (extra: Record<string, unknown>) =>
          call("POST", "/ticket-model", { ticketId: ticket.id, catalogueModelConfigurationId: BEARING_BLOCK, quantity: 1, ...extra })
        refused(yield* part({ technologyId: "sla", materialId: resin.id }), 422, "ValidationError", "technologyId", BEARING_BLOCK, "has fdm, not sla")
        const otherPla = ok(yield* call("POST", "/material", { name: "PLA+", technologyId: "fdm" }), "another PLA")
        refused(yield* part({ materialId: otherPla.id }), 422, "ValidationError", "materialId", `has ${pla.id}, not ${otherPla.id}`)
        refused(yield* part({ colourId: "black" }), 422, "ValidationError", "colourId", "has no colour, not black")
        refused(
          yield* part({ productionParameterIds: { infill: "fdm-infill-30" } }),
          422,
          "ValidationError",
          "productionParameterIds.infill",
          "has fdm-infill-60, not fdm-infill-30"
        )
        refused(yield* part({ productionParameterIds: { walls: "fdm-walls-3" } }), 422, "ValidationError", "productionParameterIds.walls", "has fdm-walls-2")
        refused(yield* part({ productionParameterIds: { colourDepth: "x" } }), 422, "UnknownReference", "productionParameterIds.colourDepth")
        refused(yield* part({ serviceIds: ["sanding"] }), 422, "ValidationError", "serviceIds", "has [], not [sanding]")
        refused(yield* part({ catalogueModelConfigurationId: "no-such-configuration" }), 422, "UnknownReference", "catalogueModelConfigurationId")

        // What agrees is welcome: the configuration's own values, as a part made from it reads.
        const agreeing = ok(
          yield* part({ technologyId: "fdm", materialId: pla.id, productionParameterIds: { infill: "fdm-infill-60" }, serviceIds: [], quantity: 10 }),
          "agreeing values"
        )
        assert.strictEqual(agreeing.unitPrice, 13.98)
        // A replace of the part as read keeps it as configured; a changed quantity is priced again, as the configuration's breaks say.
        const replaced = ok(yield* call("PUT", `/ticket-model/${agreeing.id}`, { ...agreeing, quantity: 5 }), "replace as read")
        const [atFive] = ok(yield* call("POST", `/catalogue-model-configuration/${BEARING_BLOCK}/price-breaks`, { quantities: [5] }), "breaks").breaks
        assert.deepStrictEqual([replaced.quantity, replaced.unitPrice, replaced.productionParameterIds], [5, atFive.unitPrice, agreeing.productionParameterIds])
        assert.notStrictEqual(atFive.unitPrice, 13.98)
        refused(
          yield* call("PUT", `/ticket-model/${agreeing.id}`, {
            ...agreeing,
            productionParameterIds: { ...agreeing.productionParameterIds, infill: "fdm-infill-100" }
          }),
          422,
          "ValidationError",
          "productionParameterIds.infill",
          "has fdm-infill-60, not fdm-infill-100"
        )
        // Its post-processing is the configuration's too.
        refused(
          yield* call("PUT", `/ticket-model/${agreeing.id}/post-processing`, { serviceIds: ["sanding"] }),
          422,
          "ValidationError",
          "serviceIds",
          BEARING_BLOCK
        )
      }))

    it.effect("a configuration's services are its parts' services; with a model file, technologyId and materialId are required (400)", () =>
      Effect.gen(function*() {
        const { call, pla, ticket } = yield* setup
        const catalogue = ok(yield* call("POST", "/catalogue", { name: "Finished parts" }), "catalogue")
        const body = (configuration: Record<string, unknown>) => ({
          catalogueId: catalogue.id,
          name: "Knob",
          modelEndpoint: { url: "https://files.example/knob.stl" },
          configurations: [configuration]
        })
        refused(
          yield* call("POST", "/catalogue-model", body({ technologyId: "fdm", materialId: pla.id, serviceIds: ["anodizing"] })),
          422,
          "ValidationError",
          "configurations.0.serviceIds.0",
          "anodizing"
        )
        const model = ok(
          yield* call("POST", "/catalogue-model", body({ technologyId: "fdm", materialId: pla.id, colourId: "red", serviceIds: ["sanding"] })),
          "model"
        )
        const configurationId = model.configurations[0].id
        const part = ok(yield* call("POST", "/ticket-model", { ticketId: ticket.id, catalogueModelConfigurationId: configurationId, quantity: 2 }), "part")
        assert.deepStrictEqual([part.colourId, part.serviceIds, part.name], ["red", ["sanding"], "Knob"])
        refused(
          yield* call("POST", "/ticket-model", { ticketId: ticket.id, catalogueModelConfigurationId: configurationId, quantity: 2, serviceIds: [] }),
          422,
          "ValidationError",
          "serviceIds",
          "has [sanding], not []"
        )
        refused(
          yield* call("POST", "/ticket-model", { ticketId: ticket.id, catalogueModelConfigurationId: configurationId, quantity: 2, colourId: "white" }),
          422,
          "ValidationError",
          "colourId",
          "has red, not white"
        )

        const fromFile = { ticketId: ticket.id, modelEndpoint: { url: "https://files.example/a.stl" }, technologyId: "fdm", materialId: pla.id, quantity: 1 }
        refused(yield* call("POST", "/ticket-model", { ...fromFile, technologyId: undefined }), 400, "MissingField", "\"technologyId\"")
        refused(yield* call("POST", "/ticket-model", { ...fromFile, materialId: undefined }), 400, "MissingField", "\"materialId\"")
        const own = ok(yield* call("POST", "/ticket-model", { ...fromFile, productionParameterIds: { layerHeight: "fdm-lh-0.1" } }), "own model")
        assert.deepStrictEqual(own.productionParameterIds, { layerHeight: "fdm-lh-0.1", infill: "fdm-infill-30", walls: "fdm-walls-2" })
      }))
  })
}
