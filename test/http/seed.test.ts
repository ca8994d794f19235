/**
 * `cli seed`'s demo data, read through the HTTP surface as the README
 * walkthrough does: a coherent set (machines hold their reels, catalogue
 * models carry geometry), from which a part is created, priced and quoted
 * at once; a second run adds nothing.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { seedDemoData } from "../../src/engine/seed.ts"
import { backends } from "../support/backends.ts"
import { ok } from "../support/http.ts"
import { TestApp, TestClient } from "../support/TestApp.ts"

for (const backend of backends) {
  layer(TestApp(backend), { timeout: 60_000, excludeTestServices: true })(`cli seed (${backend})`, (it) => {
    it.effect("loads a coherent demo set that quotes a catalogue part at once, and only once", () =>
      Effect.gen(function*() {
        const client = yield* TestClient
        const appId = `seed-${Math.random().toString(36).slice(2)}`
        const first = yield* seedDemoData(appId)
        assert.deepStrictEqual(first.added, {
          customers: 3,
          projects: 2,
          suppliers: 2,
          users: 2,
          materialSeries: 5,
          materials: 5,
          machineGroups: 3,
          machines: 4,
          reelGroups: 2,
          reels: 3,
          catalogues: 1,
          catalogueModels: 3
        })
        const again = yield* seedDemoData(appId)
        assert.isTrue(Object.values(again.added).every((added) => added === 0), JSON.stringify(again.added))
        assert.deepStrictEqual(again.present, first.present)

        const { value } = yield* client.createSecret(appId)
        const call = (method: string, path: string, body?: unknown) =>
          Effect.map(client.call(method, `/v1${path}`, { secret: value, body }), (reply) => ok(reply, `${method} ${path}`))

        // Two customers have an open project, numbered as any project of the app.
        const projects = (yield* call("GET", "/project")) as Array<any>
        assert.sameMembers(projects.map((project) => project.name), ["Gripper retrofit", "Airframe spares"])
        assert.isTrue(projects.every((project) => /^P-\d{6}$/.test(project.number)), JSON.stringify(projects))

        // Every demo material is in its technology's series.
        const series = (yield* call("GET", "/material-series")) as Array<any>
        assert.sameMembers(series.map((each) => each.id), ["demo-filaments", "demo-resins", "demo-sls-powders", "demo-mjf-powders", "demo-aluminium"])
        const materials = (yield* call("GET", "/material")) as Array<any>
        for (const material of materials) {
          assert.strictEqual(series.find((each) => each.id === material.materialSeriesId)?.technologyId, material.technologyId, material.name)
        }

        // Reel groups have numeric ids, the app's own count (its first is 1); the printers hold the reels loaded on them.
        const groups = (yield* call("GET", "/reel-group")) as Array<any>
        assert.sameMembers(groups.map((group) => group.inventoryProductName), ["PLA black 1 kg", "PLA white 1 kg"])
        assert.sameMembers(groups.map((group) => group.id), [1, 2])
        const reels = (yield* call("GET", `/inventory-product-location/${groups[0].id}/reel`)) as Array<any>
        assert.isAbove(reels.length, 0)
        const machines = (yield* call("GET", "/machine?technologyId=fdm")) as Array<any>
        const loaded = machines.flatMap((machine) => machine.reelIds)
        assert.strictEqual(loaded.length, 2)
        for (const machine of machines) {
          for (const reelId of machine.reelIds) {
            const [reel] = (yield* call("GET", `/reel?machineId=${machine.id}`)) as Array<any>
            assert.strictEqual(reel.id, reelId)
          }
        }
        const nearest = (yield* call("POST", "/machine/by-proximity", { latitude: 48.14, longitude: 11.58, limit: 1 })) as Array<any>
        assert.strictEqual(nearest[0].name, "Prusa XL #1")

        // The catalogue's models are analysed: a part from a configuration is priced and quotable at once.
        const models = (yield* call("GET", "/catalogue-model")) as Array<any>
        assert.strictEqual(models.length, 3)
        assert.isTrue(models.every((model) => model.geometry !== null && model.geometry.watertight))
        const [customer] = (yield* call("GET", "/customer?externalReference=demo-acme")) as Array<any>
        const project = yield* call("POST", "/project", { customerId: customer.id, name: "Demo order" })
        const ticket = yield* call("POST", "/ticket", { projectId: project.id, name: "Demo ticket" })
        const parts = (yield* call("POST", "/ticket-model/from-catalogue", {
          ticketId: ticket.id,
          parts: [{ catalogueModelConfigurationId: "demo-bearing-block-fdm", quantity: 10 }, { catalogueModelConfigurationId: "demo-spacer-mjf", quantity: 50 }]
        })) as Array<any>
        assert.isTrue(parts.every((part) => part.totalPrice > 0 && part.productionTimes !== null))
        const quote = yield* call("POST", `/ticket/${ticket.id}/quote`, {})
        assert.strictEqual(quote.total, Math.round((parts[0].totalPrice + parts[1].totalPrice) * 100) / 100)
      }))
  })
}
