/**
 * The gateway over a remote engine (DOWNSTREAM_URL), through its HTTP surface:
 * the engine's failures reach the client unchanged (status, body, both source
 * headers); what goes wrong on the way is named `engine` and answered 502 or
 * 504, never 401 and never a hang; and the real engine, served on its own
 * port, answers exactly as the embedded one does.
 */
import { assert, layer } from "@effect/vitest"
import { ConfigProvider, Context, Effect, Layer, Option, Redacted, Tracer } from "effect"
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { backends } from "../support/backends.ts"
import { EngineUrl, TestApp, TestAppOverEngine, TestClient } from "../support/TestApp.ts"

// ---------------------------------------------------------------------------
// A scripted downstream: a node:http server answering as the current script says.

interface Seen {
  readonly method: string
  readonly url: string
  readonly headers: IncomingHttpHeaders
  readonly body: string
}

type Script = (seen: Seen, response: ServerResponse) => void

class Scripted extends Context.Service<Scripted, {
  readonly url: string
  /** Answers the next calls with `script`; forgets the calls seen so far. */
  readonly answer: (script: Script) => Effect.Effect<void>
  readonly seen: () => ReadonlyArray<Seen>
}>()("test/Scripted") {}

const reply = (status: number, body: string, headers: Record<string, string> = {}): Script => (_, response) => {
  response.writeHead(status, { "content-type": "application/json", ...headers })
  response.end(body)
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) => reply(status, JSON.stringify(body), headers)

/** The engine's "no such record": a 204, which the gateway answers as the spec's empty 200. */
const NO_RECORD: Script = (_, response) => {
  response.writeHead(204)
  response.end()
}

const ScriptedLayer = Layer.effect(
  Scripted,
  Effect.gen(function*() {
    let script: Script = NO_RECORD
    let seen: Array<Seen> = []
    const server = yield* Effect.acquireRelease(
      Effect.promise(() =>
        new Promise<Server>((resolve) => {
          const server = createServer((request, response) => {
            const chunks: Array<Buffer> = []
            request.on("data", (chunk: Buffer) => chunks.push(chunk))
            request.on("end", () => {
              const call = {
                method: request.method ?? "",
                url: request.url ?? "",
                headers: request.headers,
                body: Buffer.concat(chunks).toString("utf8")
              }
              seen.push(call)
              script(call, response)
            })
          })
          server.listen(0, "127.0.0.1", () => resolve(server))
        })
      ),
      (server) =>
        Effect.promise(() =>
          new Promise<void>((resolve) => {
            server.closeAllConnections()
            server.close(() => resolve())
          })
        )
    )
    return Scripted.of({
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      answer: (next) =>
        Effect.sync(() => {
          script = next
          seen = []
        }),
      seen: () => seen
    })
  })
)

const TIMEOUT_MS = 300
/** A 504 may come this much after DOWNSTREAM_TIMEOUT_MS: timers and a loaded 2-core machine, no more. */
const TIMEOUT_MARGIN_MS = 700
const ENGINE_TOKEN = "gateway-to-engine-token"

/** Environment values for one suite, over the process environment. */
const withEnv = (values: Record<string, string>) => ConfigProvider.layerAdd(ConfigProvider.fromUnknown(values), { asPrimary: true })

/**
 * A tracer other than the native one, as OpenTelemetry would install: only then
 * does the server open a span per request, continuing the caller's traceparent.
 */
const RecordingTracer = Layer.succeed(Tracer.Tracer, Tracer.make({ span: (options) => Tracer.nativeTracer.span(options) }))

/** A gateway whose Downstream is DownstreamHttp to the scripted server (picked by ServicesLive from DOWNSTREAM_URL). */
const ScriptedApp = Layer.unwrap(Effect.gen(function*() {
  const scripted = yield* Scripted
  return TestApp("pglite", { downstreamUrl: Option.some(scripted.url) })
})).pipe(
  Layer.provideMerge(ScriptedLayer),
  Layer.provide(withEnv({ DOWNSTREAM_TIMEOUT_MS: String(TIMEOUT_MS), ENGINE_TOKEN })),
  Layer.provide(RecordingTracer)
)

interface ErrorBody {
  readonly code: number
  readonly message: string
  readonly type: string
}

const VALID_CUSTOMER = { name: "Acme", email: "buyer@acme.example" }

layer(ScriptedApp, { timeout: 60_000, excludeTestServices: true })("Passthrough from a scripted engine", (it) => {
  const setup = Effect.gen(function*() {
    const client = yield* TestClient
    const scripted = yield* Scripted
    const { value } = yield* client.createSecret("passthrough")
    return { client, scripted, secret: value }
  })

  it.effect("passes the engine's errors through unchanged: status, body and both source headers", () =>
    Effect.gen(function*() {
      const { client, scripted, secret } = yield* setup
      const cases = [
        { status: 404, body: { code: 404, message: "customer x not found", type: "NotFound" }, source: "engine", id: "engine-req-404" },
        { status: 409, body: { code: 409, message: "order o-1 is already released", type: "Conflict" }, source: "engine", id: "engine-req-409" },
        { status: 422, body: { code: 422, message: "no price for material m-7", type: "PricingFailed" }, source: "pricing", id: "pricing-7f3a" },
        { status: 500, body: { code: 500, message: "engine exploded", type: "InternalError" }, source: "engine", id: "engine-req-500" },
        { status: 503, body: { code: 503, message: "The engine's storage is unavailable", type: "StorageUnavailable" }, source: "engine", id: "e-503" }
      ]
      for (const c of cases) {
        yield* scripted.answer(json(c.status, c.body, { "x-error-source": c.source, "x-error-source-request-id": c.id }))
        const answer = yield* client.call("PUT", "/v1/customer/x", { secret, body: VALID_CUSTOMER })
        assert.strictEqual(answer.status, c.status, c.body.message)
        assert.deepStrictEqual(answer.json(), c.body)
        assert.strictEqual(answer.headers.get("x-error-source"), c.source)
        assert.strictEqual(answer.headers.get("x-error-source-request-id"), c.id)
      }
    }))

  it.effect("names the engine and the call's request id when the error carries no source headers", () =>
    Effect.gen(function*() {
      const { client, scripted, secret } = yield* setup
      yield* scripted.answer(json(409, { code: 409, message: "busy", type: "Conflict" }))
      const answer = yield* client.call("GET", "/v1/customer/x", { secret })
      assert.strictEqual(answer.status, 409)
      assert.deepStrictEqual(answer.json(), { code: 409, message: "busy", type: "Conflict" })
      assert.strictEqual(answer.headers.get("x-error-source"), "engine")
      assert.strictEqual(answer.headers.get("x-error-source-request-id"), answer.headers.get("x-request-id"))
    }))

  it.effect("sends the operation's request, the app, the request id, the trace context and the engine token", () =>
    Effect.gen(function*() {
      const { client, scripted, secret } = yield* setup
      yield* scripted.answer(NO_RECORD)
      const traceId = "4bf92f3577b34da6a3ce929d0e0e4736"
      const answer = yield* client.call("GET", "/v1/customer/abc-1", {
        secret,
        headers: { traceparent: `00-${traceId}-00f067aa0ba902b7-01` }
      })
      assert.strictEqual(answer.status, 200)
      const [call] = scripted.seen()
      assert.isDefined(call)
      assert.strictEqual(call!.method, "GET")
      assert.strictEqual(call!.url, "/engine/v1/customer/abc-1")
      assert.strictEqual(call!.headers["x-engine-app-id"], "passthrough")
      assert.strictEqual(call!.headers["x-request-id"], answer.headers.get("x-request-id"))
      assert.strictEqual(call!.headers["authorization"], `Bearer ${ENGINE_TOKEN}`)
      const traceparent = String(call!.headers["traceparent"] ?? "")
      assert.match(traceparent, /^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$/)
      assert.strictEqual(traceparent.split("-")[1], traceId, "the client's trace continues to the engine")
      assert.strictEqual(call!.body, "")

      yield* client.call("POST", "/v1/customer", { secret, body: VALID_CUSTOMER })
      const create = scripted.seen().at(-1)
      assert.strictEqual(create!.method, "POST")
      assert.strictEqual(create!.url, "/engine/v1/customer")
      assert.match(create!.headers["content-type"] ?? "", /^application\/json/)
      assert.deepStrictEqual(JSON.parse(create!.body), VALID_CUSTOMER)

      yield* client.call("GET", "/v1/customer?name=Acme&name=Bolt&limit=5", { secret })
      assert.strictEqual(scripted.seen().at(-1)!.url, "/engine/v1/customer?name=Acme&name=Bolt&limit=5")
    }))

  it.effect("answers the engine's result: a record as the body, its 204 as the empty 200", () =>
    Effect.gen(function*() {
      const { client, scripted, secret } = yield* setup
      const customer = {
        id: "c-1",
        name: "Acme",
        email: "buyer@acme.example",
        createdAt: "2026-11-01T00:00:00.000Z",
        updatedAt: "2026-11-02T00:00:00.000Z"
      }
      yield* scripted.answer(json(200, customer))
      const read = yield* client.call("GET", "/v1/customer/c-1", { secret })
      assert.strictEqual(read.status, 200)
      assert.deepStrictEqual(read.json(), customer)

      // A page: the records, and the total in the engine's X-Total-Count, which the gateway answers.
      yield* scripted.answer(json(200, [customer], { "x-total-count": "7" }))
      const page = yield* client.call("GET", "/v1/customer?limit=1", { secret })
      assert.deepStrictEqual(page.json(), [customer])
      assert.strictEqual(page.headers.get("x-total-count"), "7")
      // A page without its total is an answer the gateway cannot give: 502, naming the engine.
      yield* scripted.answer(json(200, [customer]))
      const untotalled = yield* client.call("GET", "/v1/customer", { secret })
      assert.strictEqual(untotalled.status, 502, untotalled.text)

      yield* scripted.answer(NO_RECORD)
      const missing = yield* client.call("GET", "/v1/customer/nope", { secret })
      assert.strictEqual(missing.status, 200)
      assert.strictEqual(missing.text, "")
    }))

  it.effect("answers an unreadable engine answer with 502 naming the engine, never 401", () =>
    Effect.gen(function*() {
      const { client, scripted, secret } = yield* setup
      const garbled: ReadonlyArray<[string, Script]> = [
        ["non-JSON 200", reply(200, "this is not json")],
        ["empty 200", reply(200, "")],
        ["200 that is not a customer", json(200, { answer: 42 })],
        ["500 with an HTML body", reply(500, "<html><body>Internal Server Error</body></html>", { "content-type": "text/html" })],
        ["404 without type", json(404, { code: 404, message: "gone" })],
        ["302 redirect", reply(302, "", { location: "http://example.com/" })]
      ]
      for (const [name, script] of garbled) {
        yield* scripted.answer(script)
        const answer = yield* client.call("GET", "/v1/customer/x", { secret })
        assert.strictEqual(answer.status, 502, name)
        assert.deepStrictEqual(answer.json(), { code: 502, message: "The engine's answer is unreadable", type: "BadGateway" }, name)
        assert.strictEqual(answer.headers.get("x-error-source"), "engine", name)
        assert.strictEqual(answer.headers.get("x-error-source-request-id"), answer.headers.get("x-request-id"), name)
      }
    }))

  it.effect("answers an engine that refuses the gateway's credentials with 502, not 401", () =>
    Effect.gen(function*() {
      const { client, scripted, secret } = yield* setup
      yield* scripted.answer(json(401, { code: 401, message: "Not Authorized", type: "Unauthorized" }, { "x-error-source": "engine" }))
      const answer = yield* client.call("GET", "/v1/customer/x", { secret })
      assert.strictEqual(answer.status, 502)
      assert.strictEqual(answer.json().type, "BadGateway")
      assert.strictEqual(answer.headers.get("x-error-source"), "engine")
    }))

  it.effect("answers a slow engine with 504 within DOWNSTREAM_TIMEOUT_MS, then serves the next call", () =>
    Effect.gen(function*() {
      const { client, scripted, secret } = yield* setup
      yield* scripted.answer(() => {}) // never answers
      const started = Date.now()
      const answer = yield* client.call("GET", "/v1/customer/x", { secret })
      const elapsed = Date.now() - started
      assert.strictEqual(answer.status, 504)
      assert.deepStrictEqual(answer.json(), {
        code: 504,
        message: `The engine did not answer within ${TIMEOUT_MS} ms`,
        type: "GatewayTimeout"
      })
      assert.strictEqual(answer.headers.get("x-error-source"), "engine")
      assert.isAtLeast(elapsed, TIMEOUT_MS - 50)
      assert.isBelow(elapsed, TIMEOUT_MS + TIMEOUT_MARGIN_MS)

      yield* scripted.answer(NO_RECORD)
      assert.strictEqual((yield* client.call("GET", "/v1/customer/x", { secret })).status, 200)
    }))

  it.effect("answers a connection reset with 502 naming the engine as unreachable", () =>
    Effect.gen(function*() {
      const { client, scripted, secret } = yield* setup
      yield* scripted.answer((_, response) => response.socket?.destroy())
      const answer = yield* client.call("GET", "/v1/customer/x", { secret })
      assert.strictEqual(answer.status, 502)
      assert.deepStrictEqual(answer.json(), { code: 502, message: "The engine is unreachable", type: "BadGateway" })
      assert.strictEqual(answer.headers.get("x-error-source"), "engine")
    }))
})

// ---------------------------------------------------------------------------
// An engine that is not there.

/** A port nothing listens on: bound, then closed. */
const closedPort = Effect.promise(() =>
  new Promise<number>((resolve) => {
    const server = createServer()
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo
      server.close(() => resolve(port))
    })
  })
)

/** Long, so that answering before it shows the refusal was detected, not waited out. */
const REFUSED_TIMEOUT_MS = 2_000

const RefusedApp = Layer.unwrap(Effect.map(closedPort, (port) => TestApp("pglite", { downstreamUrl: Option.some(`http://127.0.0.1:${port}`) }))).pipe(
  Layer.provide(withEnv({ DOWNSTREAM_TIMEOUT_MS: String(REFUSED_TIMEOUT_MS) }))
)

layer(RefusedApp, { timeout: 60_000, excludeTestServices: true })("Passthrough to an engine that refuses connections", (it) => {
  it.effect("answers 502 naming the engine, at once (not at DOWNSTREAM_TIMEOUT_MS) and never 401", () =>
    Effect.gen(function*() {
      const client = yield* TestClient
      const { value: secret } = yield* client.createSecret("refused")
      const started = Date.now()
      const answer = yield* client.call("POST", "/v1/customer", { secret, body: VALID_CUSTOMER })
      assert.isBelow(Date.now() - started, REFUSED_TIMEOUT_MS)
      assert.strictEqual(answer.status, 502)
      assert.deepStrictEqual(answer.json(), { code: 502, message: "The engine is unreachable", type: "BadGateway" })
      assert.strictEqual(answer.headers.get("x-error-source"), "engine")
      assert.strictEqual(answer.headers.get("x-error-source-request-id"), answer.headers.get("x-request-id"))
    }))
})

// ---------------------------------------------------------------------------
// The real engine on its own port: the same answers as embedded.

for (const backend of backends) {
  layer(TestAppOverEngine(backend), { timeout: 60_000, excludeTestServices: true })(
    `The gateway over the engine's HTTP API (${backend})`,
    (it) => {
      it.effect("creates, reads, lists and replaces a customer as the embedded engine does", () =>
        Effect.gen(function*() {
          const client = yield* TestClient
          const { value: secret } = yield* client.createSecret("over-http")
          const created = yield* client.call("POST", "/v1/customer", { secret, body: { ...VALID_CUSTOMER, phone: "+49 1" } })
          assert.strictEqual(created.status, 200)
          const customer = created.json()
          assert.match(customer.id, /^[0-9a-f-]{36}$/)
          assert.strictEqual(customer.phone, "+49 1")

          assert.deepStrictEqual((yield* client.call("GET", `/v1/customer/${customer.id}`, { secret })).json(), customer)
          assert.deepStrictEqual((yield* client.call("GET", "/v1/customer", { secret })).json(), [customer])
          assert.deepStrictEqual((yield* client.call("GET", "/v1/customer?name=Acme&limit=5", { secret })).json(), [customer])

          const replaced = yield* client.call("PUT", `/v1/customer/${customer.id}`, { secret, body: { name: "Renamed", email: "new@example.com" } })
          assert.strictEqual(replaced.status, 200)
          const record = replaced.json()
          assert.strictEqual(record.id, customer.id)
          assert.strictEqual(record.name, "Renamed")
          assert.isUndefined(record.phone)
          assert.deepStrictEqual((yield* client.call("GET", `/v1/customer/${customer.id}`, { secret })).json(), record)

          const missing = yield* client.call("GET", "/v1/customer/does-not-exist", { secret })
          assert.strictEqual(missing.status, 200)
          assert.strictEqual(missing.text, "")
        }))

      it.effect("answers PUT of a missing id with the engine's 404 and the call's request id", () =>
        Effect.gen(function*() {
          const client = yield* TestClient
          const { value: secret } = yield* client.createSecret("over-http-404")
          const reply = yield* client.call("PUT", "/v1/customer/nope", { secret, body: VALID_CUSTOMER })
          assert.strictEqual(reply.status, 404)
          assert.deepStrictEqual(reply.json(), { code: 404, message: "customer nope not found", type: "NotFound" })
          assert.strictEqual(reply.headers.get("x-error-source"), "engine")
          assert.strictEqual(reply.headers.get("x-error-source-request-id"), reply.headers.get("x-request-id"))
        }))

      it.effect("keeps apps apart over the wire", () =>
        Effect.gen(function*() {
          const client = yield* TestClient
          const mine = (yield* client.createSecret("wire-a")).value
          const theirs = (yield* client.createSecret("wire-b")).value
          const created = (yield* client.call("POST", "/v1/customer", { secret: mine, body: VALID_CUSTOMER })).json()
          assert.strictEqual((yield* client.call("GET", `/v1/customer/${created.id}`, { secret: theirs })).text, "")
          assert.strictEqual((yield* client.call("PUT", `/v1/customer/${created.id}`, { secret: theirs, body: VALID_CUSTOMER })).status, 404)
        }))

      it.effect("serves EngineApi: health, readiness, 400 naming the field or the missing app, the caller's request id, 404 off the contract", () =>
        Effect.gen(function*() {
          const engine = yield* EngineUrl
          const call = (method: string, path: string, headers: Record<string, string> = {}, body?: string) =>
            Effect.promise(async () => {
              const response = await fetch(`${engine}${path}`, {
                method,
                headers: { "content-type": "application/json", ...headers },
                ...(body === undefined ? {} : { body }),
                signal: AbortSignal.timeout(10_000)
              })
              const text = await response.text()
              return { status: response.status, headers: response.headers, body: text === "" ? undefined : JSON.parse(text) as ErrorBody }
            })
          const get = (path: string) => Effect.promise(() => fetch(`${engine}${path}`).then(async (r) => [r.status, await r.json()]))
          assert.deepStrictEqual(yield* get("/health"), [200, { status: "ok" }])
          assert.deepStrictEqual(yield* get("/ready"), [200, { status: "ready", checks: { storage: "ok" } }])
          const app = { "x-engine-app-id": "direct" }

          const noApp = yield* call("GET", "/engine/v1/customer")
          assert.strictEqual(noApp.status, 400)
          assert.deepStrictEqual(noApp.body, { code: 400, message: "The x-engine-app-id header must name the app the call is for", type: "ValidationError" })
          assert.strictEqual(noApp.headers.get("x-error-source"), "engine")

          const badQuery = yield* call("GET", "/engine/v1/customer?limit=0", app)
          assert.strictEqual(badQuery.status, 400)
          assert.strictEqual(badQuery.body?.type, "ValidationError")
          assert.include(badQuery.body?.message, "limit")
          const badBody = yield* call("POST", "/engine/v1/customer", app, JSON.stringify({ name: "" }))
          assert.strictEqual(badBody.status, 400)
          assert.include(badBody.body?.message, "name")

          const listed = yield* call("GET", "/engine/v1/customer", { ...app, "x-request-id": "my-id-1" })
          assert.deepStrictEqual([listed.status, listed.body], [200, []])
          assert.strictEqual(listed.headers.get("x-request-id"), "my-id-1")
          const missing = yield* call("GET", "/engine/v1/customer/nope", app)
          assert.deepStrictEqual([missing.status, missing.body], [204, undefined])

          const gone = yield* call("PUT", "/engine/v1/customer/nope", { ...app, "x-request-id": "my-id-2" }, JSON.stringify(VALID_CUSTOMER))
          assert.deepStrictEqual([gone.status, gone.body], [404, { code: 404, message: "customer nope not found", type: "NotFound" }])
          assert.strictEqual(gone.headers.get("x-error-source"), "engine")
          assert.strictEqual(gone.headers.get("x-error-source-request-id"), "my-id-2")

          // Only the contract's operations have routes: the engine's own record writes (a model version, a PPS record) have none.
          for (const [method, path] of [["POST", "/engine/v1/model-version"], ["DELETE", "/engine/v1/pps/x"], ["GET", "/engine/v1/nothing"]] as const) {
            assert.strictEqual((yield* call(method, path, app, method === "POST" ? "{}" : undefined)).status, 404, `${method} ${path}`)
          }
        }))
    }
  )
}

// ---------------------------------------------------------------------------
// ENGINE_TOKEN between gateway and engine.

const engineWithToken = { token: Option.some(Redacted.make(ENGINE_TOKEN)) }

layer(TestAppOverEngine("pglite", {}, engineWithToken).pipe(Layer.provide(withEnv({ ENGINE_TOKEN }))), {
  timeout: 60_000,
  excludeTestServices: true
})("An engine that requires ENGINE_TOKEN", (it) => {
  it.effect("serves a gateway holding the token and refuses a call without it", () =>
    Effect.gen(function*() {
      const client = yield* TestClient
      const { value: secret } = yield* client.createSecret("token")
      const created = yield* client.call("POST", "/v1/customer", { secret, body: VALID_CUSTOMER })
      assert.strictEqual(created.status, 200)

      const engine = yield* EngineUrl
      for (const authorization of [undefined, "Bearer wrong-token", ENGINE_TOKEN, `Bearer ${ENGINE_TOKEN}x`]) {
        const answer = yield* Effect.promise(() =>
          fetch(`${engine}/engine/v1/customer`, {
            headers: { "x-engine-app-id": "token", ...(authorization === undefined ? {} : { authorization }) }
          }).then(async (r) => ({ status: r.status, source: r.headers.get("x-error-source"), body: (await r.json()) as ErrorBody }))
        )
        assert.strictEqual(answer.status, 401, String(authorization))
        assert.strictEqual(answer.body.code, 401)
        assert.strictEqual(answer.source, "engine")
      }
    }))

  it.effect("serves the contract's operations only: anything else is a 404, even with the token", () =>
    Effect.gen(function*() {
      const engine = yield* EngineUrl
      const call = (method: string, path: string) =>
        Effect.promise(() =>
          fetch(`${engine}${path}`, {
            method,
            headers: { "content-type": "application/json", authorization: `Bearer ${ENGINE_TOKEN}`, "x-engine-app-id": "token" },
            ...(method === "POST" ? { body: "{}" } : {})
          }).then((r) => r.status)
        )
      // Record operations the engine runs for its workflows, which no public endpoint reaches.
      for (const [method, path] of [["POST", "/engine/v1/model-version"], ["DELETE", "/engine/v1/pps/p-1"], ["DELETE", "/engine/v1/ticket-quote/q-1"]]) {
        assert.strictEqual(yield* call(method!, path!), 404, `${method} ${path}`)
      }
      assert.strictEqual(yield* call("GET", "/engine/v1/customer"), 200)
    }))
})

layer(TestAppOverEngine("pglite", {}, engineWithToken), { timeout: 60_000, excludeTestServices: true })(
  "A gateway without the engine's ENGINE_TOKEN",
  (it) => {
    it.effect("answers 502 naming the engine: a misconfiguration, not the caller's 401", () =>
      Effect.gen(function*() {
        const client = yield* TestClient
        const { value: secret } = yield* client.createSecret("no-token")
        const answer = yield* client.call("GET", "/v1/customer", { secret })
        assert.strictEqual(answer.status, 502)
        assert.deepStrictEqual(answer.json(), { code: 502, message: "The engine refused the gateway's credentials", type: "BadGateway" })
        assert.strictEqual(answer.headers.get("x-error-source"), "engine")
      }))
  }
)
