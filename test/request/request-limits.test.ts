/**
 * Bounded input on every surface: bodies over MAX_BODY_BYTES are a 413 before
 * they are read whole, deep JSON is a 400 (a JSON-RPC -32700 on MCP), a
 * malformed percent-encoding in the path is the standard 400, a JSON-RPC
 * batch is a JSON-RPC error, and a control character in an admin filter is
 * a 400 naming the parameter. Every refusal has the standard body.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import * as Http from "node:http"
import { ADMIN_TOKEN } from "../support/backends.ts"
import { MCP_VERSION } from "../support/mcp.ts"
import { rawRequest } from "../support/rawHttp.ts"
import { TestApp, TestClient } from "../support/TestApp.ts"

/** A deliberately small limit, so that the bodies of the tests stay small. */
const LIMIT = 64 * 1024

const portOf = (baseUrl: string) => Number(new URL(baseUrl).port)

const MCP_HEADERS = {
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
  "mcp-protocol-version": MCP_VERSION
}

const nested = (depth: number) => "[".repeat(depth) + "]".repeat(depth)

interface StreamedReply {
  readonly status: number
  readonly body: string
  readonly connection: string | undefined
  /** Bytes the client had written when the answer arrived. */
  readonly sentBeforeAnswer: number
}

/**
 * A chunked POST (no Content-Length) that keeps sending until the server
 * answers, up to `maxBytes`: the answer must come long before that.
 */
const chunkedPost = (port: number, path: string, headers: Record<string, string>, maxBytes: number) =>
  Effect.promise(() =>
    new Promise<StreamedReply>((resolve, reject) => {
      let sent = 0
      let answered = false
      const request = Http.request({ host: "127.0.0.1", port, path, method: "POST", headers }, (response) => {
        answered = true
        const sentBeforeAnswer = sent
        let body = ""
        response.setEncoding("utf8")
        response.on("data", (chunk: string) => (body += chunk))
        response.on("end", () => {
          request.destroy()
          resolve({ status: response.statusCode ?? 0, body, connection: response.headers.connection, sentBeforeAnswer })
        })
      })
      request.on("error", (error) => (answered ? undefined : reject(error)))
      const chunk = Buffer.alloc(16 * 1024, " ")
      const pump = () => {
        while (!answered && sent < maxBytes) {
          sent += chunk.length
          if (!request.write(chunk)) return request.once("drain", pump)
        }
        if (!answered) request.end()
      }
      request.write("{\"name\":\"x\",")
      pump()
    })
  )

layer(TestApp("pglite", { maxBodyBytes: LIMIT }), { timeout: 60_000, excludeTestServices: true })("Request limits", (it) => {
  it.effect("refuses a body whose Content-Length is over MAX_BODY_BYTES with 413, on REST, the admin API and MCP", () =>
    Effect.gen(function*() {
      const client = yield* TestClient
      const { value } = yield* client.createSecret("limits-app")
      const big = { name: "x".repeat(LIMIT), email: "a@b.example" }
      for (const secret of [value, undefined]) {
        const reply = yield* client.call("POST", "/v1/customer", { secret, body: big })
        assert.strictEqual(reply.status, 413)
        assert.strictEqual(reply.headers.get("content-type"), "application/json")
        assert.deepStrictEqual(reply.json(), {
          code: 413,
          message: `The request body is larger than ${LIMIT} bytes (MAX_BODY_BYTES)`,
          type: "PayloadTooLarge"
        })
      }
      const admin = yield* client.call("POST", "/api/v1/secret", {
        headers: { "x-admin-token": ADMIN_TOKEN },
        body: { appId: "x".repeat(LIMIT), ipAddresses: [] }
      })
      assert.deepStrictEqual([admin.status, admin.json().type], [413, "PayloadTooLarge"])
      const mcp = yield* client.call("POST", "/v1/mcp", {
        secret: value,
        headers: MCP_HEADERS,
        body: { jsonrpc: "2.0", id: 1, method: "tools/list", params: { padding: "x".repeat(LIMIT) } }
      })
      assert.strictEqual(mcp.status, 413)
      const refusal = { code: -32600, message: `The request body is larger than ${LIMIT} bytes (MAX_BODY_BYTES)` }
      // Over the limit by less than as much again, the body is read on (not kept) for its id: the answer carries it.
      assert.deepStrictEqual(mcp.json(), { jsonrpc: "2.0", id: 1, error: refusal })
      // Where the official clients put it, after the parameters: found all the same, and so is a string id.
      const last = yield* client.call("POST", "/v1/mcp", {
        headers: MCP_HEADERS,
        body: { method: "tools/list", params: { padding: "x".repeat(LIMIT) }, jsonrpc: "2.0", id: "last" }
      })
      assert.deepStrictEqual([last.status, last.json()], [413, { jsonrpc: "2.0", id: "last", error: refusal }])
      // Twice the limit or more: refused at once, without reading it, so without the id.
      const huge = yield* client.call("POST", "/v1/mcp", {
        headers: MCP_HEADERS,
        body: { jsonrpc: "2.0", id: 2, method: "tools/list", params: { padding: "x".repeat(2 * LIMIT) } }
      })
      assert.deepStrictEqual([huge.status, huge.json()], [413, { jsonrpc: "2.0", error: refusal }])
    }))

  it.effect("lists the 413 in the OpenAPI document, with the standard error body", () =>
    Effect.gen(function*() {
      const client = yield* TestClient
      const document = (yield* client.call("GET", "/openapi.json")).json()
      const refusal = document.paths["/v1/customer"].post.responses["413"]
      assert.isDefined(refusal)
      const schema = refusal.content["application/json"].schema
      const resolved = schema.$ref === undefined ? schema : document.components.schemas[schema.$ref.split("/").at(-1)]
      assert.deepStrictEqual(Object.keys(resolved.properties).sort(), ["code", "message", "type"])
    }))

  it.effect("answers a chunked body 413 once it passes the limit, without reading the rest, and closes the connection", () =>
    Effect.gen(function*() {
      const client = yield* TestClient
      const { value } = yield* client.createSecret("limits-chunked")
      const port = portOf(client.baseUrl)
      for (const path of ["/v1/customer", "/v1/mcp"]) {
        const reply = yield* chunkedPost(port, path, { authorization: value, "content-type": "application/json" }, 64 * 1024 * 1024)
        assert.strictEqual(reply.status, 413, path)
        assert.strictEqual(reply.connection, "close", path)
        assert.isBelow(reply.sentBeforeAnswer, 8 * 1024 * 1024, `${path}: answered only after ${reply.sentBeforeAnswer} bytes`)
      }
    }))

  it.effect("accepts a body just under the limit", () =>
    Effect.gen(function*() {
      const client = yield* TestClient
      const { value } = yield* client.createSecret("limits-under")
      const body = JSON.stringify({ name: "Padded", email: "padded@example.com" })
      const padded = body.slice(0, -1) + " ".repeat(LIMIT - body.length) + "}"
      assert.strictEqual(Buffer.byteLength(padded), LIMIT)
      const reply = yield* Effect.promise(() =>
        fetch(`${client.baseUrl}/v1/customer`, {
          method: "POST",
          headers: { authorization: value, "content-type": "application/json" },
          body: padded
        })
      )
      assert.strictEqual(reply.status, 200)
      assert.strictEqual((yield* Effect.promise(() => reply.json() as Promise<{ name: string }>)).name, "Padded")
    }))

  it.effect("refuses JSON nested deeper than 64 levels with the standard 400, never a 500", () =>
    Effect.gen(function*() {
      const client = yield* TestClient
      const { value } = yield* client.createSecret("limits-deep")
      const reply = yield* Effect.promise(() =>
        fetch(`${client.baseUrl}/v1/customer`, {
          method: "POST",
          headers: { authorization: value, "content-type": "application/json" },
          body: `{"name":"x","email":"a@b.example","extra":${nested(5_000)}}`
        })
      )
      assert.strictEqual(reply.status, 400)
      assert.deepStrictEqual(yield* Effect.promise(() => reply.json()), {
        code: 400,
        message: "The request body nests arrays and objects deeper than 64 levels",
        type: "BadRequest"
      })
      // 64 levels are fine: the schema answers (an unknown field), not the bound.
      const shallow = yield* Effect.promise(() =>
        fetch(`${client.baseUrl}/v1/customer`, {
          method: "POST",
          headers: { authorization: value, "content-type": "application/json" },
          body: `{"name":"x","email":"a@b.example","extra":${nested(63)}}`
        })
      )
      const shallowBody = yield* Effect.promise(() => shallow.json() as Promise<{ type: string }>)
      assert.deepStrictEqual([shallow.status, shallowBody.type], [400, "UnknownField"])
    }))

  it.effect("answers deep JSON on MCP (in _meta or in the id) with JSON-RPC -32700 and no id", () =>
    Effect.gen(function*() {
      const client = yield* TestClient
      const { value } = yield* client.createSecret("limits-mcp-deep")
      const bodies = [
        `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"deep":${nested(5_000)}}}}`,
        `{"jsonrpc":"2.0","id":${nested(10_000)},"method":"tools/list"}`
      ]
      for (const body of bodies) {
        const reply = yield* Effect.promise(() =>
          fetch(`${client.baseUrl}/v1/mcp`, { method: "POST", headers: { authorization: value, ...MCP_HEADERS }, body })
        )
        assert.strictEqual(reply.status, 400)
        assert.strictEqual(reply.headers.get("content-type"), "application/json")
        assert.deepStrictEqual(yield* Effect.promise(() => reply.json()), {
          jsonrpc: "2.0",
          error: { code: -32700, message: "The request body nests arrays and objects deeper than 64 levels" }
        })
      }
    }))

  it.effect("answers a JSON-RPC batch on MCP with a JSON-RPC error, not an empty 400", () =>
    Effect.gen(function*() {
      const client = yield* TestClient
      const { value } = yield* client.createSecret("limits-mcp-batch")
      const reply = yield* client.call("POST", "/v1/mcp", {
        secret: value,
        headers: MCP_HEADERS,
        body: [{ jsonrpc: "2.0", id: 1, method: "ping" }]
      })
      assert.strictEqual(reply.status, 400)
      assert.strictEqual(reply.headers.get("content-type"), "application/json")
      assert.deepStrictEqual(reply.json(), {
        jsonrpc: "2.0",
        error: { code: -32600, message: "JSON-RPC batches are not supported: send one request per HTTP request" }
      })
    }))

  it.effect("answers a malformed percent-encoding in the path with the standard 400", () =>
    Effect.gen(function*() {
      const client = yield* TestClient
      const { value } = yield* client.createSecret("limits-percent")
      for (const path of ["/v1/customer/%ZZ", "/v1/customer/%C0%AF", "/v1/%E0%A4%A", "/nowhere/%"]) {
        const reply = yield* Effect.promise(() => rawRequest(portOf(client.baseUrl), "GET", path, [`Authorization: ${value}`]))
        assert.strictEqual(reply.status, 400, path)
        assert.include(reply.headers, "content-type:application/json", path)
        assert.deepStrictEqual(JSON.parse(reply.body), {
          code: 400,
          message: "The request path has a malformed percent-encoding",
          type: "MalformedPath"
        }, path)
      }
      // A well-formed encoding still reaches the route: an unknown id is an empty 200.
      const encoded = yield* client.call("GET", "/v1/customer/%41bc", { secret: value })
      assert.deepStrictEqual([encoded.status, encoded.text], [200, ""])
    }))

  it.effect("answers a control character in an admin filter with a 400 naming the parameter", () =>
    Effect.gen(function*() {
      const client = yield* TestClient
      for (const path of ["/api/v1/usage?appId=%00", "/api/v1/usage?appId=a%0Ab", "/api/v1/secret?appId=%7F"]) {
        const reply = yield* client.call("GET", path, { headers: { "x-admin-token": ADMIN_TOKEN } })
        assert.strictEqual(reply.status, 400, path)
        const body = reply.json()
        assert.strictEqual(body.type, "ValidationError", path)
        assert.match(body.message, /query parameter "appId"/, path)
      }
      const created = yield* client.call("POST", "/api/v1/secret", {
        headers: { "x-admin-token": ADMIN_TOKEN },
        body: { appId: "bad\u0000app", ipAddresses: [] }
      })
      assert.strictEqual(created.status, 400)
      assert.match(created.json().message, /field "appId"/)
    }))
})
