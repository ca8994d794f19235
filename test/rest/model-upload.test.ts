/**
 * Uploaded model files (POST /v1/model-file): a part and a quote from a file
 * no public URL serves, over REST and MCP; the same bytes stored once; the
 * upload limit (MODEL_UPLOAD_MAX_BYTES, small here) a 413 whether the
 * Content-Length says so or the bytes read pass it; a body cut mid-way
 * leaving nothing; another app neither reading the file nor building a part
 * from its URL; an unsupported content type a 415. The engine's fetcher is
 * the default one: it refuses 127.0.0.1, so a part that prices proves the
 * file was read from the database, not over HTTP.
 *
 * Files as the world writes them, uploaded: an inch STL uploaded with
 * `unit` (its parts in inches, one stating another unit refused), the same
 * bytes without a unit (another file, its parts in millimetres unless they
 * say), vertex-coloured and continued OBJ, ZIP64 3MF, each measured exactly;
 * a damaged 3MF and one requiring an extension not read are 422s with their
 * `type`, naming the entry and the extension.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { request as httpRequest } from "node:http"
import { binaryStl, box, corruptEntry, cubeWithHole, obj, threeMf, withDegenerateTriangles } from "../../src/engine/geometry/writers.ts"
import type { AppConfigShape } from "../../src/services/AppConfig.ts"
import { backends } from "../support/backends.ts"
import { appWithTicket, ok } from "../support/http.ts"
import { mcpToolCall } from "../support/mcp.ts"
import { TestApp, TestClient } from "../support/TestApp.ts"

const LIMIT = 64 * 1024
const CUBE = binaryStl(box(10, 20, 30))

const rpcMessage = (text: string) => {
  const trimmed = text.trim()
  if (trimmed.startsWith("{")) return JSON.parse(trimmed)
  const data = trimmed.split("\n").filter((line) => line.startsWith("data:")).map((line) => line.slice(5).trim()).filter((line) => line !== "")
  return JSON.parse(data[data.length - 1]!)
}

interface Raw {
  readonly status: number
  readonly headers: Headers
  readonly bytes: Uint8Array
  readonly json: () => any
}

/** A request with a binary body (the test client's `call` sends JSON). */
const send = (method: string, url: string, secret: string, body?: Uint8Array, headers: Record<string, string> = {}) =>
  Effect.promise(async (): Promise<Raw> => {
    const response = await fetch(url, {
      method,
      headers: { authorization: secret, ...headers },
      ...(body === undefined ? {} : { body }),
      signal: AbortSignal.timeout(20_000)
    })
    const bytes = new Uint8Array(await response.arrayBuffer())
    return { status: response.status, headers: response.headers, bytes, json: () => JSON.parse(new TextDecoder().decode(bytes)) }
  })

/** Sends the head of an upload and `sent` bytes of its body, then resets the connection. */
const abortMidBody = (baseUrl: string, secret: string, declared: number, sent: number) =>
  Effect.promise(() =>
    new Promise<void>((resolve) => {
      const url = new URL(`${baseUrl}/v1/model-file?fileName=cut.stl`)
      const request = httpRequest({
        host: url.hostname,
        port: url.port,
        path: `${url.pathname}${url.search}`,
        method: "POST",
        headers: { authorization: secret, "content-type": "model/stl", "content-length": String(declared) }
      })
      request.on("error", () => resolve())
      request.on("close", () => resolve())
      request.write(Buffer.alloc(sent, 7), () => setTimeout(() => request.destroy(), 200))
    })
  )

const modelFileRows = (appId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ count: number }>`SELECT count(*)::int AS count FROM engine_model_file WHERE app_id = ${appId}`)
const orphanChunks = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql<{ count: number }>`
    SELECT count(*)::int AS count FROM engine_model_file_chunk c
    WHERE NOT EXISTS (SELECT 1 FROM engine_model_file f WHERE f.id = c.upload_id)`)

for (const backend of backends) {
  const overrides: Partial<AppConfigShape> = { modelUploadMaxBytes: LIMIT }
  layer(TestApp(backend, overrides), { timeout: 60_000, excludeTestServices: true })(`Uploaded model files (${backend})`, (it) => {
    const upload = (baseUrl: string, secret: string, body: Uint8Array, query = "", headers: Record<string, string> = { "content-type": "model/stl" }) =>
      send("POST", `${baseUrl}/v1/model-file${query}`, secret, body, headers)

    it.effect("upload, part and quote without any URL outside the service (REST), the file stored once", () =>
      Effect.gen(function*() {
        const client = yield* TestClient
        const { appId, call, ticket } = yield* appWithTicket("upload")
        const secret = (yield* client.createSecret(appId)).value
        const first = yield* upload(client.baseUrl, secret, CUBE, "?fileName=bracket.stl")
        assert.strictEqual(first.status, 200, new TextDecoder().decode(first.bytes))
        const file = first.json()
        assert.strictEqual(file.fileName, "bracket.stl")
        assert.strictEqual(file.size, CUBE.length)
        assert.match(file.sha256, /^[0-9a-f]{64}$/)
        assert.strictEqual(file.url, `${client.baseUrl}/v1/model-file/${file.id}/content`)

        // The same bytes again (named otherwise, as octet-stream): the same record, one row.
        const again = yield* upload(client.baseUrl, secret, CUBE, "", {
          "content-type": "application/octet-stream",
          "content-disposition": "attachment; filename=\"other.stl\""
        })
        assert.strictEqual(again.status, 200)
        assert.deepStrictEqual(again.json(), file)
        assert.strictEqual((yield* modelFileRows(appId))[0]!.count, 1)

        const record = yield* send("GET", `${client.baseUrl}/v1/model-file/${file.id}`, secret)
        assert.deepStrictEqual(record.json(), file)
        const content = yield* send("GET", file.url, secret)
        assert.strictEqual(content.status, 200)
        assert.strictEqual(content.headers.get("content-type"), "model/stl")
        assert.strictEqual(content.headers.get("content-length"), String(CUBE.length))
        assert.deepStrictEqual(content.bytes, CUBE)

        const material = ok(yield* call("POST", "/material", { name: "PLA", technologyId: "fdm" }), "material")
        const partBody = { ticketId: ticket.id, modelEndpoint: { url: file.url, fileName: file.fileName }, technologyId: "fdm", materialId: material.id }
        const part = ok(yield* call("POST", "/ticket-model", { ...partBody, quantity: 2 }), "part")
        assert.strictEqual(part.geometry.volume, 10 * 20 * 30)
        assert.isAbove(part.unitPrice, 0)
        // Analysed once: the geometry is kept with the file and the second part reuses it.
        const kept = yield* Effect.flatMap(SqlClient.SqlClient, (sql) =>
          sql<{ volume: number }>`
          SELECT (geometry->>'volume')::float AS volume FROM engine_model_file WHERE id = ${file.id}`)
        assert.strictEqual(kept[0]!.volume, 6000)
        const second = ok(yield* call("POST", "/ticket-model", { ...partBody, quantity: 1 }), "second part")
        assert.deepStrictEqual(second.geometry, part.geometry)
        const quote = ok(yield* call("POST", `/ticket/${ticket.id}/quote`, {}), "quote")
        assert.strictEqual(quote.lines.length, 2)
      }))

    it.effect("an upload in inches: its parts in inches; the same bytes without a unit are another file, in millimetres unless a part says", () =>
      Effect.gen(function*() {
        const client = yield* TestClient
        const { appId, call, ticket } = yield* appWithTicket("upload-units")
        const secret = (yield* client.createSecret(appId)).value
        const block = binaryStl(box(1, 2, 3))
        const inch = (yield* upload(client.baseUrl, secret, block, "?fileName=block.stl&unit=in")).json()
        assert.strictEqual(inch.unit, "in")
        const plain = (yield* upload(client.baseUrl, secret, block, "?fileName=block.stl")).json()
        assert.notStrictEqual(plain.id, inch.id)
        assert.notProperty(plain, "unit")
        assert.strictEqual((yield* modelFileRows(appId))[0]!.count, 2)
        // A form's file takes `unit` from the query too: the same bytes in inches are the inch file.
        const formed = yield* Effect.promise(async () => {
          const form = new FormData()
          form.append("file", new Blob([block], { type: "application/octet-stream" }), "block.stl")
          const response = await fetch(`${client.baseUrl}/v1/model-file?unit=in`, { method: "POST", headers: { authorization: secret }, body: form })
          return (await response.json()) as { readonly id: string; readonly unit?: string }
        })
        assert.deepStrictEqual([formed.id, formed.unit], [inch.id, "in"])
        const material = ok(yield* call("POST", "/material", { name: "PLA", technologyId: "fdm" }), "material")
        const part = (modelEndpoint: Record<string, string>) =>
          call("POST", "/ticket-model", { ticketId: ticket.id, modelEndpoint, technologyId: "fdm", materialId: material.id, quantity: 1 })
        const figures = (geometry: any) => [geometry.volume, geometry.boundingBox.z, geometry.unit]
        const close = (actual: ReadonlyArray<unknown>, expected: ReadonlyArray<unknown>) => {
          assert.approximately(actual[0] as number, expected[0] as number, 1e-9 * (expected[0] as number))
          assert.approximately(actual[1] as number, expected[1] as number, 1e-9 * (expected[1] as number))
          assert.strictEqual(actual[2], expected[2])
        }
        close(figures(ok(yield* part({ url: inch.url, fileName: "block.stl" }), "inch part").geometry), [6 * 25.4 ** 3, 76.2, "in"])
        close(figures(ok(yield* part({ url: inch.url, fileName: "block.stl", unit: "in" }), "inch part, said").geometry), [6 * 25.4 ** 3, 76.2, "in"])
        const conflict = yield* part({ url: inch.url, fileName: "block.stl", unit: "mm" })
        assert.strictEqual(conflict.status, 422, conflict.text)
        assert.strictEqual(conflict.json().type, "ModelUnitConflict")
        assert.include(conflict.json().message, "modelEndpoint.unit: \"mm\" contradicts the unit the model file block.stl was uploaded in, \"in\"")
        close(figures(ok(yield* part({ url: plain.url, fileName: "block.stl" }), "mm part").geometry), [6, 3, "mm"])
        close(figures(ok(yield* part({ url: plain.url, fileName: "block.stl", unit: "cm" }), "cm part").geometry), [6000, 30, "cm"])
        // The file keeps the geometry of its own unit: the part in centimetres did not replace it.
        close(figures(ok(yield* part({ url: plain.url, fileName: "block.stl" }), "mm part again").geometry), [6, 3, "mm"])
        const wrong = yield* upload(client.baseUrl, secret, block, "?fileName=block.stl&unit=furlong")
        assert.strictEqual(wrong.status, 400)
        assert.include(new TextDecoder().decode(wrong.bytes), "unit")
      }))

    it.effect("uploaded as the world writes them: coloured and continued OBJ, ZIP64 3MF, degenerate triangles measured exactly; a damaged 3MF and an unread extension refused", () =>
      Effect.gen(function*() {
        const client = yield* TestClient
        const { appId, call, ticket } = yield* appWithTicket("upload-world")
        const secret = (yield* client.createSecret(appId)).value
        const material = ok(yield* call("POST", "/material", { name: "PLA", technologyId: "fdm" }), "material")
        const holed = cubeWithHole(10, 4)
        const partOf = (bytes: Uint8Array | string, fileName: string, contentType: string) =>
          Effect.gen(function*() {
            const body = typeof bytes === "string" ? new TextEncoder().encode(bytes) : bytes
            const file = (yield* upload(client.baseUrl, secret, body, `?fileName=${fileName}`, { "content-type": contentType })).json()
            return yield* call("POST", "/ticket-model", {
              ticketId: ticket.id,
              modelEndpoint: { url: file.url, fileName: file.fileName },
              technologyId: "fdm",
              materialId: material.id,
              quantity: 1
            })
          })
        const files = [
          [obj(holed, { colours: "rgb" }), "coloured.obj", "model/obj"],
          [obj(holed, { colours: "nan", continued: true }), "continued.obj", "model/obj"],
          [threeMf({ objects: [{ id: 1, mesh: holed }], items: [{ objectId: 1 }], zip64: "extra-fields" }), "zip64.3mf", "model/3mf"],
          [
            threeMf({ objects: [{ id: 1, mesh: holed }], items: [{ objectId: 1 }], zip64: "end-records", dataDescriptor: true, stored: true }),
            "streamed.3mf",
            "model/3mf"
          ]
        ] as const
        for (const [bytes, fileName, contentType] of files) {
          const geometry = ok(yield* partOf(bytes, fileName, contentType), fileName).geometry
          assert.approximately(geometry.volume, 840, 840e-9, fileName)
          assert.approximately(geometry.surfaceArea, 728, 728e-9, fileName)
          assert.deepStrictEqual(
            [geometry.boundingBox, geometry.triangleCount, geometry.watertight, geometry.unit],
            [{ x: 10, y: 10, z: 10 }, 32, true, "mm"],
            fileName
          )
        }
        // A cube with a zero-area triangle beside each of its 12: the cube, closed, and its own warning.
        const degenerate = ok(yield* partOf(binaryStl(withDegenerateTriangles(box(10, 10, 10))), "degenerate.stl", "model/stl"), "degenerate")
        assert.deepStrictEqual(degenerate.geometry, {
          volume: 1000,
          surfaceArea: 600,
          boundingBox: { x: 10, y: 10, z: 10 },
          triangleCount: 24,
          watertight: true,
          unit: "mm"
        })
        const checks = Object.fromEntries(degenerate.manufacturability.checks.map((check: any) => [check.id, check]))
        assert.deepStrictEqual([checks["mesh-degenerate-triangles"].status, checks["mesh-degenerate-triangles"].value], ["warning", 12])
        assert.strictEqual(checks["mesh-non-manifold-edges"].status, "ok")
        const stored = threeMf({ objects: [{ id: 1, mesh: box(10, 20, 30) }], items: [{ objectId: 1 }], stored: true })
        const damaged = yield* partOf(corruptEntry(stored, "3D/part.model", "x=\"10\"", "x=\"90\""), "damaged.3mf", "model/3mf")
        assert.strictEqual(damaged.status, 422, damaged.text)
        assert.strictEqual(damaged.json().type, "UnreadableModel")
        assert.include(damaged.json().message, "damaged.3mf cannot be read: the 3MF archive is damaged: the entry 3D/part.model does not match its CRC-32")
        const slices = threeMf({
          objects: [{ id: 1, mesh: box(10, 20, 30) }],
          items: [{ objectId: 1 }],
          requiredExtensions: { s: "http://schemas.microsoft.com/3dmanufacturing/slice/2015/07" }
        })
        const unread = yield* partOf(slices, "slices.3mf", "model/3mf")
        assert.strictEqual(unread.status, 422, unread.text)
        assert.strictEqual(unread.json().type, "UnsupportedModelExtension")
        assert.include(unread.json().message, "requires the extension \"s\" (http://schemas.microsoft.com/3dmanufacturing/slice/2015/07)")
      }))

    it.effect("a multipart form's file is stored as the raw upload of the same bytes; a form without one is a 400", () =>
      Effect.gen(function*() {
        const client = yield* TestClient
        const { appId } = yield* appWithTicket("upload-form")
        const secret = (yield* client.createSecret(appId)).value
        const form = (fileName: string, bytes: Uint8Array = CUBE, field = "file") => {
          const data = new FormData()
          data.append("note", "a field before the file is skipped")
          data.append(field, new Blob([bytes], { type: "application/octet-stream" }), fileName)
          return data
        }
        const post = (body: FormData | Uint8Array, query = "", headers: Record<string, string> = {}) =>
          Effect.promise(async () => {
            const response = await fetch(`${client.baseUrl}/v1/model-file${query}`, {
              method: "POST",
              headers: { authorization: secret, ...headers },
              body,
              signal: AbortSignal.timeout(20_000)
            })
            const text = await response.text()
            return { status: response.status, text, json: () => JSON.parse(text) }
          })

        const formed = yield* post(form("housing.stl"))
        assert.strictEqual(formed.status, 200, formed.text)
        const file = formed.json()
        assert.strictEqual(file.fileName, "housing.stl")
        assert.strictEqual(file.size, CUBE.length)
        // The same bytes raw: the same file.
        const raw = yield* upload(client.baseUrl, secret, CUBE, "?fileName=raw.stl")
        assert.strictEqual(raw.json().id, file.id)
        const content = yield* send("GET", file.url, secret)
        assert.deepStrictEqual(content.bytes, CUBE)
        // `fileName` names it over the form's own filename.
        const renamed = yield* post(form("ignored.stl", binaryStl(box(1, 2, 3))), "?fileName=named.stl")
        assert.strictEqual(renamed.json().fileName, "named.stl")

        const noFile = new FormData()
        noFile.append("note", "no file here")
        const empty = yield* post(noFile)
        assert.strictEqual(empty.status, 400)
        assert.include(empty.json().message, "file")
        const wrongName = yield* post(form("notes.txt"))
        assert.strictEqual(wrongName.status, 400)
        assert.include(wrongName.json().message, ".stl, .3mf or .obj")
        // Over MODEL_UPLOAD_MAX_BYTES inside a form: the same 413, nothing kept.
        const tooLarge = yield* post(form("big.stl", new Uint8Array(LIMIT + 1024).fill(1)))
        assert.strictEqual(tooLarge.status, 413)
        assert.strictEqual((yield* modelFileRows(appId))[0]!.count, 2)
      }))

    it.effect("upload, then create_part through MCP with the file's url", () =>
      Effect.gen(function*() {
        const client = yield* TestClient
        const { appId, call, ticket } = yield* appWithTicket("upload-mcp")
        const secret = (yield* client.createSecret(appId)).value
        const file = (yield* upload(client.baseUrl, secret, binaryStl(box(5, 5, 5)), "?fileName=small.stl")).json()
        const material = ok(yield* call("POST", "/material", { name: "PLA", technologyId: "fdm" }), "material")
        const response = yield* Effect.promise(() =>
          mcpToolCall(client.baseUrl, secret, "create_part", {
            ticketId: ticket.id,
            modelEndpoint: { url: file.url, fileName: file.fileName },
            technologyId: "fdm",
            materialId: material.id,
            quantity: 3
          })
        )
        const result = rpcMessage(yield* Effect.promise(() => response.text())).result
        assert.notStrictEqual(result.isError, true, JSON.stringify(result))
        assert.strictEqual(result.structuredContent.geometry.volume, 125)
        const quote = ok(yield* call("POST", `/ticket/${ticket.id}/quote`, {}), "quote")
        assert.strictEqual(quote.lines[0].quantity, 3)
      }))

    it.effect("413 above MODEL_UPLOAD_MAX_BYTES (declared or read), the JSON limit not applied; a cut body leaves nothing", () =>
      Effect.gen(function*() {
        const client = yield* TestClient
        const { appId } = yield* appWithTicket("upload-limit")
        const secret = (yield* client.createSecret(appId)).value
        // Over MAX_BODY_BYTES' default of 1 MiB would be refused by the JSON limit; this route's own limit is LIMIT.
        const declared = yield* upload(client.baseUrl, secret, new Uint8Array(LIMIT + 1), "?fileName=big.stl")
        assert.strictEqual(declared.status, 413)
        assert.strictEqual(declared.json().type, "PayloadTooLarge")
        assert.include(declared.json().message, "MODEL_UPLOAD_MAX_BYTES")
        // Chunked, no Content-Length: refused when the bytes read pass the limit.
        const chunks = [new Uint8Array(LIMIT / 2), new Uint8Array(LIMIT / 2), new Uint8Array(16)]
        const streamed = yield* Effect.promise(async () => {
          const body = new ReadableStream<Uint8Array>({
            start(controller) {
              for (const chunk of chunks) controller.enqueue(chunk)
              controller.close()
            }
          })
          const response = await fetch(`${client.baseUrl}/v1/model-file?fileName=big.stl`, {
            method: "POST",
            headers: { authorization: secret, "content-type": "model/stl" },
            body,
            duplex: "half"
          } as RequestInit).catch(() => undefined)
          return response === undefined ? undefined : { status: response.status, text: await response.text().catch(() => "") }
        })
        if (streamed !== undefined) assert.strictEqual(streamed.status, 413, streamed.text)
        // Aborted mid-body: no file, no chunk left.
        yield* abortMidBody(client.baseUrl, secret, 4000, 1500)
        yield* Effect.sleep("300 millis")
        assert.strictEqual((yield* modelFileRows(appId))[0]!.count, 0)
        assert.strictEqual((yield* orphanChunks)[0]!.count, 0)
        // Within the limit it is stored.
        const fits = yield* upload(client.baseUrl, secret, CUBE, "?fileName=fits.stl")
        assert.strictEqual(fits.status, 200)
      }))

    it.effect("another app can neither read the file nor build a part from its url; 415 for another content type", () =>
      Effect.gen(function*() {
        const client = yield* TestClient
        const owner = yield* appWithTicket("upload-owner")
        const ownerSecret = (yield* client.createSecret(owner.appId)).value
        const file = (yield* upload(client.baseUrl, ownerSecret, CUBE, "?fileName=secret.stl")).json()
        const other = yield* appWithTicket("upload-other")
        const otherSecret = (yield* client.createSecret(other.appId)).value
        const record = yield* send("GET", `${client.baseUrl}/v1/model-file/${file.id}`, otherSecret)
        assert.strictEqual(record.status, 200)
        assert.strictEqual(record.bytes.length, 0)
        // The content of another app's file reads as missing: the spec's empty 200, an empty text and never the file's bytes.
        const content = yield* send("GET", file.url, otherSecret)
        assert.deepStrictEqual([content.status, content.bytes.length, content.headers.get("content-type")], [200, 0, "text/plain"])
        const material = ok(yield* other.call("POST", "/material", { name: "PLA", technologyId: "fdm" }), "material")
        const part = yield* other.call("POST", "/ticket-model", {
          ticketId: other.ticket.id,
          modelEndpoint: { url: file.url, fileName: file.fileName },
          technologyId: "fdm",
          materialId: material.id,
          quantity: 1
        })
        assert.strictEqual(part.status, 422, part.text)
        assert.strictEqual(part.json().type, "UnknownModelFile")

        const text = yield* upload(client.baseUrl, ownerSecret, CUBE, "?fileName=a.stl", { "content-type": "text/plain" })
        assert.strictEqual(text.status, 415)
        assert.strictEqual(
          text.json().message,
          "Unsupported content-type: text/plain; send the body as model/stl, model/3mf, model/obj, application/octet-stream, multipart/form-data"
        )
        const unnamed = yield* upload(client.baseUrl, ownerSecret, CUBE, "", { "content-type": "application/octet-stream" })
        assert.strictEqual(unnamed.status, 400)
        const mismatch = yield* upload(client.baseUrl, ownerSecret, CUBE, "?fileName=a.obj")
        assert.strictEqual(mismatch.status, 400)
      }))
  })
}
