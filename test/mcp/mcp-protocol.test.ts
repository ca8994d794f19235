/**
 * POST /v1/mcp at the protocol level, over raw HTTP so that status codes and
 * bodies are exact: what the 2026-07-28 and 2025-11-25 texts say a server
 * answers to a request without an id, a notification, an unknown method, a
 * malformed `_meta`, a body that is not JSON or not JSON-RPC, a body in
 * another media type; and that discovery (`server/discover`, `initialize`)
 * advertises exactly the capabilities served. One backend: nothing here
 * depends on storage but whether a record was created.
 */
import { assert, layer } from "@effect/vitest"
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from "@modelcontextprotocol/client"
import { Client as LegacyClient } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport as LegacyTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { EmptyResultSchema } from "@modelcontextprotocol/sdk/types.js"
import { Effect } from "effect"
import { ADMIN_TOKEN, backends } from "../support/backends.ts"
import { ok } from "../support/http.ts"
import { TestApp, TestClient } from "../support/TestApp.ts"

const MODERN = "2026-07-28"
const LEGACY = "2025-11-25"
const META = { "io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {} }
const ACCEPT = "application/json, text/event-stream"

interface RawReply {
  readonly status: number
  readonly contentType: string | null
  readonly text: string
}

/** The headers a 2026-07-28 client sends with `method` (and `Mcp-Name` for a named target). */
const modernHeaders = (method: string, name?: string): Record<string, string> => ({
  "content-type": "application/json",
  accept: ACCEPT,
  "mcp-protocol-version": MODERN,
  "mcp-method": method,
  ...(name === undefined ? {} : { "mcp-name": name })
})

const LEGACY_HEADERS = { "content-type": "application/json", accept: ACCEPT, "mcp-protocol-version": LEGACY }

/** A 2026-07-28 JSON-RPC message of `method`: `_meta` as the transport sends it unless `params` brings its own. */
const modernBody = (method: string, params: Record<string, unknown> = {}, id?: unknown) =>
  JSON.stringify({ jsonrpc: "2.0", ...(id === undefined ? {} : { id }), method, params: { _meta: META, ...params } })

const legacyBody = (method: string, params: Record<string, unknown> = {}, id?: unknown) =>
  JSON.stringify({ jsonrpc: "2.0", ...(id === undefined ? {} : { id }), method, params })

/**
 * A JSON-RPC error answer, checked whole: the HTTP status, exactly the members
 * `jsonrpc`, `error` and (only when `id` is given) `id`, and an error of
 * `code`, a message and nothing but an optional `data`. Answers the error.
 */
const rpcError = (reply: RawReply, status: number, code: number, id?: string | number) => {
  assert.strictEqual(reply.status, status, reply.text)
  assert.strictEqual(reply.contentType, "application/json", reply.text)
  const answer = JSON.parse(reply.text)
  assert.sameMembers(Object.keys(answer), id === undefined ? ["jsonrpc", "error"] : ["jsonrpc", "id", "error"], reply.text)
  assert.strictEqual(answer.jsonrpc, "2.0")
  if (id !== undefined) assert.strictEqual(answer.id, id, reply.text)
  assert.strictEqual(answer.error.code, code, reply.text)
  assert.isString(answer.error.message)
  for (const key of Object.keys(answer.error)) assert.include(["code", "message", "data"], key, reply.text)
  return answer.error as { readonly code: number; readonly message: string; readonly data?: unknown }
}

/** The result of a JSON-RPC answer (plain JSON), after checking it is one for `id`. */
const rpcResult = (reply: RawReply, id: string | number) => {
  assert.strictEqual(reply.status, 200, reply.text)
  const answer = JSON.parse(reply.text)
  assert.strictEqual(answer.id, id, reply.text)
  assert.isDefined(answer.result, reply.text)
  return answer.result
}

/** A notification's answer: 202 and no body. */
const accepted = (reply: RawReply, what: string) => {
  assert.strictEqual(reply.status, 202, `${what}: ${reply.text}`)
  assert.strictEqual(reply.text, "", what)
}

layer(TestApp(backends[0]!), { timeout: 60_000, excludeTestServices: true })("MCP protocol over raw HTTP", (it) => {
  /** A fresh app: raw POSTs to /v1/mcp with its secret, REST calls, its metered operations, a project to make tickets in. */
  const setup = Effect.gen(function*() {
    const client = yield* TestClient
    const appId = `mcp-protocol-${Math.random().toString(36).slice(2)}`
    const { value } = yield* client.createSecret(appId)
    const post = (body: string, headers: Record<string, string>) =>
      Effect.promise(async (): Promise<RawReply> => {
        const response = await fetch(`${client.baseUrl}/v1/mcp`, {
          method: "POST",
          headers: { ...headers, authorization: `Bearer ${value}` },
          body,
          signal: AbortSignal.timeout(10_000)
        })
        return { status: response.status, contentType: response.headers.get("content-type"), text: await response.text() }
      })
    const rest = (method: string, path: string, body?: unknown) => client.call(method, `/v1${path}`, { secret: value, body })
    const metered = Effect.map(
      client.call("GET", `/api/v1/usage?appId=${appId}`, { headers: { "x-admin-token": ADMIN_TOKEN } }),
      (reply) => new Map((reply.json().byOperation as Array<{ operation: string; calls: number }>).map((row) => [row.operation, row.calls]))
    )
    const customer = ok(yield* rest("POST", "/customer", { name: "Acme", email: "buyer@acme.example" }), "customer")
    const project = ok(yield* rest("POST", "/project", { customerId: customer.id, name: "Gearbox" }), "project")
    /** Whether the app has a ticket at all: its first would be T-000001. */
    const hasTickets = Effect.map(rest("GET", "/ticket/lookup?identifier=T-000001"), (reply) => {
      assert.strictEqual(reply.status, 200, reply.text)
      return reply.text.length > 0 && reply.text !== "null"
    })
    return { client, secret: value, post, rest, metered, project, hasTickets, url: new URL(`${client.baseUrl}/v1/mcp`) }
  })

  it.effect("a request without an id is -32600 with HTTP 400 and no id, and runs nothing, in both revisions", () =>
    Effect.gen(function*() {
      const { hasTickets, metered, post, project, rest } = yield* setup
      const args = { name: "create_ticket", arguments: { projectId: project.id, name: "Never made" } }
      const modern = yield* post(modernBody("tools/call", args), modernHeaders("tools/call", "create_ticket"))
      rpcError(modern, 400, -32600)
      const legacy = yield* post(legacyBody("tools/call", args), LEGACY_HEADERS)
      rpcError(legacy, 400, -32600)
      rpcError(yield* post(modernBody("tools/list"), modernHeaders("tools/list")), 400, -32600)
      rpcError(yield* post(legacyBody("initialize", { protocolVersion: LEGACY, capabilities: {} }), LEGACY_HEADERS), 400, -32600)
      // Nothing ran: the app's first ticket is still to be made, and it is T-000001.
      assert.isFalse(yield* hasTickets)
      assert.strictEqual(ok(yield* rest("POST", "/ticket", { projectId: project.id, name: "First" }), "ticket").number, "T-000001")
      // Metered as what it is: an invalid request, not a tool call.
      const operations = yield* metered
      assert.strictEqual(operations.get("mcp.invalid"), 4, JSON.stringify([...operations]))
      assert.isUndefined(operations.get("mcp.create_ticket"))
    }))

  it.effect("notifications answer 202 with no body in both revisions, notifications/initialized in 2026-07-28 included", () =>
    Effect.gen(function*() {
      const { post } = yield* setup
      for (const method of ["notifications/initialized", "notifications/cancelled", "notifications/progress", "notifications/roots/list_changed"]) {
        accepted(yield* post(modernBody(method, { requestId: 1, progressToken: 1, progress: 1 }), modernHeaders(method)), `${MODERN} ${method}`)
        accepted(yield* post(legacyBody(method, { requestId: 1, progressToken: 1, progress: 1 }), LEGACY_HEADERS), `${LEGACY} ${method}`)
      }
      // The 2026-07-28 transport defines no headers for a notification: one without _meta or Mcp-Method is accepted too.
      accepted(
        yield* post(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }), { ...LEGACY_HEADERS, "mcp-protocol-version": MODERN }),
        "bare"
      )
      // A version the endpoint does not serve is refused, notification or not.
      const future = yield* post(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }), {
        ...LEGACY_HEADERS,
        "mcp-protocol-version": "2099-01-01"
      })
      assert.strictEqual(future.status, 400, future.text)
    }))

  it.effect("an unknown method is -32601: HTTP 404 in 2026-07-28, HTTP 200 in 2025-11-25 (where 404 means the session is gone)", () =>
    Effect.gen(function*() {
      const { post } = yield* setup
      const modern = rpcError(yield* post(modernBody("tools/frobnicate", {}, 5), modernHeaders("tools/frobnicate")), 404, -32601, 5)
      assert.strictEqual(modern.message, "Method not found: tools/frobnicate")
      // Methods of the other revision are unknown too.
      for (const method of ["ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe", "initialize"]) {
        rpcError(yield* post(modernBody(method, {}, "m"), modernHeaders(method)), 404, -32601, "m")
      }
      const legacy = rpcError(yield* post(legacyBody("tools/frobnicate", {}, 6), LEGACY_HEADERS), 200, -32601, 6)
      assert.strictEqual(legacy.message, "Method not found: tools/frobnicate")
      for (const method of ["server/discover", "subscriptions/listen", "resources/subscribe", "resources/unsubscribe"]) {
        rpcError(yield* post(legacyBody(method, { uri: "mfg://technology" }, "l"), LEGACY_HEADERS), 200, -32601, "l")
      }
    }))

  it.effect("the 2025-11-25 SDK client gets an unknown method as a JSON-RPC error, not a transport error, and goes on", () =>
    Effect.gen(function*() {
      const { secret, url } = yield* setup
      const client = new LegacyClient({ name: "mcp-protocol-test", version: "1.0.0" })
      yield* Effect.promise(() => client.connect(new LegacyTransport(url, { requestInit: { headers: { authorization: secret } } })))
      const refused = yield* Effect.promise(() =>
        client.request({ method: "tools/frobnicate", params: {} }, EmptyResultSchema).then(() => undefined, (error: unknown) => error)
      )
      assert.strictEqual((refused as { code?: unknown }).code, -32601, String(refused))
      assert.lengthOf((yield* Effect.promise(() => client.listTools())).tools, 9)
      yield* Effect.promise(() => client.close())
    }))

  it.effect("a malformed _meta is refused as a missing one is: HTTP 400, -32602, with the request's id", () =>
    Effect.gen(function*() {
      const { post } = yield* setup
      const malformed: ReadonlyArray<readonly [string, unknown]> = [
        ["missing", undefined],
        ["not an object", 5],
        ["client info a number", { ...META, "io.modelcontextprotocol/clientInfo": 5 }],
        ["client info without a version", { ...META, "io.modelcontextprotocol/clientInfo": { name: "c" } }],
        ["client capabilities a number", { ...META, "io.modelcontextprotocol/clientCapabilities": 5 }],
        ["no client capabilities", { "io.modelcontextprotocol/protocolVersion": MODERN }],
        ["an unknown log level", { ...META, "io.modelcontextprotocol/logLevel": "loud" }],
        ["a progress token of another type", { ...META, progressToken: { token: 1 } }]
      ]
      for (const [what, meta] of malformed) {
        for (const [method, params] of [["tools/list", {}], ["tools/call", { name: "lookup_ticket", arguments: { identifier: "T-1" } }]] as const) {
          const body = JSON.stringify({ jsonrpc: "2.0", id: what, method, params: { ...params, ...(meta === undefined ? {} : { _meta: meta }) } })
          const headers = modernHeaders(method, method === "tools/call" ? "lookup_ticket" : undefined)
          rpcError(yield* post(body, headers), 400, -32602, what)
        }
      }
    }))

  it.effect("a body that is not JSON is -32700 with HTTP 400 and no id; one that is not a JSON-RPC request -32600 with HTTP 400", () =>
    Effect.gen(function*() {
      const { post } = yield* setup
      const revisions = [[modernHeaders("tools/list"), { _meta: META }], [LEGACY_HEADERS, {}]] as const
      for (const [headers, params] of revisions) {
        const parse = yield* post("{\"jsonrpc\":\"2.0\",\"id\":1,", headers)
        rpcError(parse, 400, -32700)
        assert.strictEqual(parse.text, "{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32700,\"message\":\"Parse error\"}}")
        // An id that MCP does not allow (null, an object): not a request, and no id to echo.
        rpcError(yield* post(JSON.stringify({ jsonrpc: "2.0", id: null, method: "tools/list", params }), headers), 400, -32600)
        rpcError(yield* post(JSON.stringify({ jsonrpc: "2.0", id: { n: 1 }, method: "tools/list", params }), headers), 400, -32600)
        // No JSON-RPC version: not a request, but its id is known and echoed.
        rpcError(yield* post(JSON.stringify({ id: 8, method: "tools/list", params }), headers), 400, -32600, 8)
        // A batch (dropped from MCP in 2025-06-18).
        rpcError(yield* post(JSON.stringify([{ jsonrpc: "2.0", id: 1, method: "tools/list", params }]), headers), 400, -32600)
      }
    }))

  it.effect("every error the endpoint answers carries the request's id when it has one, and no member but code, message and data", () =>
    Effect.gen(function*() {
      const { post } = yield* setup
      const tool = { name: "lookup_ticket", arguments: { identifier: "T-1" } }
      // Header mismatch, unsupported version, missing metadata, unknown tool, invalid parameters: each with its id.
      rpcError(yield* post(modernBody("tools/list", {}, 21), { ...modernHeaders("tools/list"), "mcp-method": "tools/call" }), 400, -32020, 21)
      rpcError(yield* post(modernBody("tools/call", tool, 22), modernHeaders("tools/call", "list_parts")), 400, -32020, 22)
      const future = JSON.stringify({
        jsonrpc: "2.0",
        id: 23,
        method: "tools/list",
        params: { _meta: { ...META, "io.modelcontextprotocol/protocolVersion": "2099-01-01" } }
      })
      rpcError(yield* post(future, { ...modernHeaders("tools/list"), "mcp-protocol-version": "2099-01-01" }), 400, -32022, 23)
      rpcError(yield* post(modernBody("tools/call", { name: "drop_tables", arguments: {} }, 24), modernHeaders("tools/call", "drop_tables")), 200, -32602, 24)
      rpcError(
        yield* post(modernBody("tools/call", { name: "lookup_ticket", arguments: 5 }, 25), modernHeaders("tools/call", "lookup_ticket")),
        200,
        -32602,
        25
      )
      rpcError(yield* post(legacyBody("tools/call", { name: "drop_tables", arguments: {} }, 26), LEGACY_HEADERS), 200, -32602, 26)
      rpcError(yield* post(legacyBody("tools/call", { arguments: {} }, 27), LEGACY_HEADERS), 200, -32602, 27)
    }))

  it.effect("a body in another media type is refused (415) and runs nothing, 2025-11-25 as 2026-07-28", () =>
    Effect.gen(function*() {
      const { hasTickets, post, project } = yield* setup
      const args = { name: "create_ticket", arguments: { projectId: project.id, name: "Never made" } }
      for (const contentType of ["application/x-www-form-urlencoded", "text/plain"]) {
        const legacy = yield* post(legacyBody("tools/call", args, 1), { ...LEGACY_HEADERS, "content-type": contentType })
        assert.strictEqual(legacy.status, 415, legacy.text)
        const modern = yield* post(modernBody("tools/call", args, 2), { ...modernHeaders("tools/call", "create_ticket"), "content-type": contentType })
        assert.strictEqual(modern.status, 415, modern.text)
      }
      const { "content-type": _none, ...withoutContentType } = LEGACY_HEADERS
      assert.strictEqual((yield* post(legacyBody("tools/call", args, 3), withoutContentType)).status, 415)
      assert.isFalse(yield* hasTickets)
    }))

  it.effect("discovery advertises exactly what is served: no list changes, completions, resources and prompts as registered", () =>
    Effect.gen(function*() {
      const { post } = yield* setup
      const discovered = rpcResult(yield* post(modernBody("server/discover", {}, 1), modernHeaders("server/discover")), 1)
      const capabilities = discovered.capabilities
      assert.deepStrictEqual(capabilities.tools, { listChanged: false })
      // The prompt's arguments complete; McpServer advertises logging whatever is registered, and no log message is ever sent.
      assert.deepStrictEqual(capabilities.completions, {})
      assert.notProperty(capabilities, "logging")
      const completed = rpcResult(
        yield* post(
          modernBody("completion/complete", { ref: { type: "ref/prompt", name: "quote_a_part" }, argument: { name: "technologyId", value: "fd" } }, 2),
          modernHeaders("completion/complete")
        ),
        2
      )
      assert.deepStrictEqual(completed.completion.values, ["fdm"])
      // Each capability advertised is served, and each one not advertised answers -32601, in both revisions.
      const initialized = rpcResult(
        yield* post(legacyBody("initialize", { protocolVersion: LEGACY, capabilities: {}, clientInfo: { name: "raw", version: "1" } }, 3), LEGACY_HEADERS),
        3
      )
      assert.deepStrictEqual(initialized.capabilities.tools, { listChanged: false })
      assert.deepStrictEqual(initialized.capabilities.completions, {})
      // logging/setLevel is a 2025-11-25 method the endpoint answers.
      assert.deepStrictEqual(initialized.capabilities.logging, {})
      assert.deepStrictEqual(rpcResult(yield* post(legacyBody("logging/setLevel", { level: "info" }, 4), LEGACY_HEADERS), 4), {})
      const families = [["resources", "resources/list"], ["resources", "resources/templates/list"], ["prompts", "prompts/list"]] as const
      for (const [capability, method] of families) {
        assert.strictEqual(capability in initialized.capabilities, capability in capabilities, capability)
        const modern = yield* post(modernBody(method, {}, 5), modernHeaders(method))
        const legacy = yield* post(legacyBody(method, {}, 6), LEGACY_HEADERS)
        if (capability in capabilities) {
          assert.deepStrictEqual(capabilities[capability], { listChanged: false, ...(capability === "resources" ? { subscribe: false } : {}) })
          rpcResult(modern, 5)
          rpcResult(legacy, 6)
        } else {
          rpcError(modern, 404, -32601, 5)
          rpcError(legacy, 200, -32601, 6)
        }
      }
    }))

  it.effect("an initialize of any version but 2026-07-28 is served without a session: McpServer never opens one", () =>
    Effect.gen(function*() {
      const { client, secret } = yield* setup
      for (const version of [undefined, LEGACY, "2025-06-18"]) {
        const reply = yield* client.call("POST", "/v1/mcp", {
          secret,
          body: {
            jsonrpc: "2.0",
            id: 1,
            method: "initialize",
            params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } }
          },
          headers: { accept: ACCEPT, ...(version === undefined ? {} : { "mcp-protocol-version": version }) }
        })
        assert.strictEqual(reply.status, 200, `${version}: ${reply.text}`)
        assert.isNull(reply.headers.get("mcp-session-id"), String(version))
        assert.strictEqual(reply.json().result.protocolVersion, LEGACY)
      }
    }))

  it.effect("initialize sent with MCP-Protocol-Version 2026-07-28 is served as docs/mcp.md says: no session, only what is served", () =>
    Effect.gen(function*() {
      const { metered, post } = yield* setup
      const body = legacyBody("initialize", { protocolVersion: MODERN, capabilities: {}, clientInfo: { name: "raw", version: "1" } }, 1)
      const raw = yield* post(body, { ...LEGACY_HEADERS, "mcp-protocol-version": MODERN })
      const result = rpcResult(raw, 1)
      assert.strictEqual(result.protocolVersion, LEGACY)
      // Every capability listed is served: tools, resources, prompts, completions (the prompt's arguments), logging/setLevel;
      // nothing is pushed, so nothing lists changes or takes subscriptions.
      assert.deepStrictEqual(result.capabilities, {
        logging: {},
        tools: { listChanged: false },
        resources: { subscribe: false, listChanged: false },
        prompts: { listChanged: false },
        completions: {}
      })
      assert.strictEqual((yield* metered).get("mcp.initialize"), 1)
    }))

  it.effect("initialize without protocolVersion is -32602 naming it; a header and _meta both at 2025-11-25 are served", () =>
    Effect.gen(function*() {
      const { post } = yield* setup
      const missing = rpcError(
        yield* post(legacyBody("initialize", { capabilities: {}, clientInfo: { name: "raw", version: "1" } }, 2), LEGACY_HEADERS),
        200,
        -32602,
        2
      )
      assert.include(missing.message, "protocolVersion")
      const both = rpcResult(
        yield* post(legacyBody("tools/list", { _meta: { "io.modelcontextprotocol/protocolVersion": LEGACY } }, 3), LEGACY_HEADERS),
        3
      )
      assert.lengthOf(both.tools, 9)
      // The 2025-11-25 shape: no cache hints.
      assert.notProperty(both, "ttlMs")
    }))

  it.effect("subscriptions/listen is a 404 with -32601 in a JSON body, not an event stream; an id with a fraction is -32600", () =>
    Effect.gen(function*() {
      const { post } = yield* setup
      const listen = yield* post(modernBody("subscriptions/listen", { notifications: { toolsListChanged: true } }, 4), modernHeaders("subscriptions/listen"))
      rpcError(listen, 404, -32601, 4)
      rpcError(yield* post(modernBody("tools/list", {}, 1.5), modernHeaders("tools/list")), 400, -32600)
      rpcError(yield* post(legacyBody("tools/list", {}, 1.5), LEGACY_HEADERS), 400, -32600)
      rpcResult(yield* post(modernBody("tools/list", {}, 7), modernHeaders("tools/list")), 7)
    }))

  it.effect("a foreign Origin is 403 before the secret is judged (none, wrong or right), unmetered; 406 and 415 carry the request's id", () =>
    Effect.gen(function*() {
      const { metered, post, secret, url } = yield* setup
      const before = yield* metered
      for (const authorization of [undefined, "Bearer wrong.secret", `Bearer ${secret}`]) {
        const reply = yield* Effect.promise(async () => {
          const response = await fetch(url, {
            method: "POST",
            headers: { ...modernHeaders("tools/list"), origin: "https://evil.example", ...(authorization === undefined ? {} : { authorization }) },
            body: modernBody("tools/list", {}, 8)
          })
          return { status: response.status, contentType: response.headers.get("content-type"), text: await response.text() }
        })
        rpcError(reply, 403, -32600)
      }
      assert.deepStrictEqual(yield* metered, before)

      const notAcceptable = rpcError(yield* post(modernBody("tools/list", {}, 9), { ...modernHeaders("tools/list"), accept: "text/html" }), 406, -32600, 9)
      assert.include(notAcceptable.message, "text/event-stream")
      rpcError(yield* post(legacyBody("tools/list", {}, 10), { ...LEGACY_HEADERS, accept: "application/json" }), 406, -32600, 10)
      rpcError(yield* post(modernBody("tools/list", {}, 11), { ...modernHeaders("tools/list"), "content-type": "text/plain" }), 415, -32600, 11)
    }))

  it.effect("completion/complete: the prompt's arguments complete from the app's own records, through both official clients", () =>
    Effect.gen(function*() {
      const { project, rest, secret, url } = yield* setup
      const material = ok(yield* rest("POST", "/material", { name: "PETG", technologyId: "fdm" }), "material")
      const modern = new ModernClient({ name: "completions", version: "1.0.0" }, { versionNegotiation: { mode: { pin: MODERN } } })
      yield* Effect.promise(() => modern.connect(new ModernTransport(url, { requestInit: { headers: { authorization: `Bearer ${secret}` } } })))
      const legacy = new LegacyClient({ name: "completions-legacy", version: "1.0.0" })
      yield* Effect.promise(() => legacy.connect(new LegacyTransport(url, { requestInit: { headers: { authorization: secret } } })))
      const ref = { type: "ref/prompt" as const, name: "quote_a_part" }
      for (const client of [modern, legacy]) {
        const complete = (name: string, value: string, given: Record<string, string> = {}) =>
          Effect.map(
            Effect.promise(() => client.complete({ ref, argument: { name, value }, context: { arguments: given } })),
            (result) => result.completion
          )
        assert.deepStrictEqual((yield* complete("customerName", "ac")).values, ["Acme"])
        assert.deepStrictEqual((yield* complete("projectId", "gear", { customerName: "Acme" })).values, [project.id])
        assert.deepStrictEqual((yield* complete("projectId", "", { customerName: "Nobody" })).values, [])
        assert.include((yield* complete("technologyId", "f")).values, "fdm")
        assert.deepStrictEqual((yield* complete("materialId", "pet", { technologyId: "fdm" })).values, [material.id])
        assert.deepStrictEqual((yield* complete("materialId", "pet", { technologyId: "sla" })).values, [])
        const none = yield* complete("catalogueModelConfigurationId", "")
        assert.deepStrictEqual([none.values, none.total, none.hasMore], [[], 0, false])
      }
      yield* Effect.promise(() => modern.close())
      yield* Effect.promise(() => legacy.close())
    }))
})
