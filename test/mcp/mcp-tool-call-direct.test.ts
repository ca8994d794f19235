/**
 * Plain MCP tool calls answered in front of the router (McpToolCallDirect):
 * which requests its headers let it take, and, through HTTP, that each call
 * answers exactly what the router's MCP route answers for the same call
 * (status, headers, JSON-RPC answer, metering), whether it is plain or only
 * looks plain by its headers (the direct path then hands the body it read
 * on). The routed twin of each call sends the same
 * body chunked, without a Content-Length, which the direct path leaves to
 * the router.
 */
import { assert, describe, expect, it, layer } from "@effect/vitest"
import { Effect } from "effect"
import { Headers, HttpServerRequest } from "effect/http"
import { plainByHeaders } from "../../src/gateway/mcp/McpToolCallDirect.ts"
import { ADMIN_TOKEN, backends } from "../support/backends.ts"
import { MCP_VERSION } from "../support/mcp.ts"
import { TestApp, TestClient } from "../support/TestApp.ts"

const HEADERS: Record<string, string> = {
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
  "mcp-protocol-version": MCP_VERSION,
  "mcp-method": "tools/call",
  "mcp-name": "lookup_ticket",
  "content-length": "120"
}
const LIMIT = 1000

const request = (headers: Record<string, string>, method = "POST", path = "/v1/mcp") =>
  HttpServerRequest.fromWeb(new Request(`http://127.0.0.1${path}`, { method, headers })).modify({ headers: Headers.fromInput(headers) })

describe("McpToolCallDirect.plainByHeaders", () => {
  it("takes a POST to /v1/mcp with a plain tool call's headers and a declared body within the limit", () => {
    expect(plainByHeaders(request(HEADERS), LIMIT)).toBe(true)
    expect(plainByHeaders(request({ ...HEADERS, "content-length": String(LIMIT) }), LIMIT)).toBe(true)
    expect(plainByHeaders(request({ ...HEADERS, "mcp-name": "create_part", "idempotency-key": "k" }), LIMIT)).toBe(true)
  })

  it("leaves every other request to the bounds and the router", () => {
    const { "content-length": _, ...chunked } = HEADERS
    const variants: ReadonlyArray<readonly [string, Record<string, string>, string?, string?]> = [
      ["a GET", HEADERS, "GET"],
      ["a query string", HEADERS, "POST", "/v1/mcp?x=1"],
      ["another path", HEADERS, "POST", "/v1/mcp/"],
      ["no Content-Length (a chunked body)", chunked],
      ["a body over the limit", { ...HEADERS, "content-length": String(LIMIT + 1) }],
      ["a Content-Length that is no number", { ...HEADERS, "content-length": "1e3" }],
      ["an Origin (checked by McpAuth)", { ...HEADERS, origin: "http://localhost:3000" }],
      ["a session", { ...HEADERS, "mcp-session-id": "s" }],
      ["another protocol version", { ...HEADERS, "mcp-protocol-version": "2025-11-25" }],
      ["another method", { ...HEADERS, "mcp-method": "tools/list" }],
      ["no tool name", Object.fromEntries(Object.entries(HEADERS).filter(([name]) => name !== "mcp-name"))],
      ["an unknown tool", { ...HEADERS, "mcp-name": "drop_tables" }]
    ]
    for (const [what, headers, method, path] of variants) expect(plainByHeaders(request(headers, method, path), LIMIT), what).toBe(false)
  })
})

/** Headers whose values differ from one answer to the next. */
const PER_RESPONSE: ReadonlySet<string> = new Set(["date", "x-request-id", "content-length"])

interface Seen {
  readonly status: number
  readonly headers: ReadonlyArray<readonly [string, string]>
  readonly body: string
}

const META = { "io.modelcontextprotocol/protocolVersion": MCP_VERSION, "io.modelcontextprotocol/clientCapabilities": {} }

const toolCall = (name: string, args: unknown, meta: Record<string, unknown> = META, id: number | string = 1) =>
  JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args, _meta: meta } })

for (const backend of backends) {
  layer(TestApp(backend), { timeout: 60_000, excludeTestServices: true })(`MCP tool calls, direct and routed (${backend})`, (it) => {
    it.effect("answer the same: a read, a missing record, invalid arguments, a scope refused, the 401, a keyed write and its retry", () =>
      Effect.gen(function*() {
        const client = yield* TestClient
        const appId = `mcp-direct-${Math.random().toString(36).slice(2)}`
        const { value: secret } = yield* client.createSecret(appId)
        const { value: reader } = yield* client.createSecret(appId, undefined, { scopes: ["read"] })
        const customer = (yield* client.call("POST", "/v1/customer", { secret, body: { name: "Acme", email: "a@acme.example" } })).json()
        const project = (yield* client.call("POST", "/v1/project", { secret, body: { name: "P", customerId: customer.id } })).json()
        const ticket = (yield* client.call("POST", "/v1/ticket", { secret, body: { name: "T", projectId: project.id } })).json()

        /** One call, with its body as one piece (a Content-Length) or chunked (none); what a client sees of the answer. */
        const send = (name: string, body: string, chunked: boolean, authorization: string | null, extra: Record<string, string> = {}) =>
          Effect.promise(async (): Promise<Seen> => {
            const response = await fetch(`${client.baseUrl}/v1/mcp`, {
              method: "POST",
              headers: {
                ...(authorization === null ? {} : { authorization: `Bearer ${authorization}` }),
                "content-type": "application/json",
                accept: "application/json, text/event-stream",
                "mcp-protocol-version": MCP_VERSION,
                "mcp-method": "tools/call",
                "mcp-name": name,
                ...extra
              },
              ...(chunked
                ? { body: new Blob([body]).stream(), duplex: "half" }
                : { body })
            } as RequestInit)
            return {
              status: response.status,
              headers: [...response.headers].filter(([header]) => !PER_RESPONSE.has(header)),
              body: await response.text()
            }
          })
        /** The call both ways (`null`: without a secret): the same answer, and the direct one returned. */
        const bothWays = (name: string, body: string, authorization: string | null = secret, extra: Record<string, string> = {}) =>
          Effect.gen(function*() {
            const direct = yield* send(name, body, false, authorization, extra)
            const routed = yield* send(name, body, true, authorization, extra)
            assert.deepStrictEqual(direct, routed, `${name} ${body}`)
            return direct
          })

        const found = yield* bothWays("lookup_ticket", toolCall("lookup_ticket", { identifier: ticket.id }))
        assert.strictEqual(found.status, 200)
        assert.strictEqual(JSON.parse(found.body).result.structuredContent.id, ticket.id)
        const missing = JSON.parse((yield* bothWays("lookup_ticket", toolCall("lookup_ticket", { identifier: "no-such-ticket" }, META, "m"))).body)
        assert.strictEqual(missing.id, "m")
        // lookup_ticket is nullable: no such ticket is an answer, not an error.
        assert.isFalse(missing.result.isError)
        assert.strictEqual(missing.result.content[0].text, "null")
        const invalid = JSON.parse((yield* bothWays("lookup_ticket", toolCall("lookup_ticket", { identifier: ticket.id, extra: 1 }))).body)
        assert.isTrue(invalid.result.isError)
        assert.include(invalid.result.content[0].text, "extra")
        const refused = JSON.parse((yield* bothWays("create_ticket", toolCall("create_ticket", { projectId: project.id, name: "No" }), reader)).body)
        assert.isTrue(refused.result.isError)
        assert.include(refused.result.content[0].text, "InsufficientScope")
        assert.strictEqual((yield* bothWays("lookup_ticket", toolCall("lookup_ticket", { identifier: ticket.id }), null)).status, 401)
        assert.strictEqual((yield* bothWays("lookup_ticket", toolCall("lookup_ticket", { identifier: ticket.id }), `${secret}x`)).status, 401)

        // A keyed write: run once, directly; its retry under the same key, routed, is the same answer replayed.
        const write = toolCall("create_ticket", { projectId: project.id, name: "Keyed" })
        const key = { "idempotency-key": `direct-${appId}` }
        const first = yield* send("create_ticket", write, false, secret, key)
        const retried = yield* send("create_ticket", write, true, secret, key)
        assert.strictEqual(first.status, 200)
        const [created, replayed] = [JSON.parse(first.body).result, JSON.parse(retried.body).result]
        assert.isFalse(created.isError)
        assert.strictEqual(replayed.structuredContent.id, created.structuredContent.id)
        assert.isTrue(replayed._meta["io.mfg/idempotentReplayed"])

        const usage = (yield* client.call("GET", `/api/v1/usage?appId=${appId}`, { headers: { "x-admin-token": ADMIN_TOKEN } })).json()
        const calls = (operation: string) => usage.byOperation.find((row: { operation: string }) => row.operation === operation)?.calls
        assert.strictEqual(calls("mcp.lookup_ticket"), 2 * 3)
        assert.strictEqual(calls("mcp.create_ticket"), 2 + 2)
      }))

    it.effect("answer the same when only the headers are plain: another _meta, an unknown member, no JSON, a body nested too deep", () =>
      Effect.gen(function*() {
        const client = yield* TestClient
        const { value: secret } = yield* client.createSecret(`mcp-direct-odd-${Math.random().toString(36).slice(2)}`)
        const send = (body: string, chunked: boolean) =>
          Effect.promise(async () => {
            const response = await fetch(`${client.baseUrl}/v1/mcp`, {
              method: "POST",
              headers: {
                authorization: `Bearer ${secret}`,
                "content-type": "application/json",
                accept: "application/json, text/event-stream",
                "mcp-protocol-version": MCP_VERSION,
                "mcp-method": "tools/call",
                "mcp-name": "lookup_ticket"
              },
              ...(chunked ? { body: new Blob([body]).stream(), duplex: "half" } : { body })
            } as RequestInit)
            return { status: response.status, body: await response.text() }
          })
        const bodies: ReadonlyArray<readonly [string, string, number]> = [
          ["a progress token", toolCall("lookup_ticket", { identifier: "x" }, { ...META, progressToken: 1 }), 200],
          ["an unknown member", JSON.stringify({ ...JSON.parse(toolCall("lookup_ticket", { identifier: "x" })), extra: true }), 200],
          ["another tool than Mcp-Name", toolCall("list_parts", { ticketId: "x" }), 400],
          ["a fractional id", toolCall("lookup_ticket", { identifier: "x" }, META, 1.5 as never), 400],
          ["no JSON", "{\"jsonrpc\":", 400],
          ["a body nested too deep", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":${"[".repeat(70)}${"]".repeat(70)}}`, 400]
        ]
        for (const [what, body, status] of bodies) {
          const direct = yield* send(body, false)
          const routed = yield* send(body, true)
          assert.deepStrictEqual(direct, routed, what)
          assert.strictEqual(direct.status, status, `${what}: ${direct.body}`)
        }
      }))
  })
}
