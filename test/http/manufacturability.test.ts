/**
 * Manufacturability through HTTP: a part's model is analysed with its DFM
 * measurements and the part answers its verdict for its technology; a ticket
 * with a blocked part (a 400 mm bar, which no FDM build volume holds) is not
 * quoted (409 naming the part and the check) unless the request says
 * `override: true`, and the quote's line then carries the part's status.
 * A check that warns or blocks says where (the bar's box, in its own
 * coordinates; a thin plate's thinnest walls) and what to change.
 */
import { assert, layer } from "@effect/vitest"
import { Duration, Effect, Layer } from "effect"
import { modelFetcherLayer } from "../../src/engine/geometry/ModelFetcher.ts"
import { binaryStl, box } from "../../src/engine/geometry/writers.ts"
import { backends } from "../support/backends.ts"
import { FileHost, FileHostLive } from "../support/fileHost.ts"
import { appWithTicket, ok } from "../support/http.ts"
import { TestApp } from "../support/TestApp.ts"

const FILES: Readonly<Record<string, Uint8Array>> = {
  "/models/cube.stl": binaryStl(box(10, 10, 10)),
  "/models/bar.stl": binaryStl(box(400, 20, 20)),
  "/models/plate.stl": binaryStl(box(20, 20, 0.3, 100, 50, 0))
}

const fetcher = modelFetcherLayer({ allowPrivate: true, maxBytes: 1 << 20, timeout: Duration.seconds(5), maxRedirects: 0, placeholderHosts: [] })

interface Point {
  readonly x: number
  readonly y: number
  readonly z: number
}
interface Check {
  readonly id: string
  readonly status: string
  readonly value: number | null
  readonly limit: number | null
  readonly message: string
  readonly location?: { readonly boundingBox: { readonly min: Point; readonly max: Point }; readonly points: ReadonlyArray<Point> }
  readonly suggestion?: string
}
const checkOf = (part: { manufacturability: { checks: ReadonlyArray<Check> } }, id: string) => {
  const found = part.manufacturability.checks.find((check) => check.id === id)
  assert.isDefined(found, `${id} in ${JSON.stringify(part.manufacturability)}`)
  return found!
}

for (const backend of backends) {
  layer(Layer.merge(TestApp(backend, {}, { modelFetcher: fetcher }), FileHostLive(FILES)), { timeout: 60_000, excludeTestServices: true })(
    `Manufacturability over HTTP (${backend})`,
    (it) => {
      const setup = Effect.gen(function*() {
        const host = yield* FileHost
        const { call, ticket } = yield* appWithTicket("dfm")
        const material = ok(yield* call("POST", "/material", { name: "PLA", technologyId: "fdm" }), "material")
        const part = (name: string, file: string) =>
          call("POST", "/ticket-model", {
            ticketId: ticket.id,
            name,
            modelEndpoint: { url: `${host.url}/models/${file}` },
            technologyId: "fdm",
            materialId: material.id,
            quantity: 2
          })
        return { call, part, ticket }
      })

      it.effect("a cube is ok for FDM, every check said, on the part as created and as read", () =>
        Effect.gen(function*() {
          const { call, part } = yield* setup
          const created = ok(yield* part("Cube", "cube.stl"), "create")
          assert.strictEqual(created.manufacturability.status, "ok", JSON.stringify(created.manufacturability))
          assert.deepStrictEqual(
            created.manufacturability.checks.map((check: Check) => check.id),
            [
              "mesh-open-edges",
              "mesh-non-manifold-edges",
              "mesh-inconsistent-normals",
              "mesh-degenerate-triangles",
              "mesh-shells",
              "build-volume",
              "wall-thickness",
              "overhang"
            ]
          )
          assert.strictEqual(checkOf(created, "wall-thickness").value, 10)
          assert.include(checkOf(created, "build-volume").message, "default build volume")
          assert.deepStrictEqual(ok(yield* call("GET", `/ticket-model/${created.id}`), "get").manufacturability, created.manufacturability)
          // The measurements stay inside: the API's geometry is the documented fields.
          assert.deepStrictEqual(Object.keys(created.geometry).sort(), ["boundingBox", "surfaceArea", "triangleCount", "unit", "volume", "watertight"])
          // Nothing to locate when nothing is wrong.
          for (const check of created.manufacturability.checks) assert.notProperty(check, "location", check.id)
        }))

      it.effect("a 400 mm bar fits no FDM machine: its ticket is a 409 naming the part and build-volume, and quoted with override", () =>
        Effect.gen(function*() {
          const { call, part, ticket } = yield* setup
          ok(yield* part("Cube", "cube.stl"), "cube")
          const bar = ok(yield* part("Long bar", "bar.stl"), "bar")
          assert.strictEqual(bar.manufacturability.status, "blocked")
          const fit = checkOf(bar, "build-volume")
          assert.strictEqual(fit.status, "blocked")
          assert.strictEqual(fit.value, 400)
          assert.deepStrictEqual(fit.location, { boundingBox: { min: { x: 0, y: 0, z: 0 }, max: { x: 400, y: 20, z: 20 } }, points: [] })
          assert.include(fit.suggestion, "Scale the part down or split it into pieces that fit 250 × 210 × 220 mm")

          const refused = yield* call("POST", `/ticket/${ticket.id}/quote`, {})
          assert.strictEqual(refused.status, 409, refused.text)
          assert.include(refused.json().message, `part Long bar (${bar.id}) is blocked by build-volume`)
          assert.include(refused.json().message, "override")

          const quote = ok(yield* call("POST", `/ticket/${ticket.id}/quote`, { override: true }), "quote with override")
          const statuses = Object.fromEntries(
            quote.lines.map((line: { ticketModelId: string; manufacturability: string }) => [line.ticketModelId, line.manufacturability])
          )
          assert.strictEqual(statuses[bar.id], "blocked")
          assert.strictEqual(Object.values(statuses).filter((status) => status === "ok").length, 1)
          // A revision of the sent quote keeps the engine's statuses: another sent is refused (422 naming it), never silently replaced.
          const other = yield* call("PUT", `/ticket-quote/${quote.id}`, {
            ...quote,
            lines: quote.lines.map((line: Record<string, unknown>) => ({ ...line, manufacturability: "ok" }))
          })
          assert.deepStrictEqual([other.status, other.json().type], [422, "ValidationError"], other.text)
          const blockedAt = quote.lines.findIndex((line: { ticketModelId: string }) => line.ticketModelId === bar.id)
          assert.include(other.json().message, `lines.${blockedAt}.manufacturability: sent ok, the engine's blocked`)
          const revised = ok(yield* call("PUT", `/ticket-quote/${quote.id}`, { ...quote, notes: "Bar: redesign pending" }), "revise")
          assert.deepStrictEqual(
            revised.lines.map((line: { manufacturability: string }) => line.manufacturability),
            quote.lines.map((line: { manufacturability: string }) => line.manufacturability)
          )
        }))

      it.effect("a 0.3 mm plate is blocked for FDM: where its thinnest walls are, in its own coordinates, and to thicken them to 0.8 mm", () =>
        Effect.gen(function*() {
          const { part } = yield* setup
          const plate = ok(yield* part("Plate", "plate.stl"), "plate")
          const wall = checkOf(plate, "wall-thickness")
          assert.deepInclude(wall, { status: "blocked", value: 0.3, limit: 0.4, suggestion: "Thicken the wall to 0.8 mm at least." })
          const { boundingBox, points } = wall.location!
          assert.lengthOf(points, 5)
          for (const point of [...points, boundingBox.min, boundingBox.max]) {
            assert.isTrue(point.x >= 100 && point.x <= 120 && point.y >= 50 && point.y <= 70 && point.z >= 0 && point.z <= 0.3, JSON.stringify(point))
          }
        }))
    }
  )
}
