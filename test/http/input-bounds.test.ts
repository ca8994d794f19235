/**
 * The bounds the OpenAPI document states of what a client sends are the
 * server's own (test/http/openapi.test.ts checks that every input states
 * one): one value past a field's `maxLength`, `maxItems`, `maxProperties` or
 * `maximum` is a 400 naming the field, before the engine sees the request,
 * on REST and in an MCP tool's arguments. On MCP the JSON-RPC envelope is
 * bounded alike: a longer string id, a longer notification method and a
 * longer `Mcp-Method` or `Mcp-Name` header are refused unrun (400, -32600).
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { backends } from "../support/backends.ts"
import { MCP_VERSION, mcpToolCall } from "../support/mcp.ts"
import { TestApp, TestClient } from "../support/TestApp.ts"

type Json = Record<string, any>

const times = <A>(count: number, item: (index: number) => A): Array<A> => Array.from({ length: count }, (_, index) => item(index))
const ids = (count: number) => times(count, (index) => `id-${index}`)

const endpoint = { url: "https://files.example/models/bracket.stl" }
const part = { ticketId: "t", modelEndpoint: endpoint, technologyId: "fdm", materialId: "m", quantity: 1 }
const configuration = { technologyId: "fdm", materialId: "m" }
const line = { description: "Bracket", ticketModelId: "p", quantity: 1, unitPrice: 1 }
const quote = { ticketId: "t", currencyId: "EUR", state: "accepted", validUntil: "2030-01-01", lines: [line] }

/** One value past a bound: the request, and the field the 400 must name. */
const CASES: ReadonlyArray<readonly [string, string, Json, string]> = [
  ["POST", "/material", { name: "PLA", technologyId: "fdm", colourIds: ids(1001) }, "colourIds"],
  ["PUT", "/machine/x1/reels", { reelIds: ids(1001) }, "reelIds"],
  ["POST", "/quotation-form-region", { quotationFormId: "f", name: "EU", countries: times(301, () => "DE") }, "countries"],
  ["POST", "/catalogue-model", { catalogueId: "c", name: "Block", modelEndpoint: endpoint, configurations: times(101, () => configuration) }, "configurations"],
  [
    "POST",
    "/catalogue-model",
    { catalogueId: "c", name: "Block", modelEndpoint: { ...endpoint, fileName: `${"a".repeat(252)}.stl` }, configurations: [] },
    "modelEndpoint.fileName"
  ],
  ["POST", "/ticket-model", { ...part, serviceIds: ids(101) }, "serviceIds"],
  ["POST", "/ticket-model", { ...part, productionParameterIds: Object.fromEntries(times(101, (index) => [`field${index}`, "v"])) }, "productionParameterIds"],
  ["POST", "/ticket-model", { ...part, productionParameterIds: { layerHeight: "v".repeat(101) } }, "productionParameterIds.layerHeight"],
  ["PUT", "/ticket-model/x1/post-processing", { serviceIds: ids(101) }, "serviceIds"],
  ["PUT", "/ticket-model/x1/machining-strategy/s", { strategy: "roughing", toolIds: ids(101) }, "toolIds"],
  ["POST", "/ticket/x1/quote", { quantityOptions: times(1001, (index) => ({ ticketModelId: `p${index}`, quantities: [1] })) }, "quantityOptions"],
  ["PUT", "/ticket-quote/x1", { ...quote, lines: [{ ...line, ticketModelId: "p".repeat(101) }] }, "lines.0.ticketModelId"],
  ["PUT", "/ticket-quote/x1", { ...quote, number: "Q".repeat(101) }, "number"],
  ["POST", "/service-job", { name: "Job", technologyId: "fdm", ticketModelIds: ids(1001) }, "ticketModelIds"],
  ["PUT", "/service-job/x1/production/x2", { state: "in_production", producedQuantity: 1_000_001, scrappedQuantity: 0 }, "producedQuantity"],
  [
    "PUT",
    "/webhook-endpoint/x1",
    { url: "https://erp.example.com/hooks", events: ["*"], disabledReason: "r".repeat(4001) },
    "disabledReason"
  ]
]

for (const backend of backends) {
  layer(TestApp(backend), { timeout: 60_000, excludeTestServices: true })(`Input bounds (${backend})`, (it) => {
    it.effect("one value past a field's bound is a 400 naming the field, on REST and in an MCP tool's arguments", () =>
      Effect.gen(function*() {
        const client = yield* TestClient
        const { value: secret } = yield* client.createSecret(`bounds-${Math.random().toString(36).slice(2)}`)
        for (const [method, path, body, field] of CASES) {
          const where = `${method} ${path} ${field}`
          const reply = yield* client.call(method, `/v1${path}`, { secret, body })
          assert.strictEqual(reply.status, 400, `${where}: ${reply.text.slice(0, 300)}`)
          const error = reply.json() as Json
          assert.deepInclude(error, { code: 400, type: "ValidationError" }, where)
          assert.include((error.errors as Array<Json>).map((problem) => problem.path), field, `${where}: ${reply.text.slice(0, 300)}`)
        }

        // The same bound in a tool's arguments: a tool error naming the field.
        const answer = yield* Effect.promise(async () =>
          (await mcpToolCall(client.baseUrl, secret, "create_part", { ...part, serviceIds: ids(101) })).json() as Promise<Json>
        )
        assert.isTrue(answer.result.isError, JSON.stringify(answer))
        const failure = JSON.parse(answer.result.content[0].text) as Json
        assert.deepInclude(failure, { code: 400, type: "ValidationError" })
        assert.deepStrictEqual((failure.errors as Array<Json>).map((problem) => problem.path), ["serviceIds"])
      }))

    it.effect("the JSON-RPC envelope is bounded as the document says: a longer id, notification method or header is refused unrun", () =>
      Effect.gen(function*() {
        const client = yield* TestClient
        const { value: secret } = yield* client.createSecret(`bounds-${Math.random().toString(36).slice(2)}`)
        const headers = {
          authorization: secret,
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-protocol-version": MCP_VERSION
        }
        const meta = { "io.modelcontextprotocol/protocolVersion": MCP_VERSION, "io.modelcontextprotocol/clientCapabilities": {} }
        const post = (body: Json, extra: Record<string, string> = {}) =>
          Effect.map(
            client.call("POST", "/v1/mcp", { headers: { ...headers, ...extra }, body }),
            (reply) => ({ status: reply.status, answer: reply.json() as Json })
          )
        const list = (id: unknown) => ({ jsonrpc: "2.0", id, method: "tools/list", params: { _meta: meta } })

        // The longest string id is answered, echoed; one character more is no request id.
        const longest = yield* post(list("i".repeat(200)), { "mcp-method": "tools/list" })
        assert.strictEqual(longest.status, 200, JSON.stringify(longest.answer))
        assert.strictEqual(longest.answer.id, "i".repeat(200))
        const longer = yield* post(list("i".repeat(201)), { "mcp-method": "tools/list" })
        assert.strictEqual(longer.status, 400)
        assert.notProperty(longer.answer, "id")
        assert.strictEqual(longer.answer.error.code, -32600)
        assert.include(longer.answer.error.message, "at most 200 characters")

        // A notification is accepted; one whose method is longer than any is not a notification.
        const notification = yield* client.call("POST", "/v1/mcp", {
          headers: { ...headers, "mcp-method": "notifications/initialized" },
          body: { jsonrpc: "2.0", method: "notifications/initialized" }
        })
        assert.strictEqual(notification.status, 202)
        const method = `notifications/${"x".repeat(100)}`
        const long = yield* post({ jsonrpc: "2.0", method }, { "mcp-method": method })
        assert.strictEqual(long.status, 400)
        assert.strictEqual(long.answer.error.code, -32600)

        // A header longer than the document allows: refused with the request's id, the tool not run.
        for (const [name, limit] of [["Mcp-Method", 100], ["Mcp-Name", 2000]] as const) {
          const refused = yield* post(list(7), { "mcp-method": "tools/list", [name.toLowerCase()]: "x".repeat(limit + 1) })
          assert.strictEqual(refused.status, 400, name)
          assert.deepStrictEqual(refused.answer, {
            jsonrpc: "2.0",
            id: 7,
            error: { code: -32600, message: `Invalid Request: the ${name} header is longer than ${limit} characters` }
          })
        }
      }))
  })
}
