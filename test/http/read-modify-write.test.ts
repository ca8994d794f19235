/**
 * Issue 16, items 1 and 2: a record read is a valid PUT body (read-modify-write),
 * and a 400 lists every field at fault at once, in REST and in MCP tool errors.
 */
import { assert, layer } from "@effect/vitest"
import { Duration, Effect, Layer } from "effect"
import { modelFetcherLayer } from "../../src/engine/geometry/ModelFetcher.ts"
import { binaryStl, box } from "../../src/engine/geometry/writers.ts"
import { backends } from "../support/backends.ts"
import { FileHost, FileHostLive } from "../support/fileHost.ts"
import { appWithTicket, ok } from "../support/http.ts"
import { type Reply, TestApp } from "../support/TestApp.ts"

const FILES = { "/models/cube.stl": binaryStl(box(20, 20, 20)) }

const fetcher = modelFetcherLayer({ allowPrivate: true, timeout: Duration.seconds(5), placeholderHosts: ["example"] })

/** A 400 whose `errors` name exactly these paths (in any order), and whose `message` names the first of them. */
const listsProblems = (reply: Reply, paths: ReadonlyArray<string>) => {
  assert.strictEqual(reply.status, 400, reply.text)
  const body = reply.json()
  assert.strictEqual(body.code, 400)
  assert.isString(body.type)
  assert.sameMembers(body.errors.map((problem: { path: string }) => problem.path), [...paths], reply.text)
  for (const problem of body.errors) assert.include(problem.message, `"${problem.path}"`)
  assert.include(body.message, `"${body.errors[0].path}"`)
  return body
}

for (const backend of backends) {
  layer(Layer.merge(TestApp(backend, {}, { modelFetcher: fetcher }), FileHostLive(FILES)), {
    timeout: 90_000,
    excludeTestServices: true
  })(`Read-modify-write and every problem at once (${backend})`, (it) => {
    it.effect("a part read is a valid PUT body: change one field, send the rest back as read", () =>
      Effect.gen(function*() {
        const host = yield* FileHost
        const { call, ticket } = yield* appWithTicket("rmw")
        const pla = ok(yield* call("POST", "/material", { name: "PLA", technologyId: "fdm" }), "material")
        const part = ok(
          yield* call("POST", "/ticket-model", {
            ticketId: ticket.id,
            name: "Cube",
            modelEndpoint: { url: `${host.url}/models/cube.stl` },
            technologyId: "fdm",
            materialId: pla.id,
            quantity: 7
          }),
          "part"
        )
        const read = ok(yield* call("GET", `/ticket-model/${part.id}`), "read")
        assert.isNotNull(read.geometry)
        const replaced = ok(yield* call("PUT", `/ticket-model/${part.id}`, { ...read, quantity: 9, fileName: "ignored.stl" }), "replace")
        assert.strictEqual(replaced.quantity, 9)
        assert.strictEqual(replaced.id, part.id)
        assert.strictEqual(replaced.fileName, read.fileName, "a read-only field sent back is ignored")
        assert.strictEqual(replaced.createdAt, read.createdAt)
        assert.notStrictEqual(replaced.totalPrice, read.totalPrice, "the engine re-priced the part")
      }))

    it.effect("a ticket read is a valid PUT body; its state and number are the engine's, whatever the body says", () =>
      Effect.gen(function*() {
        const { call, ticket } = yield* appWithTicket("rmw")
        const replaced = ok(yield* call("PUT", `/ticket/${ticket.id}`, { ...ticket, name: "Renamed", state: "completed", number: "T-999999" }), "replace")
        assert.strictEqual(replaced.name, "Renamed")
        assert.strictEqual(replaced.state, "draft")
        assert.strictEqual(replaced.number, ticket.number)
        const stored = ok(yield* call("GET", `/ticket/lookup?identifier=${ticket.id}`), "read")
        assert.deepStrictEqual({ ...stored, updatedAt: replaced.updatedAt }, replaced)
      }))

    it.effect("a body whose id is another record's is a 400 naming `id`; nothing changes", () =>
      Effect.gen(function*() {
        const { call, customer } = yield* appWithTicket("rmw")
        const other = ok(yield* call("POST", "/customer", { name: "Other", email: "other@example.com" }), "customer")
        const reply = yield* call("PUT", `/customer/${customer.id}`, { ...other, name: "Hijack" })
        listsProblems(reply, ["id"])
        assert.strictEqual(ok(yield* call("GET", `/customer/${customer.id}`), "read").name, customer.name)
        assert.strictEqual(ok(yield* call("GET", `/customer/${other.id}`), "read").name, "Other")
      }))

    it.effect("missing required fields of a PUT are still 400s, all of them named", () =>
      Effect.gen(function*() {
        const { call, customer } = yield* appWithTicket("rmw")
        const { email: _e, name: _n, ...rest } = customer
        listsProblems(yield* call("PUT", `/customer/${customer.id}`, rest), ["name", "email"])
      }))

    it.effect("a reel group read is a valid PUT /reel-group body: inventoryProductName stands for name", () =>
      Effect.gen(function*() {
        const { call } = yield* appWithTicket("rmw")
        const pla = ok(yield* call("POST", "/material", { name: "PLA", technologyId: "fdm" }), "material")
        const group = ok(yield* call("POST", "/reel-group", { name: "PLA black", materialId: pla.id, reelWeight: 750 }), "group")
        const read = ok(yield* call("GET", `/reel-group/${group.id}`), "read")
        const renamed = ok(yield* call("PUT", "/reel-group", { ...read, inventoryProductName: "PLA jet black" }), "replace")
        assert.strictEqual(renamed.inventoryProductName, "PLA jet black")
        assert.strictEqual(renamed.createdAt, read.createdAt)
        const clash = yield* call("PUT", "/reel-group", { ...read, name: "One", inventoryProductName: "Other" })
        listsProblems(clash, ["inventoryProductName"])
        const { inventoryProductName: _i, ...nameless } = read
        listsProblems(yield* call("PUT", "/reel-group", nameless), ["name"])
      }))

    it.effect("a reel read is a valid PUT /reel body", () =>
      Effect.gen(function*() {
        const { call } = yield* appWithTicket("rmw")
        const pla = ok(yield* call("POST", "/material", { name: "PLA", technologyId: "fdm" }), "material")
        const group = ok(yield* call("POST", "/reel-group", { name: "PLA black", materialId: pla.id, reelWeight: 750 }), "group")
        const [reel] = ok(yield* call("POST", `/inventory-product-location/${group.id}/reel`, { reels: [{ remainingWeight: 700 }] }), "reels")
        const read = ok(yield* call("GET", `/reel?ids=${reel.id}`), "read")[0]
        const replaced = ok(yield* call("PUT", "/reel", { ...read, remainingWeight: 650 }), "replace")
        assert.strictEqual(replaced.remainingWeight, 650)
        assert.strictEqual(replaced.createdAt, read.createdAt)
      }))

    it.effect("POST /ticket {} names every missing field, with unknown and invalid ones, in one 400", () =>
      Effect.gen(function*() {
        const { call } = yield* appWithTicket("rmw")
        listsProblems(yield* call("POST", "/ticket", {}), ["projectId", "name"])
        const body = listsProblems(
          yield* call("POST", "/ticket", { name: "", dueDate: "soon", zzz: 1 }),
          ["projectId", "name", "dueDate", "zzz"]
        )
        const unknown = body.errors.find((problem: { path: string }) => problem.path === "zzz")
        assert.include(unknown.message, "Unknown field")
        const missing = body.errors.find((problem: { path: string }) => problem.path === "projectId")
        assert.include(missing.message, "Missing required field")
      }))

    it.effect("nested fields are named by their path, and every bad query parameter is listed", () =>
      Effect.gen(function*() {
        const { call } = yield* appWithTicket("rmw")
        const reply = yield* call("POST", "/ticket-model", {
          technologyId: "fdm",
          materialId: 7,
          quantity: -1,
          modelEndpoint: { url: 7 }
        })
        listsProblems(reply, ["ticketId", "materialId", "quantity", "modelEndpoint.url"])
        listsProblems(yield* call("GET", "/customer?limit=0&offset=-1&zzz=1"), ["zzz", "limit", "offset"])
      }))
  })
}
