/**
 * POST /v1/mcp: MCP 2026-07-28 (stateless) and 2025-11-25 over Streamable
 * HTTP, behind the same Incoming Secret and metering as the REST API. Real
 * clients: the official @modelcontextprotocol/client pinned to 2026-07-28 and
 * the legacy @modelcontextprotocol/sdk client (2025-11-25) list the tools and
 * run a quoting flow; raw HTTP checks the headers, status codes and errors.
 */
import { assert, layer } from "@effect/vitest"
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from "@modelcontextprotocol/client"
import { Client as LegacyClient } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport as LegacyTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { Effect } from "effect"
import { TOOL_SPECS } from "../../src/contract/mcp/tools.ts"
import { ADMIN_TOKEN, backends } from "../support/backends.ts"
import { ok, patch } from "../support/http.ts"
import { type Reply, TestApp, TestClient } from "../support/TestApp.ts"

const MODERN = "2026-07-28"
const LEGACY = "2025-11-25"
const TOOL_NAMES = [
  "list_ticket_quotes",
  "create_ticket_quote",
  "update_ticket_quote",
  "lookup_ticket",
  "create_ticket",
  "send_ticket_to_production",
  "list_parts",
  "create_part",
  "update_part"
]

const meta = { "io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {} }

/** A 2026-07-28 request as raw HTTP: body and the headers the transport requires. */
const modern = (method: string, params: Record<string, unknown> = {}, id: number | null = 1) => ({
  body: { jsonrpc: "2.0", ...(id === null ? {} : { id }), method, params: { ...params, _meta: meta } },
  headers: {
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": MODERN,
    "mcp-method": method,
    ...(typeof params.name === "string" ? { "mcp-name": params.name } : {})
  }
})

/** The JSON-RPC message of a reply, whether plain JSON or one SSE event. */
const message = (reply: Reply) => {
  const text = reply.text.trim()
  if (text.startsWith("data:") || text.startsWith("event:") || text.startsWith("id:")) {
    const data = text.split("\n").filter((line) => line.startsWith("data:")).map((line) => line.slice(5).trim()).filter((line) => line.length > 0)
    return JSON.parse(data[data.length - 1]!)
  }
  return JSON.parse(text)
}

interface ToolResult {
  readonly _meta?: Readonly<Record<string, unknown>>
  readonly isError?: boolean
  readonly structuredContent?: unknown
  readonly content: ReadonlyArray<{ readonly type: string; readonly text?: string }>
}

/** A tool call's JSON-RPC answer without what the engine assigns a new record (id, number, times, hence its tag), its text parsed. */
const withoutAssigned = (answer: { result: ToolResult }) => {
  const strip = (record: Record<string, unknown>) => {
    const { createdAt: _c, id: _i, number: _n, updatedAt: _u, ...rest } = record
    return rest
  }
  const result = answer.result
  const { "io.mfg/etag": etag, ...meta } = (result._meta ?? {}) as Record<string, unknown>
  assert.isString(etag, "a created record's tag")
  return {
    ...answer,
    result: {
      ...result,
      _meta: meta,
      structuredContent: strip(result.structuredContent as Record<string, unknown>),
      content: result.content.map((block) => ({ ...block, text: strip(JSON.parse(block.text!)) }))
    }
  }
}

/** The tool result's text content, parsed: the JSON the REST API answers. */
const textJson = (result: ToolResult) => {
  const text = result.content.find((block) => block.type === "text")?.text
  assert.isDefined(text)
  return JSON.parse(text!)
}

for (const backend of backends) {
  layer(TestApp(backend), { timeout: 60_000, excludeTestServices: true })(`MCP endpoint (${backend})`, (it) => {
    /** A fresh app with a customer, a project (in USD) and a material. */
    const setup = Effect.gen(function*() {
      const client = yield* TestClient
      const appId = `mcp-${Math.random().toString(36).slice(2)}`
      const { value } = yield* client.createSecret(appId)
      const rest = (method: string, path: string, body?: unknown) => client.call(method, `/v1${path}`, { secret: value, body })
      const mcp = (request: { body: unknown; headers: Record<string, string> }, secret: string | null = value) =>
        client.call("POST", "/v1/mcp", { secret: secret ?? undefined, body: request.body, headers: request.headers })
      const customer = ok(yield* rest("POST", "/customer", { name: "Acme", email: "buyer@acme.example" }), "customer")
      const project = ok(yield* rest("POST", "/project", { customerId: customer.id, name: "Gearbox", currencyId: "USD" }), "project")
      const material = ok(yield* rest("POST", "/material", { name: "PLA", technologyId: "fdm" }), "material")
      return { client, appId, secret: value, rest, mcp, project, material, url: new URL(`${client.baseUrl}/v1/mcp`) }
    })

    const usage = (appId: string) =>
      Effect.flatMap(TestClient, (client) => client.call("GET", `/api/v1/usage?appId=${appId}`, { headers: { "x-admin-token": ADMIN_TOKEN } })).pipe(
        Effect.map((reply) => new Map((reply.json().byOperation as Array<{ operation: string; calls: number }>).map((row) => [row.operation, row.calls])))
      )

    it.effect("the identical 401 for every MCP request without a valid secret, server/discover included", () =>
      Effect.gen(function*() {
        const { client, mcp } = yield* setup
        const expected = (yield* client.call("GET", "/v1/customer")).text
        for (const secret of [null, "nope", "Bearer x.y"]) {
          for (const request of [modern("server/discover"), modern("tools/list"), modern("tools/call", { name: "list_parts", arguments: {} })]) {
            const reply = yield* mcp(request, secret)
            assert.strictEqual(reply.status, 401, `${secret} ${reply.status} ${reply.text}`)
            assert.strictEqual(reply.text, expected)
            assert.strictEqual(reply.headers.get("www-authenticate"), "Bearer realm=\"v1\"")
          }
        }
        for (const method of ["GET", "DELETE"]) {
          const reply = yield* client.call(method, "/v1/mcp")
          assert.strictEqual(reply.status, 401)
          assert.strictEqual(reply.text, expected)
        }
      }))

    it.effect("2026-07-28 over raw HTTP: discover, tools/list with cache hints, header checks, status codes, error codes", () =>
      Effect.gen(function*() {
        const { client, secret, mcp } = yield* setup
        const discover = yield* mcp(modern("server/discover"))
        assert.strictEqual(discover.status, 200, discover.text)
        const discovered = message(discover).result
        const serverInfo = discovered._meta["io.modelcontextprotocol/serverInfo"]
        assert.strictEqual(serverInfo.name, "mfg-public-api")
        assert.strictEqual(serverInfo.version, "1.0.0")
        assert.include(discovered.supportedVersions, MODERN)
        assert.deepStrictEqual(discovered.capabilities.tools, { listChanged: false })
        assert.strictEqual(discovered.resultType, "complete")

        const list = message(yield* mcp(modern("tools/list"))).result
        assert.deepStrictEqual(list.tools.map((tool: { name: string }) => tool.name), TOOL_NAMES)
        assert.strictEqual(list.ttlMs, 300_000)
        // The tools the caller's secret may call (its scopes): private to it.
        assert.strictEqual(list.cacheScope, "private")
        const keys = Object.keys(list)
        assert.isBelow(keys.indexOf("ttlMs"), keys.indexOf("cacheScope"))
        for (const tool of list.tools) {
          assert.strictEqual(tool.inputSchema.type, "object", tool.name)
          assert.isDefined(tool.outputSchema, tool.name)
        }
        const createPart = list.tools.find((tool: { name: string }) => tool.name === "create_part")
        assert.includeMembers(createPart.inputSchema.required, ["ticketId", "quantity"])
        // With a model file the part's technology and material are required; a catalogue configuration supplies them.
        assert.deepStrictEqual(createPart.inputSchema.oneOf.map((branch: { required: Array<string> }) => branch.required), [
          ["modelEndpoint", "technologyId", "materialId"],
          ["catalogueModelConfigurationId"]
        ])
        const quote = list.tools.find((tool: { name: string }) => tool.name === "create_ticket_quote")
        assert.includeMembers(Object.keys(quote.inputSchema.properties), ["ticketId", "currencyId", "validDays", "notes"])

        // Header checks: missing version header, Mcp-Method mismatch, Mcp-Name mismatch: 400 with -32020.
        const noVersion = modern("tools/list")
        const { "mcp-protocol-version": _omitted, ...withoutVersion } = noVersion.headers
        const missing = yield* mcp({ body: noVersion.body, headers: withoutVersion })
        assert.strictEqual(missing.status, 400, missing.text)
        assert.strictEqual(message(missing).error.code, -32020)
        const wrongMethod = modern("tools/list")
        const mismatch = yield* mcp({ body: wrongMethod.body, headers: { ...wrongMethod.headers, "mcp-method": "tools/call" } })
        assert.strictEqual(mismatch.status, 400)
        assert.strictEqual(message(mismatch).error.code, -32020)
        const wrongName = modern("tools/call", { name: "list_parts", arguments: {} })
        const nameMismatch = yield* mcp({ body: wrongName.body, headers: { ...wrongName.headers, "mcp-name": "create_part" } })
        assert.strictEqual(nameMismatch.status, 400)
        assert.strictEqual(message(nameMismatch).error.code, -32020)

        // Unsupported protocol version: -32022.
        const future = modern("tools/list")
        const unsupported = yield* mcp({
          body: { ...future.body, params: { _meta: { ...meta, "io.modelcontextprotocol/protocolVersion": "2099-01-01" } } },
          headers: { ...future.headers, "mcp-protocol-version": "2099-01-01" }
        })
        assert.strictEqual(unsupported.status, 400)
        assert.strictEqual(message(unsupported).error.code, -32022)

        // Missing client capabilities metadata: -32602 (invalid params).
        const bare = modern("tools/list")
        const noMeta = yield* mcp({ body: { ...bare.body, params: {} }, headers: bare.headers })
        assert.strictEqual(noMeta.status, 400)
        assert.strictEqual(message(noMeta).error.code, -32602)

        // Unknown method: 404 with -32601; unknown tool: -32602.
        const unknownMethod = yield* mcp(modern("tools/frobnicate"))
        assert.strictEqual(unknownMethod.status, 404)
        assert.strictEqual(message(unknownMethod).error.code, -32601)
        const unknownTool = yield* mcp(modern("tools/call", { name: "delete_everything", arguments: {} }))
        assert.strictEqual(message(unknownTool).error.code, -32602)

        // A notification: 202, no body; a request without an id: 400 with -32600 (test/mcp/mcp-protocol.test.ts has the rest).
        const notification = yield* mcp(modern("notifications/cancelled", { requestId: 7 }, null))
        assert.strictEqual(notification.status, 202, notification.text)
        assert.strictEqual(notification.text, "")
        const withoutId = yield* mcp(modern("tools/list", {}, null))
        assert.strictEqual(withoutId.status, 400, withoutId.text)
        assert.strictEqual(message(withoutId).error.code, -32600)

        // GET and DELETE: 405.
        for (const method of ["GET", "DELETE"]) {
          const reply = yield* client.call(method, "/v1/mcp", { secret })
          assert.strictEqual(reply.status, 405, method)
        }

        // A browser Origin that is not allowed: 403 (DNS rebinding protection).
        const fromBrowser = modern("tools/list")
        const forbidden = yield* mcp({ body: fromBrowser.body, headers: { ...fromBrowser.headers, origin: "http://evil.example" } })
        assert.strictEqual(forbidden.status, 403)
      }))

    it.effect("2025-11-25 over raw HTTP: initialize without a session, notifications 202, results in the 2025-11-25 shape", () =>
      Effect.gen(function*() {
        const { mcp } = yield* setup
        const legacy = (method: string, params: Record<string, unknown> = {}, id: number | null = 1, version: string | null = LEGACY) => ({
          body: { jsonrpc: "2.0", ...(id === null ? {} : { id }), method, params },
          headers: { accept: "application/json, text/event-stream", ...(version === null ? {} : { "mcp-protocol-version": version }) }
        })
        const initialize = yield* mcp(legacy(
          "initialize",
          {
            protocolVersion: LEGACY,
            capabilities: {},
            clientInfo: { name: "raw", version: "1" }
          },
          1,
          null
        ))
        assert.strictEqual(initialize.status, 200, initialize.text)
        assert.isNull(initialize.headers.get("mcp-session-id"))
        const initialized = message(initialize).result
        assert.strictEqual(initialized.protocolVersion, LEGACY)
        assert.strictEqual(initialized.serverInfo.name, "mfg-public-api")
        assert.deepStrictEqual(initialized.capabilities.tools, { listChanged: false })
        assert.strictEqual((yield* mcp(legacy("notifications/initialized", {}, null))).status, 202)
        assert.deepStrictEqual(message(yield* mcp(legacy("ping"))).result, {})
        const list = message(yield* mcp(legacy("tools/list"))).result
        assert.deepStrictEqual(list.tools.map((tool: { name: string }) => tool.name), TOOL_NAMES)
        assert.isUndefined(list.ttlMs)
        assert.isUndefined(list.resultType)
        for (const tool of list.tools) {
          // 2025-11-25 output schemas are objects: the list tools (arrays) have none there.
          if (tool.outputSchema !== undefined) assert.strictEqual(tool.outputSchema.type, "object", tool.name)
        }
        const parts = message(yield* mcp(legacy("tools/call", { name: "list_parts", arguments: {} }))).result
        assert.isUndefined(parts.structuredContent)
        assert.deepStrictEqual(textJson(parts), [])
      }))

    it.effect("Origin: a loopback page calling a loopback host passes; any other origin is 403", () =>
      Effect.gen(function*() {
        const { client, mcp } = yield* setup
        const port = new URL(client.baseUrl).port
        const request = modern("tools/list")
        const same = yield* mcp({ body: request.body, headers: { ...request.headers, origin: `http://127.0.0.1:${port}` } })
        assert.strictEqual(same.status, 200, same.text)
        assert.lengthOf(message(same).result.tools, 9)
        for (const origin of [`http://127.0.0.1:${Number(port) + 1}`, "http://localhost.evil.example", "null"]) {
          const reply = yield* mcp({ body: request.body, headers: { ...request.headers, origin } })
          assert.strictEqual(reply.status, 403, origin)
        }
      }))

    it.effect("invalid arguments and engine errors are tool errors (isError) with code, message and type", () =>
      Effect.gen(function*() {
        const { material, mcp, project, rest } = yield* setup
        const ticket = ok(yield* rest("POST", "/ticket", { projectId: project.id, name: "Errors" }), "ticket")
        const call = (name: string, args: unknown) =>
          Effect.map(mcp(modern("tools/call", { name, arguments: args })), (reply) => {
            assert.strictEqual(reply.status, 200, reply.text)
            return message(reply).result as ToolResult
          })

        const missing = yield* call("create_part", {
          ticketId: ticket.id,
          modelEndpoint: { url: "https://files.example/a.stl" },
          technologyId: "fdm",
          quantity: 1
        })
        assert.isTrue(missing.isError)
        const missingBody = textJson(missing)
        assert.strictEqual(missingBody.code, 400)
        assert.include(missingBody.message, "\"materialId\"")
        assert.strictEqual(missingBody.type, "MissingField")

        // Every problem at once, as the REST 400 lists them: unknown, missing and invalid arguments together.
        const many = textJson(yield* call("create_part", { technologyId: "fdm", quantity: "two", colour: "red" }))
        assert.strictEqual(many.code, 400)
        assert.sameMembers(many.errors.map((problem: { path: string }) => problem.path), ["colour", "ticketId", "quantity"], JSON.stringify(many))

        const wrongType = yield* call("create_part", {
          ticketId: ticket.id,
          technologyId: "fdm",
          materialId: material.id,
          quantity: "two",
          modelEndpoint: { url: "https://files.example/a.stl" }
        })
        assert.isTrue(wrongType.isError)
        assert.include(textJson(wrongType).message, "\"quantity\"")

        const unknown = yield* call("list_parts", { colour: "red" })
        assert.isTrue(unknown.isError)
        assert.include(textJson(unknown).message, "\"colour\"")

        // The engine's 404, as the REST API answers it.
        const restMissing = yield* rest("POST", "/ticket/nope/quote", {})
        const engine = yield* call("create_ticket_quote", { ticketId: "nope" })
        assert.isTrue(engine.isError)
        assert.deepStrictEqual(textJson(engine), restMissing.json())

        // Lookup of a missing ticket: the REST empty 200 is null.
        const none = yield* call("lookup_ticket", { identifier: "no-such-ticket" })
        assert.notStrictEqual(none.isError, true)
        assert.isNull(none.structuredContent)
      }))

    it.effect("the engine's rules hold through the tools: a refused move is a tool error naming the state or field, as over REST", () =>
      Effect.gen(function*() {
        const { appId, material, mcp, project, rest } = yield* setup
        const call = (name: string, args: unknown) =>
          Effect.map(mcp(modern("tools/call", { name, arguments: args })), (reply) => {
            assert.strictEqual(reply.status, 200, reply.text)
            return message(reply).result as ToolResult
          })
        /** The tool's error: the REST error body, with the status, type and names expected. */
        const toolError = (result: ToolResult, code: number, type: string, ...names: ReadonlyArray<string>) => {
          assert.isTrue(result.isError, JSON.stringify(result.content))
          const body = textJson(result)
          assert.strictEqual(body.code, code, body.message)
          assert.strictEqual(body.type, type, body.message)
          for (const name of names) assert.include(body.message, name)
          return body
        }
        const ticket = ok(yield* rest("POST", "/ticket", { projectId: project.id, name: "Rules" }), "ticket")
        const partInput = {
          ticketId: ticket.id,
          modelEndpoint: { url: "https://files.example/m.stl" },
          technologyId: "fdm",
          materialId: material.id,
          quantity: 2
        }
        const part = textJson(yield* call("create_part", partInput))
        yield* patch("ticketModel", appId, part.id, { unitPrice: 12.5, totalPrice: 25 })

        // A draft ticket is not sent to production: it needs its quote accepted first.
        toolError(yield* call("send_ticket_to_production", { id: ticket.id }), 409, "Conflict", ticket.number, "is draft")

        const quote = textJson(yield* call("create_ticket_quote", { ticketId: ticket.id }))
        const { currencyId, lines, validUntil } = quote
        const emptied = toolError(
          yield* call("update_ticket_quote", { id: quote.id, ticketId: ticket.id, currencyId, validUntil, lines: [], state: "sent" }),
          422,
          "ValidationError",
          "lines"
        )
        assert.deepStrictEqual(
          emptied,
          (yield* rest("PUT", `/ticket-quote/${quote.id}`, { ticketId: ticket.id, currencyId, validUntil, lines: [], state: "sent" })).json()
        )
        const accepted = { id: quote.id, ticketId: ticket.id, currencyId, validUntil, lines, state: "accepted" }
        assert.strictEqual(textJson(yield* call("update_ticket_quote", accepted)).state, "accepted")
        toolError(yield* call("update_ticket_quote", { ...accepted, state: "sent" }), 409, "Conflict", quote.number, "is accepted")
        toolError(yield* call("create_part", partInput), 409, "Conflict", ticket.number, "is accepted")
        toolError(yield* call("update_part", { id: part.id, ...partInput, quantity: 5 }), 409, "Conflict", ticket.number, "is accepted")
        toolError(yield* call("create_ticket_quote", { ticketId: ticket.id }), 409, "Conflict", ticket.number, "is accepted")
      }))

    it.effect("a plain tools/call answered without McpServer answers exactly as McpServer does", () =>
      Effect.gen(function*() {
        const { material, mcp, project, rest } = yield* setup
        const ticket = ok(yield* rest("POST", "/ticket", { projectId: project.id, name: "Twins" }), "ticket")
        // The plain request takes the direct path (see McpDirect); one more Accept type sends the same request to McpServer.
        const both = (name: string, args: unknown, creates = false) =>
          Effect.gen(function*() {
            const plain = modern("tools/call", { name, arguments: args })
            const direct = yield* mcp(plain)
            const served = yield* mcp({ ...plain, headers: { ...plain.headers, accept: `${plain.headers.accept}, application/x-ndjson` } })
            assert.strictEqual(direct.status, served.status, name)
            assert.strictEqual(direct.headers.get("content-type"), served.headers.get("content-type"), name)
            // A create makes two records: the same answer but for what the engine assigns each.
            const same = (reply: Reply) => creates ? withoutAssigned(message(reply)) : message(reply)
            assert.deepStrictEqual(same(direct), same(served), `${name}: ${direct.text} vs ${served.text}`)
            // Byte for byte what serializing the message writes: the structured content written in place from its text.
            assert.strictEqual(direct.text, JSON.stringify(JSON.parse(direct.text)), name)
            return message(direct)
          })
        const found = yield* both("lookup_ticket", { identifier: ticket.id })
        assert.strictEqual(found.result.structuredContent.id, ticket.id)
        yield* both("lookup_ticket", { identifier: "no-such-ticket" })
        yield* both("list_parts", { ticketId: ticket.id })
        yield* both("list_parts", { colour: "red" })
        yield* both("create_part", { ticketId: ticket.id, technologyId: "fdm", quantity: 1 })
        yield* both("create_part", { ticketId: ticket.id, technologyId: "fdm", materialId: material.id, quantity: "two" })
        yield* both("create_ticket_quote", { ticketId: "nope" })
        yield* both("create_ticket", { projectId: project.id, name: "Made twice, once by each path" }, true)
      }))

    it.effect("the official client pinned to 2026-07-28 lists the tools and runs a quoting flow; metered per tool", () =>
      Effect.gen(function*() {
        const { appId, material, project, rest, secret, url } = yield* setup
        const client = new ModernClient({ name: "mcp-test", version: "1.0.0" }, { versionNegotiation: { mode: { pin: MODERN } } })
        yield* Effect.promise(() => client.connect(new ModernTransport(url, { requestInit: { headers: { authorization: `Bearer ${secret}` } } })))
        yield* listAndQuote(client, { appId, material, project, rest })
        const metered = yield* usage(appId)
        for (const tool of ["create_ticket", "create_part", "list_parts", "create_ticket_quote", "send_ticket_to_production", "lookup_ticket"]) {
          assert.strictEqual(metered.get(`mcp.${tool}`), 1, tool)
        }
        assert.isAtLeast(metered.get("mcp.tools/list") ?? 0, 1)
      }))

    it.effect("the legacy SDK client (2025-11-25) initializes without a session, lists the tools and runs a quoting flow", () =>
      Effect.gen(function*() {
        const { appId, material, project, rest, secret, url } = yield* setup
        const client = new LegacyClient({ name: "mcp-legacy-test", version: "1.0.0" })
        const transport = new LegacyTransport(url, { requestInit: { headers: { authorization: secret } } })
        yield* Effect.promise(() => client.connect(transport))
        assert.strictEqual(transport.protocolVersion, LEGACY)
        assert.isUndefined(transport.sessionId)
        assert.strictEqual(client.getServerVersion()?.name, "mfg-public-api")
        yield* listAndQuote(client, { appId, material, project, rest })
        const metered = yield* usage(appId)
        assert.strictEqual(metered.get("mcp.initialize"), 1)
        assert.strictEqual(metered.get("mcp.create_ticket"), 1)
      }))

    it.effect("every tool answers what its REST endpoint answers", () =>
      Effect.gen(function*() {
        assert.deepStrictEqual(TOOL_SPECS.map((spec) => spec.name), TOOL_NAMES)
        const { material, mcp, project, rest } = yield* setup
        const call = (name: string, args: Record<string, unknown>) =>
          Effect.map(mcp(modern("tools/call", { name, arguments: args })), (reply) => {
            const result = message(reply).result as ToolResult
            assert.notStrictEqual(result.isError, true, `${name}: ${JSON.stringify(result.content)}`)
            assert.deepStrictEqual(textJson(result), result.structuredContent)
            return result.structuredContent as any
          })
        const ticket = yield* call("create_ticket", { projectId: project.id, name: "Same" })
        assert.deepStrictEqual(ok(yield* rest("GET", `/ticket/lookup?identifier=${ticket.id}`), "lookup"), ticket)
        assert.deepStrictEqual(yield* call("lookup_ticket", { identifier: ticket.number }), ticket)
        const partInput = {
          ticketId: ticket.id,
          modelEndpoint: { url: "https://files.example/m.stl" },
          technologyId: "fdm",
          materialId: material.id,
          quantity: 2
        }
        const part = yield* call("create_part", partInput)
        assert.deepStrictEqual(yield* call("list_parts", { ticketId: [ticket.id] }), ok(yield* rest("GET", `/ticket-model?ticketId=${ticket.id}`), "list"))
        const updated = yield* call("update_part", { id: part.id, ...partInput, quantity: 5 })
        assert.strictEqual(updated.quantity, 5)
        assert.deepStrictEqual(ok(yield* rest("GET", `/ticket-model/${part.id}`), "get"), updated)
        const item = ok(yield* rest("POST", "/item", { ticketId: ticket.id, name: "Packaging", quantity: 2, unitPrice: 3 }), "item")
        assert.isDefined(item.id)
        // A part on a placeholder host has no geometry, so no price: create_ticket_quote is the engine's 409, as over REST.
        const unpriced = message(yield* mcp(modern("tools/call", { name: "create_ticket_quote", arguments: { ticketId: ticket.id } }))).result
        assert.isTrue(unpriced.isError)
        assert.deepStrictEqual(textJson(unpriced), (yield* rest("POST", `/ticket/${ticket.id}/quote`, {})).json())
        yield* rest("DELETE", `/ticket-model/${part.id}`)
        const quote = yield* call("create_ticket_quote", { ticketId: ticket.id })
        assert.deepStrictEqual(
          yield* call("list_ticket_quotes", { ticketId: [ticket.id] }),
          ok(yield* rest("GET", `/ticket-quote?ticketId=${ticket.id}`), "quotes")
        )
        const { ticketId, currencyId, state, validUntil, lines } = quote
        const replaced = yield* call("update_ticket_quote", { id: quote.id, ticketId, currencyId, state, validUntil, lines, notes: "Valid with drawing rev B" })
        assert.strictEqual(replaced.notes, "Valid with drawing rev B")
        assert.deepStrictEqual(ok(yield* rest("GET", `/ticket-quote/${quote.id}`), "quote"), replaced)
      }))
  })
}

/** What both official clients offer: list the tools, call one, close. */
interface ToolClient {
  readonly listTools: () => Promise<{ readonly tools: ReadonlyArray<{ readonly name: string }> }>
  readonly callTool: (request: { name: string; arguments: Record<string, unknown> }) => Promise<unknown>
  readonly close: () => Promise<void>
}

/** With a connected client: the 9 tools are listed, then the quoting flow runs through them; the client is closed. */
const listAndQuote = (client: ToolClient, context: Parameters<typeof quotingFlow>[1]) =>
  Effect.gen(function*() {
    const tools = yield* Effect.promise(() => client.listTools())
    assert.deepStrictEqual(tools.tools.map((tool) => tool.name), TOOL_NAMES)
    const call = (name: string, args: Record<string, unknown>) =>
      Effect.promise(() => client.callTool({ name, arguments: args }) as Promise<ToolResult>).pipe(
        Effect.tap((result) => Effect.sync(() => assert.notStrictEqual(result.isError, true, `${name}: ${JSON.stringify(result.content)}`)))
      )
    yield* quotingFlow(call, context)
  }).pipe(Effect.ensuring(Effect.promise(() => client.close())))

/** create_ticket, create_part, list_parts, (price the part), create_ticket_quote, update_ticket_quote (accepted), send_ticket_to_production. */
const quotingFlow = (
  call: (name: string, args: Record<string, unknown>) => Effect.Effect<ToolResult>,
  context: {
    readonly appId: string
    readonly material: { readonly id: string }
    readonly project: { readonly id: string }
    readonly rest: (method: string, path: string, body?: unknown) => Effect.Effect<Reply, never, never>
  }
) =>
  Effect.gen(function*() {
    const { appId, material, project, rest } = context
    const ticket = (yield* call("create_ticket", { projectId: project.id, name: "Prototype run" })).structuredContent as { id: string; number: string }
    assert.isString(ticket.id)
    const found = yield* call("lookup_ticket", { identifier: ticket.number })
    assert.deepStrictEqual(found.structuredContent, ticket)
    const part = (yield* call("create_part", {
      ticketId: ticket.id,
      modelEndpoint: { url: "https://files.example/models/bracket.stl" },
      technologyId: "fdm",
      materialId: material.id,
      quantity: 2
    })).structuredContent as { id: string }
    const parts = yield* call("list_parts", { ticketId: [ticket.id] })
    assert.deepStrictEqual(textJson(parts).map((p: { id: string }) => p.id), [part.id])
    // Pricing is not there yet: give the part the price pricing would set, as the REST suite does.
    yield* patch("ticketModel", appId, part.id, { unitPrice: 12.5, totalPrice: 25 })
    const quote = textJson(yield* call("create_ticket_quote", { ticketId: ticket.id }))
    assert.strictEqual(quote.ticketId, ticket.id)
    assert.deepStrictEqual(quote, ok(yield* rest("GET", `/ticket-quote/${quote.id}`), "quote"))
    // The customer accepts: the quote as read, with state "accepted"; the ticket is accepted with it.
    const { currencyId, lines, validUntil } = quote
    const accepted = textJson(yield* call("update_ticket_quote", { id: quote.id, ticketId: ticket.id, currencyId, validUntil, lines, state: "accepted" }))
    assert.strictEqual(accepted.state, "accepted")
    const jobs = textJson(yield* call("send_ticket_to_production", { id: ticket.id }))
    assert.isAbove(jobs.length, 0)
  })
