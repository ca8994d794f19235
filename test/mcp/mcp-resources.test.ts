/**
 * The MCP resources and the `quote_a_part` prompt over POST /v1/mcp, as a
 * client sees them: raw HTTP for the exact lists, contents, cache hints and
 * errors; the legacy SDK client (2025-11-25) for the same through the
 * sessionless path. Each resource must read what its REST list answers, for
 * the caller's app only, and every read is metered.
 */
import { assert, layer } from "@effect/vitest"
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from "@modelcontextprotocol/client"
import { Client as LegacyClient } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport as LegacyTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { Effect } from "effect"
import { ADMIN_TOKEN, backends } from "../support/backends.ts"
import { ok } from "../support/http.ts"
import { type Reply, TestApp, TestClient } from "../support/TestApp.ts"

const MODERN = "2026-07-28"
const meta = { "io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {} }

/** The resources an agent reads, by URI, with the REST list each one reads and its cache hint. */
const RESOURCES = [
  { uri: "mfg://technology", rest: "/technology", template: "mfg://technology{?name,limit,offset}", ttlMs: 3_600_000, cacheScope: "public" },
  { uri: "mfg://material", rest: "/material", template: "mfg://material{?technologyId,limit,offset}", ttlMs: 300_000, cacheScope: "private" },
  { uri: "mfg://colour", rest: "/colour", template: "mfg://colour{?limit,offset}", ttlMs: 3_600_000, cacheScope: "public" },
  {
    uri: "mfg://production-parameter-field",
    rest: "/production-parameter-field",
    template: "mfg://production-parameter-field{?technologyId,limit,offset}",
    ttlMs: 3_600_000,
    cacheScope: "public"
  },
  {
    uri: "mfg://post-processing-service",
    rest: "/service",
    template: "mfg://post-processing-service{?limit,offset}",
    ttlMs: 3_600_000,
    cacheScope: "public"
  },
  { uri: "mfg://currency", rest: "/currency", template: "mfg://currency{?code,limit,offset}", ttlMs: 300_000, cacheScope: "private" },
  {
    uri: "mfg://catalogue-model",
    rest: "/catalogue-model",
    template: "mfg://catalogue-model{?catalogueId,limit,offset}",
    ttlMs: 300_000,
    cacheScope: "private"
  },
  {
    uri: "mfg://customer",
    rest: "/customer",
    template: "mfg://customer{?name,email,externalReference,limit,offset}",
    ttlMs: 30_000,
    cacheScope: "private"
  },
  { uri: "mfg://project", rest: "/project", template: "mfg://project{?customerId,externalReference,name,limit,offset}", ttlMs: 30_000, cacheScope: "private" }
] as const

/**
 * Every resource listed: the above, then the app's event feed (test/mcp/mcp-events.test.ts reads it) and its
 * request log (test/rest/request-log.test.ts).
 */
const LISTED = [
  ...RESOURCES,
  { uri: "mfg://event", template: "mfg://event{?type,requestId,limit,offset}" },
  {
    uri: "mfg://request-log",
    template: "mfg://request-log{?requestId,operation,status,secretId,createdAt,createdAt%5Bfrom%5D,createdAt%5Bto%5D,limit,offset}"
  }
]

/** A 2026-07-28 request as raw HTTP: the body and the headers the transport sends. */
const modern = (method: string, params: Record<string, unknown> = {}) => {
  const name = method === "resources/read" ? params.uri : params.name
  return {
    body: { jsonrpc: "2.0", id: 1, method, params: { ...params, _meta: meta } },
    headers: {
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": MODERN,
      "mcp-method": method,
      ...(typeof name === "string" ? { "mcp-name": name } : {})
    }
  }
}

interface ReadResult {
  readonly ttlMs: number
  readonly cacheScope: string
  readonly contents: ReadonlyArray<{ readonly uri: string; readonly mimeType: string; readonly text: string }>
}

interface Page {
  readonly items: ReadonlyArray<any>
  readonly total: number
  readonly offset: number
  readonly limit: number
  readonly next?: string
}

for (const backend of backends) {
  layer(TestApp(backend), { timeout: 60_000, excludeTestServices: true })(`MCP resources and prompts (${backend})`, (it) => {
    /** A fresh app: `rest` calls /v1 and `rpc` /v1/mcp with its secret (`rpc` answers the JSON-RPC message). */
    const app = (prefix: string) =>
      Effect.gen(function*() {
        const client = yield* TestClient
        const appId = `${prefix}-${Math.random().toString(36).slice(2)}`
        const { value } = yield* client.createSecret(appId)
        const rest = (method: string, path: string, body?: unknown) => client.call(method, `/v1${path}`, { secret: value, body })
        /** A raw POST with the app's secret, another (`"nope"`) or none (`null`). */
        const post = (request: { body: unknown; headers: Record<string, string> }, secret: string | null = value) =>
          client.call("POST", "/v1/mcp", { secret: secret ?? undefined, body: request.body, headers: request.headers })
        const rpc = (method: string, params: Record<string, unknown> = {}) =>
          Effect.map(post(modern(method, params)), (reply) => {
            assert.strictEqual(reply.headers.get("content-type"), "application/json", reply.text)
            return reply.json() as { result?: any; error?: { code: number; message: string; data?: any } }
          })
        /** A successful read: the result, and its one content parsed. */
        const read = (uri: string) =>
          Effect.map(rpc("resources/read", { uri }), (answer) => {
            assert.isDefined(answer.result, `${uri}: ${JSON.stringify(answer.error)}`)
            const result = answer.result as ReadResult
            assert.lengthOf(result.contents, 1)
            assert.strictEqual(result.contents[0]!.uri, uri)
            assert.strictEqual(result.contents[0]!.mimeType, "application/json")
            return { result, page: JSON.parse(result.contents[0]!.text) as Page }
          })
        const invalid = (uri: string) =>
          Effect.map(rpc("resources/read", { uri }), (answer) => {
            assert.isDefined(answer.error, `${uri}: ${JSON.stringify(answer.result)}`)
            assert.strictEqual(answer.error!.code, -32602, uri)
            return answer.error!
          })
        return { client, appId, secret: value, rest, post, rpc, read, invalid }
      })

    const usage = (appId: string) =>
      Effect.flatMap(TestClient, (client) => client.call("GET", `/api/v1/usage?appId=${appId}`, { headers: { "x-admin-token": ADMIN_TOKEN } })).pipe(
        Effect.map((reply) => new Map((reply.json().byOperation as Array<{ operation: string; calls: number }>).map((row) => [row.operation, row.calls])))
      )

    it.effect("the lists name every resource and template and the prompt; discovery and prompts are public, the lists private", () =>
      Effect.gen(function*() {
        const { rpc } = yield* app("mcp-lists")
        const discovered = (yield* rpc("server/discover")).result
        assert.isDefined(discovered.capabilities.resources)
        assert.isDefined(discovered.capabilities.prompts)
        assert.include(discovered.instructions, "quote_a_part")

        const resources = (yield* rpc("resources/list")).result
        assert.deepStrictEqual(resources.resources.map((resource: { uri: string }) => resource.uri), LISTED.map((resource) => resource.uri))
        for (const resource of resources.resources) {
          assert.strictEqual(resource.mimeType, "application/json", resource.uri)
          assert.strictEqual(resource.name, resource.uri.slice("mfg://".length))
          assert.isString(resource.title)
          // Every description says how the list is bounded and paged (the event feed and the request log: their newest 20).
          const bound = resource.uri === "mfg://event" ? "the last 20 events" : resource.uri === "mfg://request-log" ? "the last 20 calls" : "at most 100"
          assert.include(resource.description, bound, resource.uri)
          assert.include(resource.description, "`next`", resource.uri)
        }
        const templates = (yield* rpc("resources/templates/list")).result
        // And a quote's PDF, a template of its own (no list: a quote's id names it).
        assert.deepStrictEqual(
          templates.resourceTemplates.map((template: { uriTemplate: string }) => template.uriTemplate),
          [...LISTED.map((resource) => resource.template), "mfg://ticket-quote/{id}/pdf"]
        )
        assert.strictEqual(templates.resourceTemplates.at(-1).mimeType, "application/pdf")
        const prompts = (yield* rpc("prompts/list")).result
        assert.deepStrictEqual(prompts.prompts.map((prompt: { name: string }) => prompt.name), ["quote_a_part"])
        const tools = (yield* rpc("tools/list")).result
        assert.lengthOf(tools.tools, 9)

        // Discovery and the prompts are the same for every app; the lists are what the caller's secret may call or read.
        for (const [what, result] of Object.entries({ discovered, resources, templates, prompts, tools })) {
          assert.strictEqual(result.ttlMs, 300_000, what)
          assert.strictEqual(result.cacheScope, what === "discovered" || what === "prompts" ? "public" : "private", what)
          const keys = Object.keys(result)
          assert.isBelow(keys.indexOf("ttlMs"), keys.indexOf("cacheScope"), what)
        }
      }))

    it.effect("each resource reads what its REST list answers, with the total, for the caller's app only", () =>
      Effect.gen(function*() {
        const a = yield* app("mcp-read-a")
        const b = yield* app("mcp-read-b")
        const customer = ok(yield* a.rest("POST", "/customer", { name: "Acme", email: "buyer@acme.example" }), "customer")
        ok(yield* a.rest("POST", "/project", { customerId: customer.id, name: "Gearbox" }), "project")
        ok(yield* a.rest("POST", "/material", { name: "PLA", technologyId: "fdm", colourIds: ["white", "black"] }), "material")
        ok(yield* a.rest("POST", "/material", { name: "Resin", technologyId: "sla" }), "material")
        ok(yield* b.rest("POST", "/customer", { name: "Other", email: "buyer@other.example" }), "customer")

        for (const resource of RESOURCES) {
          const { page, result } = yield* a.read(resource.uri)
          const listed = yield* a.rest("GET", resource.rest)
          const records = ok(listed, resource.rest) as Array<any>
          assert.strictEqual(result.ttlMs, resource.ttlMs, resource.uri)
          assert.strictEqual(result.cacheScope, resource.cacheScope, resource.uri)
          assert.strictEqual(page.total, Number(listed.headers.get("x-total-count")), resource.uri)
          assert.strictEqual(page.offset, 0)
          assert.strictEqual(page.limit, 100)
          assert.isUndefined(page.next)
          if (resource.uri === "mfg://material") {
            // Each material with the colours its colourIds name, in that order.
            assert.deepStrictEqual(page.items.map(({ colours: _colours, ...material }) => material), records)
            const pla = page.items.find((material) => material.name === "PLA")
            assert.deepStrictEqual(pla.colours.map((colour: { id: string; hex: string }) => colour.id), ["white", "black"])
            assert.strictEqual(pla.colours[0].hex, "#ffffff")
            assert.deepStrictEqual(page.items.find((material) => material.name === "Resin").colours, [])
          } else {
            assert.deepStrictEqual(page.items, records, resource.uri)
          }
        }

        // Templates filter as the REST query does.
        const fdm = (yield* a.read("mfg://material?technologyId=fdm")).page
        assert.deepStrictEqual(fdm.items.map((material) => material.name), ["PLA"])
        const both = (yield* a.read("mfg://material?technologyId=fdm&technologyId=sla")).page
        assert.strictEqual(both.total, 2)
        const fields = (yield* a.read("mfg://production-parameter-field?technologyId=fdm")).page
        assert.deepStrictEqual(fields.items, ok(yield* a.rest("GET", "/production-parameter-field?technologyId=fdm"), "fields"))
        const projects = (yield* a.read(`mfg://project?customerId=${customer.id}`)).page
        assert.deepStrictEqual(projects.items.map((project) => project.name), ["Gearbox"])
        const byName = (yield* a.read("mfg://customer?name=Acme")).page
        assert.deepStrictEqual(byName.items.map((found) => found.id), [customer.id])

        // Another app sees none of it: its own customer only, none of the first app's projects or materials.
        assert.deepStrictEqual((yield* b.read("mfg://customer")).page.items.map((found) => found.name), ["Other"])
        assert.strictEqual((yield* b.read(`mfg://project?customerId=${customer.id}`)).page.total, 0)
        assert.strictEqual((yield* b.read("mfg://material")).page.total, 0)
        // Global reference data is the same for both.
        assert.deepStrictEqual((yield* b.read("mfg://technology")).page, (yield* a.read("mfg://technology")).page)
      }))

    it.effect("a long list is paged: limit and offset, and next until the last page", () =>
      Effect.gen(function*() {
        const { read, rest } = yield* app("mcp-paging")
        for (const name of ["One", "Two", "Three"]) ok(yield* rest("POST", "/customer", { name, email: `${name.toLowerCase()}@example.com` }), name)
        const first = (yield* read("mfg://customer?limit=2")).page
        assert.deepStrictEqual(first.items.map((customer) => customer.name), ["One", "Two"])
        assert.strictEqual(first.total, 3)
        assert.strictEqual(first.limit, 2)
        assert.strictEqual(first.next, "mfg://customer?limit=2&offset=2")
        const last = (yield* read(first.next!)).page
        assert.deepStrictEqual(last.items.map((customer) => customer.name), ["Three"])
        assert.strictEqual(last.offset, 2)
        assert.isUndefined(last.next)
        // Past the end: no records, no next page.
        const past = (yield* read("mfg://customer?offset=10")).page
        assert.deepStrictEqual([past.items.length, past.total, past.next], [0, 3, undefined])
      }))

    it.effect("a URI no resource reads, a parameter the template does not take or a bad value: -32602 naming it; every read metered", () =>
      Effect.gen(function*() {
        const { appId, invalid, read, rpc } = yield* app("mcp-invalid")
        const unknown = yield* invalid("mfg://material?colour=red")
        assert.include(unknown.message, "\"colour\"")
        assert.include(unknown.message, "mfg://material{?technologyId,limit,offset}")
        assert.deepStrictEqual(unknown.data, { uri: "mfg://material?colour=red" })
        for (
          const [uri, parameter] of [["mfg://customer?limit=0", "limit"], ["mfg://customer?limit=1001", "limit"], ["mfg://customer?offset=-1", "offset"], [
            "mfg://customer?limit=ten",
            "limit"
          ]] as const
        ) {
          const error = yield* invalid(uri)
          assert.include(error.message, `"${parameter}"`, uri)
          assert.deepStrictEqual(error.data.errors.map((problem: { path: string }) => problem.path), [parameter], uri)
        }
        for (const uri of ["mfg://nothing", "mfg://material/", "mfg://material#x", "mfg://materials", "https://example.com/material"]) {
          const error = yield* invalid(uri)
          assert.deepStrictEqual(error.data, { uri }, uri)
        }
        yield* read("mfg://technology")
        yield* rpc("resources/list")
        yield* rpc("resources/templates/list")
        yield* rpc("prompts/list")
        yield* rpc("prompts/get", { name: "quote_a_part", arguments: { modelUrl: "https://files.example/a.stl", quantity: "2" } })
        const metered = yield* usage(appId)
        assert.strictEqual(metered.get("mcp.resources/read"), 1 + 4 + 5 + 1)
        for (const method of ["resources/list", "resources/templates/list", "prompts/list", "prompts/get"]) {
          assert.strictEqual(metered.get(`mcp.${method}`), 1, method)
        }
      }))

    it.effect("without a valid secret a read or a prompt is the one 401", () =>
      Effect.gen(function*() {
        const { client, post } = yield* app("mcp-401")
        const expected = (yield* client.call("GET", "/v1/customer")).text
        for (
          const request of [modern("resources/read", { uri: "mfg://customer" }), modern("prompts/get", { name: "quote_a_part", arguments: { quantity: "1" } })]
        ) {
          for (const secret of [null, "nope"]) {
            const reply: Reply = yield* post(request, secret)
            assert.strictEqual(reply.status, 401, reply.text)
            assert.strictEqual(reply.text, expected)
          }
        }
      }))

    it.effect("quote_a_part: its arguments, its steps naming the resources and tools in order, one model source", () =>
      Effect.gen(function*() {
        const { rpc } = yield* app("mcp-prompt")
        const [prompt] = (yield* rpc("prompts/list")).result.prompts
        assert.deepStrictEqual(
          prompt.arguments.map(({ name, required }: { name: string; required: boolean }) => ({ name, required })),
          [
            { name: "modelUrl", required: false },
            { name: "catalogueModelConfigurationId", required: false },
            { name: "quantity", required: true },
            { name: "customerName", required: false },
            { name: "projectId", required: false },
            { name: "technologyId", required: false },
            { name: "materialId", required: false }
          ]
        )
        for (const argument of prompt.arguments) assert.isString(argument.description, argument.name)

        const get = (args: Record<string, string>) => rpc("prompts/get", { name: "quote_a_part", arguments: args })
        const fromUrl = (yield* get({ modelUrl: "https://files.example/bracket.stl", quantity: "25", customerName: "Acme Robotics" })).result
        assert.lengthOf(fromUrl.messages, 1)
        assert.strictEqual(fromUrl.messages[0].role, "user")
        const text: string = fromUrl.messages[0].content.text
        assert.include(text, "https://files.example/bracket.stl")
        assert.include(text, "\"quantity\": 25")
        assert.include(text, "mfg://customer?name=Acme%20Robotics")
        for (
          const uri of [
            "mfg://project?customerId=<customer id>",
            "mfg://technology",
            "mfg://material?technologyId=<technology id>",
            "mfg://production-parameter-field?technologyId=<technology id>"
          ]
        ) {
          assert.include(text, uri)
        }
        const order = ["create_ticket ", "create_part ", "list_parts ", "create_ticket_quote "].map((tool) => text.indexOf(`Call ${tool}`))
        assert.isTrue(order.every((index, i) => index > 0 && (i === 0 || index > order[i - 1]!)), JSON.stringify(order))
        assert.include(text, "`sent`")

        const fromCatalogue: string = (yield* get({ catalogueModelConfigurationId: "demo-bracket-fdm", quantity: "4" })).result.messages[0].content.text
        assert.include(fromCatalogue, "\"catalogueModelConfigurationId\": \"demo-bracket-fdm\"")
        assert.include(fromCatalogue, "mfg://catalogue-model")
        assert.notInclude(fromCatalogue, "modelEndpoint")
        // The configuration brings the technology and material: the agent is not told to choose them.
        assert.notInclude(fromCatalogue, "\"technologyId\": \"<technology id>\"")

        // Given, the technology and material are the user's choice, named in the steps.
        const chosen: string = (yield* get({ modelUrl: "https://files.example/bracket.stl", quantity: "2", technologyId: "sla", materialId: "m-1" }))
          .result.messages[0].content.text
        assert.include(chosen, "The technology is sla")
        assert.include(chosen, "The material is m-1")

        for (
          const [args, name] of [
            [{ quantity: "4" }, "modelUrl"],
            [{ modelUrl: "https://files.example/a.stl", catalogueModelConfigurationId: "c-1", quantity: "4" }, "catalogueModelConfigurationId"],
            [{ modelUrl: "https://files.example/a.stl", quantity: "0" }, "quantity"],
            [{ modelUrl: "https://files.example/a.stl", quantity: "2.5" }, "quantity"],
            [{ modelUrl: "ftp://files.example/a.stl", quantity: "2" }, "modelUrl"],
            [{ modelUrl: "https://files.example/a.stl" }, "quantity"],
            [{ modelUrl: "https://files.example/a.stl", quantity: "2", colour: "red" }, "colour"],
            [{ catalogueModelConfigurationId: "c-1", quantity: "2", technologyId: "fdm" }, "technologyId"]
          ] as const
        ) {
          const answer = yield* get(args)
          assert.isDefined(answer.error, JSON.stringify(args))
          assert.strictEqual(answer.error!.code, -32602, JSON.stringify(args))
          assert.include(answer.error!.message, `"${name}"`, JSON.stringify(args))
        }
      }))

    it.effect("a quote reads as a PDF: mfg://ticket-quote/{id}/pdf, one blob, the bytes REST answers; another app's or none: not found", () =>
      Effect.gen(function*() {
        const { appId, rest, rpc, secret, client } = yield* app("mcp-pdf")
        const customer = ok(yield* rest("POST", "/customer", { name: "Acme", email: "buyer@acme.example" }), "customer")
        const project = ok(yield* rest("POST", "/project", { customerId: customer.id, name: "Gearbox" }), "project")
        const ticket = ok(yield* rest("POST", "/ticket", { projectId: project.id, name: "PDF" }), "ticket")
        const item = ok(yield* rest("POST", "/item", { ticketId: ticket.id, name: "Setup", quantity: 1, unitPrice: 40 }), "item")
        assert.isString(item.id)
        const quote = ok(yield* rest("POST", `/ticket/${ticket.id}/quote`, {}), "quote")
        const uri = `mfg://ticket-quote/${quote.id}/pdf`

        const answer = yield* rpc("resources/read", { uri })
        assert.isDefined(answer.result, JSON.stringify(answer.error))
        const [content] = answer.result.contents as Array<{ uri: string; mimeType: string; blob?: string; text?: string }>
        assert.deepStrictEqual([content!.uri, content!.mimeType, content!.text], [uri, "application/pdf", undefined])
        const bytes = Buffer.from(content!.blob!, "base64")
        assert.strictEqual(bytes.subarray(0, 5).toString(), "%PDF-")
        const overRest = yield* Effect.promise(async () => {
          const response = await fetch(`${client.baseUrl}/v1/ticket-quote/${quote.id}`, { headers: { authorization: secret, accept: "application/pdf" } })
          return Buffer.from(await response.arrayBuffer())
        })
        assert.isTrue(bytes.equals(overRest), "the same bytes as GET /v1/ticket-quote/{id} with Accept: application/pdf")

        // Through the official client pinned to 2026-07-28: the blob as the SDK decodes it.
        const agent = new ModernClient({ name: "pdf-reader", version: "1.0.0" }, { versionNegotiation: { mode: { pin: MODERN } } })
        yield* Effect.promise(() =>
          agent.connect(new ModernTransport(new URL(`${client.baseUrl}/v1/mcp`), { requestInit: { headers: { authorization: `Bearer ${secret}` } } }))
        )
        const read = yield* Effect.promise(() => agent.readResource({ uri }))
        const blob = read.contents[0]!
        assert.isTrue("blob" in blob && Buffer.from(blob.blob, "base64").equals(overRest))
        yield* Effect.promise(() => agent.close())

        // A quote the app does not have, or a URI of the template's shape with no quote: "Resource not found".
        for (const missing of ["mfg://ticket-quote/no-such-quote/pdf", "mfg://ticket-quote//pdf"]) {
          const refused = yield* rpc("resources/read", { uri: missing })
          assert.strictEqual(refused.error?.code, -32602, missing)
        }
        const other = yield* app("mcp-pdf-other")
        assert.strictEqual((yield* other.rpc("resources/read", { uri })).error?.code, -32602)
        assert.strictEqual((yield* usage(appId)).get("mcp.resources/read"), 4)
      }))

    it.effect("the legacy SDK client (2025-11-25) lists and reads the resources and gets the prompt, without cache hints", () =>
      Effect.gen(function*() {
        const { client, rest, secret } = yield* app("mcp-legacy")
        ok(yield* rest("POST", "/customer", { name: "Acme", email: "buyer@acme.example" }), "customer")
        const legacy = new LegacyClient({ name: "mcp-legacy-test", version: "1.0.0" })
        yield* Effect.promise(() =>
          legacy.connect(new LegacyTransport(new URL(`${client.baseUrl}/v1/mcp`), { requestInit: { headers: { authorization: secret } } }))
        )
        const { resources } = yield* Effect.promise(() => legacy.listResources())
        assert.deepStrictEqual(resources.map((resource) => resource.uri), LISTED.map((resource) => resource.uri))
        const { resourceTemplates } = yield* Effect.promise(() => legacy.listResourceTemplates())
        assert.lengthOf(resourceTemplates, LISTED.length + 1)
        const read = yield* Effect.promise(() => legacy.readResource({ uri: "mfg://customer?name=Acme" }))
        assert.isUndefined((read as Record<string, unknown>).ttlMs)
        const page = JSON.parse((read.contents[0] as { text: string }).text) as Page
        assert.deepStrictEqual(page.items.map((customer) => customer.name), ["Acme"])
        const prompt = yield* Effect.promise(() =>
          legacy.getPrompt({ name: "quote_a_part", arguments: { modelUrl: "https://files.example/a.stl", quantity: "3" } })
        )
        assert.include((prompt.messages[0]!.content as { text: string }).text, "create_ticket_quote")
        yield* Effect.promise(() => legacy.close())
      }))
  })
}
