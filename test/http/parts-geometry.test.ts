/**
 * Parts from model files, through HTTP: a local file host serves real model
 * files (written by src/engine/geometry/writers.ts); POST /ticket-model
 * downloads and analyses them, as the world writes them too (vertex-coloured
 * and continued OBJ, ZIP64 and streamed 3MF, degenerate triangles, an inch
 * STL with `modelEndpoint.unit`, catalogue models in inches), measured
 * exactly. An unreadable file is a 422 from the engine saying what is wrong
 * (a damaged 3MF entry, a required extension not read, a unit that
 * contradicts a 3MF's own, each with its `type`); a download that fails (404, refused connection, too
 * large, too slow, too many redirects, a refused URL) is an error whose
 * `x-error-source` is `model-fetcher`. The engine's fetcher is allowed to
 * reach 127.0.0.1 here (as MODEL_FETCH_ALLOW_PRIVATE=true would); the
 * default fetcher's refusal of private addresses is checked directly.
 */
import { assert, layer } from "@effect/vitest"
import { Duration, Effect, Layer } from "effect"
import { defaultOptions, makeModelFetcher, MODEL_FETCHER_SOURCE, modelFetcherLayer } from "../../src/engine/geometry/ModelFetcher.ts"
import { binaryStl, box, corruptEntry, cubeWithHole, obj, threeMf, withDegenerateTriangles } from "../../src/engine/geometry/writers.ts"
import { backends } from "../support/backends.ts"
import { FileHost, FileHostLive } from "../support/fileHost.ts"
import { appWithTicket, ok } from "../support/http.ts"
import { type Reply, TestApp } from "../support/TestApp.ts"

const LIMIT = 64 * 1024

const FILES: Readonly<Record<string, Uint8Array | string>> = {
  "/models/cube.stl": binaryStl(box(10, 10, 10)),
  "/models/holed.obj": obj(cubeWithHole(10, 4)),
  "/models/inch-box.3mf": threeMf({ unit: "inch", objects: [{ id: 1, mesh: box(1, 2, 3) }], items: [{ objectId: 1, transform: "1 0 0 0 1 0 0 0 1 5 5 5" }] }),
  "/download": binaryStl(box(2, 3, 4)),
  "/models/login.stl": "<!DOCTYPE html><html><body>Please sign in</body></html>",
  "/models/truncated.stl": binaryStl(box(1, 1, 1)).subarray(0, 300),
  "/models/big.stl": new Uint8Array(LIMIT + 1),
  "/models/coloured.obj": obj(cubeWithHole(10, 4), { colours: "rgb" }),
  "/models/nan-colours.obj": obj(cubeWithHole(10, 4), { colours: "nan" }),
  "/models/continued.obj": obj(cubeWithHole(10, 4), { continued: true }),
  "/models/zip64.3mf": threeMf({ objects: [{ id: 1, mesh: cubeWithHole(10, 4) }], items: [{ objectId: 1 }], zip64: "end-records" }),
  "/models/zip64-extra.3mf": threeMf({
    objects: [{ id: 1, mesh: cubeWithHole(10, 4) }],
    items: [{ objectId: 1 }],
    zip64: "extra-fields",
    dataDescriptor: true
  }),
  "/models/degenerate.stl": binaryStl(withDegenerateTriangles(box(10, 10, 10))),
  "/models/inch.stl": binaryStl(box(1, 2, 3)),
  "/models/damaged.3mf": corruptEntry(
    threeMf({ objects: [{ id: 1, mesh: box(10, 20, 30) }], items: [{ objectId: 1 }], stored: true }),
    "3D/part.model",
    "x=\"10\"",
    "x=\"90\""
  ),
  "/models/beams.3mf": threeMf({
    objects: [{ id: 1, mesh: box(10, 20, 30) }],
    items: [{ objectId: 1 }],
    requiredExtensions: { b: "http://schemas.microsoft.com/3dmanufacturing/beamlattice/2017/02" }
  })
}

/** The 10 mm cube with a 4 mm square hole, as the API answers it (read in millimetres). */
const HOLED = { volume: 840, surfaceArea: 728, boundingBox: { x: 10, y: 10, z: 10 }, triangleCount: 32, watertight: true, unit: "mm" }

/** FILES, plus redirects, a stream without length, and a file that never ends. */
const FileHostWithFaults = FileHostLive(FILES, (path, _request, response) => {
  if (path === "/redirect") {
    response.writeHead(302, { location: "/models/cube.stl" }).end()
    return true
  }
  if (path.startsWith("/hop/")) {
    const left = Number(path.slice(5))
    response.writeHead(307, { location: left > 0 ? `/hop/${left - 1}` : "/models/cube.stl" }).end()
    return true
  }
  if (path === "/stream.stl") {
    // Chunked, no content-length: the limit applies while reading.
    response.writeHead(200, { "content-type": "application/octet-stream" })
    for (let i = 0; i < 8; i++) response.write(Buffer.alloc(LIMIT / 4))
    response.end()
    return true
  }
  if (path === "/slow.stl") {
    response.writeHead(200, { "content-type": "application/octet-stream" })
    response.write(Buffer.alloc(84))
    return true
  }
  return false
})

const fetcher = modelFetcherLayer({
  allowPrivate: true,
  maxBytes: LIMIT,
  timeout: Duration.millis(1500),
  maxRedirects: 3,
  placeholderHosts: ["example"]
})

const failed = (reply: Reply, status: number, source: string, includes: string, type?: string) => {
  assert.strictEqual(reply.status, status, reply.text)
  const body = reply.json()
  assert.strictEqual(body.code, status)
  assert.include(body.message, includes)
  if (type !== undefined) assert.strictEqual(body.type, type, reply.text)
  assert.strictEqual(reply.headers.get("x-error-source"), source)
}

const close = (actual: number, expected: number, what: string) =>
  assert.isAtMost(Math.abs(actual - expected), 1e-9 * expected, `${what}: ${actual} vs ${expected}`)

/** A geometry as answered against the closed-form one: the figures within 1e-9 relative, the rest equal. */
const sameGeometry = (actual: any, expected: typeof HOLED) => {
  assert.deepStrictEqual(Object.keys(actual).sort(), Object.keys(expected).sort())
  close(actual.volume, expected.volume, "volume")
  close(actual.surfaceArea, expected.surfaceArea, "surfaceArea")
  for (const axis of ["x", "y", "z"] as const) close(actual.boundingBox[axis], expected.boundingBox[axis], `boundingBox.${axis}`)
  assert.deepStrictEqual([actual.triangleCount, actual.watertight, actual.unit], [expected.triangleCount, expected.watertight, expected.unit])
}

for (const backend of backends) {
  layer(Layer.merge(TestApp(backend, {}, { modelFetcher: fetcher }), FileHostWithFaults), { timeout: 60_000, excludeTestServices: true })(
    `Parts from model files over HTTP (${backend})`,
    (it) => {
      const setup = Effect.gen(function*() {
        const host = yield* FileHost
        const { call, ticket } = yield* appWithTicket("geometry")
        const material = ok(yield* call("POST", "/material", { name: "PLA", technologyId: "fdm" }), "material")
        const body = (modelEndpoint: Record<string, string>, ticketId = ticket.id) => ({
          ticketId,
          modelEndpoint,
          technologyId: "fdm",
          materialId: material.id,
          quantity: 1
        })
        const part = (modelEndpoint: Record<string, string>) => call("POST", "/ticket-model", body(modelEndpoint))
        return { call, host, part, body, material, ticket }
      })

      it.effect("a binary STL: the part and its model version get the geometry", () =>
        Effect.gen(function*() {
          const { call, host, part } = yield* setup
          const created = ok(yield* part({ url: `${host.url}/models/cube.stl` }), "create")
          assert.strictEqual(created.fileName, "cube.stl")
          assert.deepStrictEqual(created.geometry, {
            volume: 1000,
            surfaceArea: 600,
            boundingBox: { x: 10, y: 10, z: 10 },
            triangleCount: 12,
            watertight: true,
            unit: "mm"
          })
          const [version] = ok(yield* call("GET", `/model-version?ticketModelId=${created.id}`), "versions")
          assert.deepStrictEqual(version.geometry, created.geometry)
          assert.deepStrictEqual(ok(yield* call("GET", `/ticket-model/${created.id}`), "get").geometry, created.geometry)
        }))

      it.effect("an OBJ with a hole and a 3MF in inches; the file name from fileName, the format from it too", () =>
        Effect.gen(function*() {
          const { host, part } = yield* setup
          const holed = ok(yield* part({ url: `${host.url}/models/holed.obj` }), "obj").geometry
          close(holed.volume, 840, "volume")
          close(holed.surfaceArea, 728, "surfaceArea")
          assert.strictEqual(holed.triangleCount, 32)
          assert.isTrue(holed.watertight)
          const inch = ok(yield* part({ url: `${host.url}/models/inch-box.3mf` }), "3mf").geometry
          close(inch.volume, 6 * 25.4 ** 3, "volume")
          close(inch.boundingBox.z, 3 * 25.4, "boundingBox.z")
          const named = ok(yield* part({ url: `${host.url}/download?id=8`, fileName: "box.stl" }), "named")
          assert.strictEqual(named.fileName, "box.stl")
          assert.strictEqual(named.geometry.volume, 24)
        }))

      it.effect("files as the world writes them, measured exactly: coloured, nan-coloured and continued OBJ, ZIP64 and streamed 3MF", () =>
        Effect.gen(function*() {
          const { host, part } = yield* setup
          for (const file of ["coloured.obj", "nan-colours.obj", "continued.obj", "zip64.3mf", "zip64-extra.3mf"]) {
            sameGeometry(ok(yield* part({ url: `${host.url}/models/${file}` }), file).geometry, HOLED)
          }
        }))

      it.effect("a cube with degenerate triangles: closed, the cube's figures, and a warning of its own rather than non-manifold edges", () =>
        Effect.gen(function*() {
          const { host, part } = yield* setup
          const created = ok(yield* part({ url: `${host.url}/models/degenerate.stl` }), "degenerate")
          assert.deepStrictEqual(created.geometry, {
            volume: 1000,
            surfaceArea: 600,
            boundingBox: { x: 10, y: 10, z: 10 },
            triangleCount: 24,
            watertight: true,
            unit: "mm"
          })
          const checks = Object.fromEntries(created.manufacturability.checks.map((check: any) => [check.id, check]))
          assert.deepInclude(checks["mesh-degenerate-triangles"], { status: "warning", value: 12 })
          assert.deepStrictEqual(checks["mesh-degenerate-triangles"].location.boundingBox, { min: { x: 0, y: 0, z: 0 }, max: { x: 10, y: 10, z: 10 } })
          assert.strictEqual(checks["mesh-non-manifold-edges"].status, "ok")
          assert.strictEqual(checks["mesh-open-edges"].status, "ok")
        }))

      it.effect("units: an inch STL in millimetres, the unit said; a replace with another unit analyses again; a 3MF's own unit wins", () =>
        Effect.gen(function*() {
          const { body, call, host, part } = yield* setup
          const inch = ok(yield* part({ url: `${host.url}/models/inch.stl`, unit: "in" }), "inch")
          sameGeometry(inch.geometry, {
            volume: 6 * 25.4 ** 3,
            surfaceArea: 22 * 25.4 ** 2,
            boundingBox: { x: 25.4, y: 50.8, z: 76.2 },
            triangleCount: 12,
            watertight: true,
            unit: "in"
          })
          assert.strictEqual(inch.modelEndpoint.unit, "in")
          // The same file in millimetres: measured again, a second model version.
          const mm = ok(yield* call("PUT", `/ticket-model/${inch.id}`, body({ url: `${host.url}/models/inch.stl` })), "mm")
          assert.deepStrictEqual([mm.geometry.volume, mm.geometry.unit], [6, "mm"])
          const versions = ok(yield* call("GET", `/model-version?ticketModelId=${inch.id}`), "versions") as Array<any>
          assert.sameMembers(versions.map((version) => version.geometry.unit), ["in", "mm"])
          // A 3MF in inches: stating inches is fine, stating millimetres contradicts it.
          const threeMfInch = ok(yield* part({ url: `${host.url}/models/inch-box.3mf`, unit: "in" }), "3mf in").geometry
          assert.deepStrictEqual([threeMfInch.boundingBox.z, threeMfInch.unit], [3 * 25.4, "in"])
          const conflict = yield* part({ url: `${host.url}/models/inch-box.3mf`, unit: "mm" })
          failed(conflict, 422, "engine", "modelEndpoint.unit: the model file inch-box.3mf: \"mm\" contradicts the 3MF's own unit, \"in\"", "ModelUnitConflict")
          // A unit not in the list is the schema's 400, naming the field.
          const furlong = yield* part({ url: `${host.url}/models/inch.stl`, unit: "furlong" })
          assert.strictEqual(furlong.status, 400, furlong.text)
          assert.include(furlong.text, "modelEndpoint")
          assert.include(furlong.text, "unit")
        }))

      it.effect("a catalogue model in inches: its geometry in millimetres, shared by the parts made from it", () =>
        Effect.gen(function*() {
          const { call, host, material, ticket } = yield* setup
          const catalogue = ok(yield* call("POST", "/catalogue", { name: "Inch parts" }), "catalogue")
          const model = ok(
            yield* call("POST", "/catalogue-model", {
              catalogueId: catalogue.id,
              name: "Inch block",
              modelEndpoint: { url: `${host.url}/models/inch.stl`, unit: "in" },
              configurations: [{ technologyId: "fdm", materialId: material.id }]
            }),
            "catalogue model"
          )
          sameGeometry(model.geometry, {
            volume: 6 * 25.4 ** 3,
            surfaceArea: 22 * 25.4 ** 2,
            boundingBox: { x: 25.4, y: 50.8, z: 76.2 },
            triangleCount: 12,
            watertight: true,
            unit: "in"
          })
          assert.strictEqual(model.modelEndpoint.unit, "in")
          const made = ok(
            yield* call("POST", "/ticket-model", {
              ticketId: ticket.id,
              catalogueModelConfigurationId: model.configurations[0].id,
              technologyId: "fdm",
              materialId: material.id,
              quantity: 1
            }),
            "part from the catalogue"
          )
          assert.deepStrictEqual(made.geometry, model.geometry)
          const replaced = ok(
            yield* call("PUT", `/catalogue-model/${model.id}`, { ...model, modelEndpoint: { url: `${host.url}/models/inch.stl`, unit: "cm" } }),
            "catalogue model in cm"
          )
          close(replaced.geometry.volume, 6000, "volume in cm")
          assert.strictEqual(replaced.geometry.unit, "cm")
        }))

      it.effect("a damaged 3MF entry and a required extension not read are 422s naming the entry and the extension; nothing is created", () =>
        Effect.gen(function*() {
          const { call, host, part } = yield* setup
          failed(
            yield* part({ url: `${host.url}/models/damaged.3mf` }),
            422,
            "engine",
            "damaged.3mf cannot be read: the 3MF archive is damaged: the entry 3D/part.model does not match its CRC-32",
            "UnreadableModel"
          )
          failed(
            yield* part({ url: `${host.url}/models/beams.3mf` }),
            422,
            "engine",
            "beams.3mf cannot be read: 3MF 3D/part.model requires the extension \"b\" (http://schemas.microsoft.com/3dmanufacturing/beamlattice/2017/02)",
            "UnsupportedModelExtension"
          )
          assert.deepStrictEqual(ok(yield* call("GET", "/ticket-model"), "list"), [])
        }))

      it.effect("redirects are followed, up to the limit", () =>
        Effect.gen(function*() {
          const { host, part } = yield* setup
          assert.strictEqual(ok(yield* part({ url: `${host.url}/redirect`, fileName: "cube.stl" }), "redirect").geometry.volume, 1000)
          assert.strictEqual(ok(yield* part({ url: `${host.url}/hop/2`, fileName: "cube.stl" }), "3 hops").geometry.volume, 1000)
          failed(yield* part({ url: `${host.url}/hop/3`, fileName: "cube.stl" }), 502, MODEL_FETCHER_SOURCE, "more than 3 redirects")
        }))

      it.effect("a replace with a new model analyses it and adds a version; the same model keeps the geometry", () =>
        Effect.gen(function*() {
          const { body, call, host, part } = yield* setup
          const created = ok(yield* part({ url: `${host.url}/models/cube.stl` }), "create")
          const same = ok(yield* call("PUT", `/ticket-model/${created.id}`, { ...body({ url: `${host.url}/models/cube.stl` }), quantity: 3 }), "same")
          assert.deepStrictEqual(same.geometry, created.geometry)
          const replaced = ok(yield* call("PUT", `/ticket-model/${created.id}`, body({ url: `${host.url}/models/holed.obj` })), "replace")
          assert.strictEqual(replaced.geometry.triangleCount, 32)
          const versions = ok(yield* call("GET", `/model-version?ticketModelId=${created.id}`), "versions") as Array<any>
          assert.deepStrictEqual(versions.map((version) => [version.version, version.geometry.triangleCount]).sort(), [[1, 12], [2, 32]])
        }))

      it.effect("an unreadable file is the engine's 422 saying what is wrong; no part is created", () =>
        Effect.gen(function*() {
          const { call, host, part } = yield* setup
          failed(yield* part({ url: `${host.url}/models/login.stl` }), 422, "engine", "login.stl cannot be read: the file is an HTML page")
          failed(yield* part({ url: `${host.url}/models/truncated.stl` }), 422, "engine", "header says 12 triangles")
          failed(yield* part({ url: `${host.url}/download`, fileName: "box.3mf" }), 422, "engine", "box.3mf cannot be read: the file is not a ZIP archive")
          assert.deepStrictEqual(ok(yield* call("GET", "/ticket-model"), "list"), [])
        }))

      it.effect("a failed download is the model fetcher's error: 404, refused connection, too large, too slow", () =>
        Effect.gen(function*() {
          const { host, part } = yield* setup
          failed(yield* part({ url: `${host.url}/models/missing.stl` }), 502, MODEL_FETCHER_SOURCE, "answered 404")
          failed(yield* part({ url: `http://127.0.0.1:${host.closedPort}/cube.stl` }), 502, MODEL_FETCHER_SOURCE, "ECONNREFUSED")
          failed(yield* part({ url: `${host.url}/models/big.stl` }), 422, MODEL_FETCHER_SOURCE, "over the limit")
          failed(yield* part({ url: `${host.url}/stream.stl` }), 422, MODEL_FETCHER_SOURCE, "over the limit")
          failed(yield* part({ url: `${host.url}/slow.stl` }), 504, MODEL_FETCHER_SOURCE, "did not arrive within")
          // Other schemes do not reach the engine: the gateway's schema refuses them (400); the fetcher too (below).
          assert.strictEqual((yield* part({ url: "ftp://127.0.0.1/cube.stl" })).status, 400)
        }))

      it.effect("placeholder hosts (*.example) are not fetched: the part has no geometry yet", () =>
        Effect.gen(function*() {
          const { part } = yield* setup
          const created = ok(yield* part({ url: "https://files.example/models/bracket.stl" }), "create")
          assert.isNull(created.geometry)
        }))
    }
  )
}

layer(FileHostWithFaults, { excludeTestServices: true })("the default model fetcher", (it) => {
  it.effect("refuses loopback addresses and names, and non-http schemes, with a 422 of the fetcher", () =>
    Effect.gen(function*() {
      const host = yield* FileHost
      const fetcher = makeModelFetcher(defaultOptions)
      const port = new URL(host.url).port
      for (
        const [url, includes] of [
          [`${host.url}/models/cube.stl`, "127.0.0.1 is a private or reserved address"],
          [`http://localhost:${port}/models/cube.stl`, "a private or reserved address"],
          [`http://[::1]:${port}/models/cube.stl`, "::1 is a private or reserved address"],
          ["http://169.254.169.254/latest/meta-data", "private or reserved"],
          ["file:///etc/passwd", "only http and https"],
          [`http://user:secret@127.0.0.1:${port}/models/cube.stl`, "credentials"],
          ["not a url", "not a valid URL"]
        ] as const
      ) {
        const error = yield* Effect.flip(fetcher.fetch(url))
        assert.strictEqual(error.status, 422, `${url}: ${error.message}`)
        assert.strictEqual(error.source, MODEL_FETCHER_SOURCE)
        assert.include(error.message, includes)
      }
      const withPlaceholders = makeModelFetcher({ ...defaultOptions, placeholderHosts: ["example"] })
      assert.isUndefined(yield* withPlaceholders.fetch("https://cdn.files.example/x.stl"))
      const allowed = yield* makeModelFetcher({ ...defaultOptions, allowPrivate: true }).fetch(`${host.url}/models/cube.stl`)
      assert.strictEqual(allowed?.length, 84 + 12 * 50)
    }))
})
