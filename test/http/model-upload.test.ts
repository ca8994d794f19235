/**
 * Uploaded model files (POST /v1/model-file): a part and a quote from a file
 * no public URL serves, over REST and MCP; the same bytes stored once; the
 * upload limit (MODEL_UPLOAD_MAX_BYTES, small here) a 413 whether the
 * Content-Length says so or the bytes read pass it; a body cut mid-way
 * leaving nothing; another app neither reading the file nor building a part
 * from its URL; an unsupported content type a 415. The engine's fetcher is
 * the default one: it refuses 127.0.0.1, so a part that prices proves the
 * file was read from the database, not over HTTP.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { request as httpRequest } from "node:http"
import { binaryStl, box } from "../../src/engine/geometry/writers.ts"
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
          "Unsupported content-type: text/plain; send the body as model/stl, model/3mf, model/obj, application/octet-stream"
        )
        const unnamed = yield* upload(client.baseUrl, ownerSecret, CUBE, "", { "content-type": "application/octet-stream" })
        assert.strictEqual(unnamed.status, 400)
        const mismatch = yield* upload(client.baseUrl, ownerSecret, CUBE, "?fileName=a.obj")
        assert.strictEqual(mismatch.status, 400)
      }))
  })
}
