/**
 * Material series: `PUT /material-series/{id}` creates the series when the
 * app has none with that id (201 with `Location`, as the OpenAPI document
 * declares) and replaces it otherwise (200); an id is the app's own, so
 * another app's series with the same id neither blocks nor shows. Through
 * the embedded engine and the engine over HTTP alike.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { backends } from "../support/backends.ts"
import { type Reply, TestApp, TestAppOverEngine, TestClient } from "../support/TestApp.ts"

const refused = (reply: Reply, status: number, type: string, ...includes: ReadonlyArray<string>) => {
  assert.strictEqual(reply.status, status, reply.text)
  const body = reply.json()
  assert.deepStrictEqual([body.code, body.type], [status, type], reply.text)
  for (const text of includes) assert.include(body.message, text)
}

const FILAMENTS = { technologyId: "fdm", name: "Filaments", description: "FDM filaments on 1 kg reels" }

for (const backend of backends) {
  for (const [mode, app] of [["embedded", TestApp(backend)], ["engine over HTTP", TestAppOverEngine(backend)]] as const) {
    layer(app, { timeout: 60_000, excludeTestServices: true })(`Material series (${backend}, ${mode})`, (it) => {
      /** A fresh app's calls, with its secret. */
      const newApp = Effect.gen(function*() {
        const client = yield* TestClient
        const { value } = yield* client.createSecret(`series-${Math.random().toString(36).slice(2)}`)
        return Object.assign((method: string, path: string, body?: unknown) => client.call(method, `/v1${path}`, { secret: value, body }), {
          withHeaders: (method: string, path: string, headers: Record<string, string>, body?: unknown) =>
            client.call(method, `/v1${path}`, { secret: value, body, headers })
        })
      })

      it.effect("a PUT to a new id creates the series (201, Location); to its id again replaces it (200); a material joins it", () =>
        Effect.gen(function*() {
          const call = yield* newApp
          const created = yield* call("PUT", "/material-series/filaments", FILAMENTS)
          assert.strictEqual(created.status, 201, created.text)
          assert.strictEqual(created.headers.get("location"), "/v1/material-series/filaments")
          const series = created.json()
          assert.deepStrictEqual({ ...series, createdAt: undefined, updatedAt: undefined }, {
            id: "filaments",
            ...FILAMENTS,
            createdAt: undefined,
            updatedAt: undefined
          })
          assert.deepStrictEqual((yield* call("GET", "/material-series/filaments")).json(), series)
          assert.deepStrictEqual((yield* call("GET", "/material-series?technologyId=fdm")).json(), [series])

          const replaced = yield* call("PUT", "/material-series/filaments", { ...series, name: "FDM filaments" })
          assert.strictEqual(replaced.status, 200, replaced.text)
          assert.isNull(replaced.headers.get("location"))
          assert.deepStrictEqual([replaced.json().name, replaced.json().createdAt], ["FDM filaments", series.createdAt])

          const petg = yield* call("POST", "/material", { name: "PETG", technologyId: "fdm", materialSeriesId: "filaments" })
          assert.strictEqual(petg.status, 200, petg.text)
          assert.deepStrictEqual((yield* call("GET", "/material?materialSeriesId=filaments")).json().map((m: any) => m.id), [petg.json().id])
          refused(
            yield* call("POST", "/material", { name: "Resin", technologyId: "sla", materialSeriesId: "filaments" }),
            422,
            "ValidationError",
            "materialSeriesId",
            "is fdm"
          )
          refused(yield* call("DELETE", "/material-series/filaments"), 409, "Conflict", "1 material")
          refused(
            yield* call("POST", "/material", { name: "X", technologyId: "fdm", materialSeriesId: "no-such-series" }),
            422,
            "UnknownReference",
            "materialSeriesId"
          )
        }))

      it.effect("a new id must be URL-safe (422 naming id); a body's id must be the path's (400); If-Match on a new id is a 412", () =>
        Effect.gen(function*() {
          const call = yield* newApp
          refused(yield* call("PUT", "/material-series/bad!id", FILAMENTS), 422, "ValidationError", "id: \"bad!id\"")
          refused(yield* call("PUT", `/material-series/${"x".repeat(101)}`), 400, "ValidationError")
          const mismatch = yield* call("PUT", "/material-series/filaments", { ...FILAMENTS, id: "resins" })
          assert.strictEqual(mismatch.status, 400, mismatch.text)
          assert.include(mismatch.json().message, "\"id\"")
          const conditional = yield* call.withHeaders("PUT", "/material-series/filaments", { "if-match": "\"abc\"" }, FILAMENTS)
          assert.strictEqual(conditional.status, 412, conditional.text)
          assert.strictEqual((yield* call("GET", "/material-series/filaments")).text, "", "nothing created")
        }))

      it.effect("two PUTs of a new id at once make one series: one 201, one 200", () =>
        Effect.gen(function*() {
          const call = yield* newApp
          const replies = yield* Effect.all(
            [call("PUT", "/material-series/racing", FILAMENTS), call("PUT", "/material-series/racing", { ...FILAMENTS, name: "Other" })],
            { concurrency: 2 }
          )
          assert.sameMembers(replies.map((reply) => reply.status), [201, 200], replies.map((reply) => reply.text).join("\n"))
          assert.lengthOf((yield* call("GET", "/material-series")).json(), 1)
        }))

      it.effect("an id is the app's own: another app's series with it neither blocks a create nor shows", () =>
        Effect.gen(function*() {
          const a = yield* newApp
          const b = yield* newApp
          const ours = (yield* a("PUT", "/material-series/shared", FILAMENTS)).json()
          const theirs = yield* b("PUT", "/material-series/shared", { technologyId: "sla", name: "Resins" })
          assert.strictEqual(theirs.status, 201, theirs.text)
          assert.deepStrictEqual((yield* a("GET", "/material-series/shared")).json(), ours)
          assert.strictEqual((yield* b("GET", "/material-series/shared")).json().name, "Resins")
          assert.deepStrictEqual((yield* a("GET", "/material-series")).json().map((s: any) => s.name), ["Filaments"])
          assert.strictEqual((yield* b("DELETE", "/material-series/shared")).status, 200)
          assert.deepStrictEqual((yield* a("GET", "/material-series/shared")).json(), ours)
        }))

      it.effect("the OpenAPI document declares the 201 with its Location, and the 200", () =>
        Effect.gen(function*() {
          const client = yield* TestClient
          const document = (yield* client.call("GET", "/openapi.json")).json()
          const responses = document.paths["/v1/material-series/{id}"].put.responses
          assert.includeMembers(Object.keys(responses), ["200", "201"])
          assert.isDefined(responses["201"].headers.Location)
          assert.strictEqual(responses["201"].content["application/json"].schema.$ref, responses["200"].content["application/json"].schema.$ref)
        }))
    })
  }
}
