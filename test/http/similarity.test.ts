/**
 * `POST /ticket-model/{id}/similarity` through HTTP, on parts made from real
 * model files (the local file host of test/support serves files written by
 * src/engine/geometry/writers.ts): a moved and a scaled copy of a cube rank
 * above other shapes; the queried part, parts without geometry and other
 * apps' parts are never returned; the index built by a first call follows
 * later writes (a delete, a new part, a new model, writes made directly in
 * the database as another engine instance would, and, on PostgreSQL, a
 * transaction that commits after a read that saw later writes); equal scores
 * are ordered by id; parts written before the migration are indexed. The D2
 * distribution is stored with the geometry but not answered.
 */
import { assert, layer } from "@effect/vitest"
import { Duration, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { partShapes } from "../../src/adapters/storage/migrations/0005_part_shapes.ts"
import { modelFetcherLayer } from "../../src/engine/geometry/ModelFetcher.ts"
import { DISTRIBUTION_BINS } from "../../src/engine/geometry/shapeDistribution.ts"
import { binaryStl, box, obj, sphere } from "../../src/engine/geometry/writers.ts"
import { RecordRepository } from "../../src/engine/RecordRepository.ts"
import { backends } from "../support/backends.ts"
import { FileHost, FileHostLive, type ModelFiles } from "../support/fileHost.ts"
import { appWithTicket, ok, patch } from "../support/http.ts"
import { TestApp } from "../support/TestApp.ts"

const FILES: ModelFiles = {
  "/cube.stl": binaryStl(box(10, 10, 10)),
  "/cube-moved.obj": obj(box(10, 10, 10, 250, -40, 12)),
  "/cube-large.stl": binaryStl(box(25, 25, 25)),
  "/box.stl": binaryStl(box(8, 12, 16)),
  "/sphere.stl": binaryStl(sphere(6.2, 48, 24)),
  "/plate.stl": binaryStl(box(20, 20, 2.5))
}

const fetcher = modelFetcherLayer({
  allowPrivate: true,
  maxBytes: 1024 * 1024,
  timeout: Duration.seconds(5),
  maxRedirects: 0,
  placeholderHosts: ["example"]
})

/** A part as the engine stored it (its geometry with the shape distribution). */
const stored = (appId: string, id: string) =>
  Effect.gen(function*() {
    const records = yield* RecordRepository
    const part = yield* records.find("ticketModel", appId, id)
    if (part === undefined) return yield* Effect.die(new Error(`part ${id} missing`))
    return part
  }).pipe(Effect.provide(RecordRepository.layer))

interface Ranked {
  readonly ticketModelId: string
  readonly score: number
}

for (const backend of backends) {
  layer(Layer.merge(TestApp(backend, {}, { modelFetcher: fetcher }), FileHostLive(FILES)), { timeout: 60_000, excludeTestServices: true })(
    `Part similarity over HTTP (${backend})`,
    (it) => {
      /** A fresh app with a ticket; `part(file)` creates a part from a file of the host (or a placeholder url). */
      const newApp = Effect.gen(function*() {
        const host = (yield* FileHost).url
        const { appId, call, ticket } = yield* appWithTicket("similarity")
        const material = ok(yield* call("POST", "/material", { name: "PLA", technologyId: "fdm" }), "material")
        const body = (file: string) => ({
          ticketId: ticket.id,
          modelEndpoint: { url: file.startsWith("https://") ? file : `${host}${file}` },
          technologyId: "fdm",
          materialId: material.id,
          quantity: 1
        })
        const part = (file: string) => Effect.map(call("POST", "/ticket-model", body(file)), (reply) => ok(reply, file).id as string)
        const similar = (id: string, limit?: number) =>
          Effect.map(
            call("POST", `/ticket-model/${id}/similarity`, limit === undefined ? {} : { limit }),
            (reply) => ok(reply, `similarity of ${id}`) as ReadonlyArray<Ranked>
          )
        const ranking = (id: string) => Effect.map(similar(id), (ranked) => ranked.map((entry) => entry.ticketModelId))
        return { appId, call, body, part, similar, ranking }
      })

      it.effect("a moved and a scaled copy rank above other shapes; never the part itself, parts without geometry or other apps' parts", () =>
        Effect.gen(function*() {
          const { appId, call, part, ranking, similar } = yield* newApp
          const cube = yield* part("/cube.stl")
          const moved = yield* part("/cube-moved.obj")
          const large = yield* part("/cube-large.stl")
          const others = [yield* part("/box.stl"), yield* part("/sphere.stl"), yield* part("/plate.stl")]
          const unanalysed = yield* part("https://files.example/bracket.stl")
          const otherApp = yield* newApp
          const foreign = yield* otherApp.part("/cube.stl")

          const ranked = yield* similar(cube)
          assert.deepStrictEqual(ranked.slice(0, 2).map((entry) => entry.ticketModelId), [moved, large])
          assert.sameMembers(ranked.slice(2).map((entry) => entry.ticketModelId), others)
          assert.isAtLeast(ranked[0]!.score, 0.999, "a moved copy is the same shape")
          assert.isBelow(ranked[1]!.score, ranked[0]!.score, "a larger copy is close, not the same")
          for (let i = 1; i < ranked.length; i++) assert.isAtMost(ranked[i]!.score, ranked[i - 1]!.score)
          for (const entry of ranked) assert.isTrue(entry.score > 0 && entry.score <= 1)
          for (const absent of [cube, unanalysed, foreign]) assert.notInclude(ranked.map((entry) => entry.ticketModelId), absent)
          assert.deepStrictEqual((yield* similar(cube, 2)).map((entry) => entry.ticketModelId), [moved, large])
          // The other app sees only its own part: nothing to compare with.
          assert.deepStrictEqual(yield* otherApp.ranking(foreign), [])
          assert.strictEqual((yield* otherApp.call("POST", `/ticket-model/${cube}/similarity`, {})).status, 404)
          assert.deepStrictEqual(yield* ranking(cube), ranked.map((entry) => entry.ticketModelId), "a second call answers the same")

          // The distribution is stored with the geometry, and not part of the API's answer.
          const answered = ok(yield* call("GET", `/ticket-model/${cube}`), "get").geometry
          assert.deepStrictEqual(Object.keys(answered).sort(), ["boundingBox", "surfaceArea", "triangleCount", "unit", "volume", "watertight"])
          assert.lengthOf(((yield* stored(appId, cube)).geometry as { shapeDistribution: ReadonlyArray<number> }).shapeDistribution, DISTRIBUTION_BINS)
        }))

      it.effect("the index follows later writes: deletes, new parts, new models, and writes made directly in the database", () =>
        Effect.gen(function*() {
          const { appId, body, call, part, ranking } = yield* newApp
          const sql = yield* SqlClient.SqlClient
          const cube = yield* part("/cube.stl")
          const moved = yield* part("/cube-moved.obj")
          const ball = yield* part("/sphere.stl")
          assert.deepStrictEqual(yield* ranking(cube), [moved, ball])

          // Deleted after the index was built: gone from the next answer.
          ok(yield* call("DELETE", `/ticket-model/${moved}`), "delete")
          assert.deepStrictEqual(yield* ranking(cube), [ball])

          const large = yield* part("/cube-large.stl")
          assert.deepStrictEqual(yield* ranking(cube), [large, ball])

          // The sphere part gets a new model: the moved cube, now the nearest.
          ok(yield* call("PUT", `/ticket-model/${ball}`, body("/cube-moved.obj")), "replace")
          assert.deepStrictEqual(yield* ranking(cube), [ball, large])

          // Another instance's writes reach only the database: the large cube gets a plate's geometry
          // (now as far as the plate, equal scores by id), then the nearest part is deleted.
          const plate = yield* part("/plate.stl")
          yield* patch("ticketModel", appId, large, { geometry: (yield* stored(appId, plate)).geometry })
          assert.deepStrictEqual(yield* ranking(cube), [ball, ...[plate, large].sort()])
          yield* sql`DELETE FROM engine_record WHERE resource = 'ticketModel' AND id = ${ball}`
          assert.deepStrictEqual(yield* ranking(cube), [plate, large].sort())
        }))

      // PostgreSQL only: PGlite runs one transaction at a time, so nothing can commit around an open one.
      if (backend === "postgres") {
        it.effect("a write committed after a read that could not see it, while later writes were seen, is not missed", () =>
          Effect.gen(function*() {
            const { appId, part, ranking, similar } = yield* newApp
            const sql = yield* SqlClient.SqlClient
            const cube = yield* part("/cube.stl")
            const ball = yield* part("/sphere.stl")
            assert.deepStrictEqual(yield* ranking(cube), [ball])
            const cubeGeometry = JSON.stringify((yield* stored(appId, cube)).geometry)
            const large = yield* sql.withTransaction(Effect.gen(function*() {
              // This transaction writes first (the older transaction id) and commits last.
              yield* sql`
                UPDATE engine_record SET data = jsonb_set(data, '{geometry}', ${cubeGeometry}::jsonb)
                WHERE resource = 'ticketModel' AND id = ${ball}`
              const large = yield* part("/cube-large.stl")
              const seen = yield* similar(cube)
              assert.deepStrictEqual(seen.map((entry) => entry.ticketModelId), [large, ball], "the newer write is seen, the open one not")
              return large
            }))
            const after = yield* similar(cube)
            assert.deepStrictEqual(after.map((entry) => entry.ticketModelId), [ball, large])
            assert.strictEqual(after[0]!.score, 1)
          }))
      }

      it.effect("the migration indexes the parts written before it", () =>
        Effect.gen(function*() {
          const { call, part, ranking } = yield* newApp
          const sql = yield* SqlClient.SqlClient
          const cube = yield* part("/cube.stl")
          const moved = yield* part("/cube-moved.obj")
          // Back to the schema before 0005 (the app's index not built yet), then the migration again.
          yield* sql`DROP TABLE part_shape`
          yield* sql`DROP FUNCTION part_shape_track() CASCADE`
          yield* partShapes
          assert.deepStrictEqual(yield* ranking(cube), [moved])
          ok(yield* call("DELETE", `/ticket-model/${moved}`), "delete")
          assert.deepStrictEqual(yield* ranking(cube), [])
        }))

      it.effect("equal scores are ordered by id", () =>
        Effect.gen(function*() {
          const { part, similar } = yield* newApp
          const cube = yield* part("/cube.stl")
          const copies = [yield* part("/cube-large.stl"), yield* part("/cube-large.stl"), yield* part("/cube-large.stl")]
          const ranked = yield* similar(cube)
          assert.deepStrictEqual(ranked.map((entry) => entry.ticketModelId), [...copies].sort())
          assert.strictEqual(new Set(ranked.map((entry) => entry.score)).size, 1)
        }))
    }
  )
}
