/**
 * Scopes and the spend limit, through REST and MCP: every operation of the
 * API called with a secret of each single scope (refused with the 403 body
 * exactly when the operation needs another scope, metered, nothing changed),
 * the table in the OpenAPI document and in docs/integration.md, a `quote`
 * secret that quotes but cannot accept, a spend-limited secret refused above
 * its limit and allowed below, MCP's lists and refusals per scope.
 */
import { assert, layer } from "@effect/vitest"
import { Context, Effect } from "effect"
import type { HttpApiEndpoint } from "effect/http-api"
import * as Fs from "node:fs"
import { INTEGRATION_GUIDE, withCurrentTable } from "../../scripts/scopes-table.ts"
import { groupsOf } from "../../src/contract/Operations.ts"
import { PublicApi } from "../../src/contract/PublicApi.ts"
import { OPERATION_SCOPES, RequiredScope, type ScopeRule } from "../../src/contract/Scopes.ts"
import { type Scope, SCOPES } from "../../src/domain/Grants.ts"
import { seedDemoData } from "../../src/engine/seed.ts"
import { ADMIN_TOKEN, backends } from "../support/backends.ts"
import { ok } from "../support/http.ts"
import { type Reply, type SecretGrants, TestApp, TestClient } from "../support/TestApp.ts"

interface Operation {
  readonly id: string
  readonly method: string
  readonly path: string
  readonly scope: Scope
}

/** Every operation of the API, with the scope its annotation says. */
const OPERATIONS: ReadonlyArray<Operation> = groupsOf(PublicApi).flatMap((group) =>
  Object.values(group.endpoints).map((endpoint: HttpApiEndpoint.Top) => ({
    id: `${group.identifier}.${endpoint.identifier}`,
    method: endpoint.method,
    path: endpoint.path,
    scope: Context.getOrUndefined(endpoint.annotations, RequiredScope)!
  }))
)

/** A concrete URL of a route: each parameter a plain value. */
const urlOf = (path: string) => path.replace(/:[^/]+/g, "x1")

const insufficient = (operation: string, scope: string) => ({
  code: 403,
  message: `This secret may not call ${operation}: it needs the scope "${scope}"`,
  type: "InsufficientScope"
})

const admin = { "x-admin-token": ADMIN_TOKEN }

const MODERN = "2026-07-28"
const meta = { "io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {} }

/** The tools each scope may call. */
const TOOLS_OF: Readonly<Record<Scope, ReadonlyArray<string>>> = {
  read: ["list_ticket_quotes", "lookup_ticket", "list_parts"],
  write: ["create_ticket", "create_part", "update_part"],
  quote: ["create_ticket_quote", "update_ticket_quote"],
  order: ["send_ticket_to_production"],
  webhooks: []
}

/** The quote as read, sent back with `changes` (a PUT of the whole quote). */
const quoteBody = (quote: any, changes: Record<string, unknown> = {}) => ({
  ticketId: quote.ticketId,
  currencyId: quote.currencyId,
  state: quote.state,
  validUntil: quote.validUntil,
  lines: quote.lines,
  ...changes
})

for (const backend of backends) {
  layer(TestApp(backend), { timeout: 120_000, excludeTestServices: true })(`Scopes and spend limits (${backend})`, (it) => {
    /** A fresh app with the demo data, and a secret of it with `grants`. */
    const demoApp = Effect.gen(function*() {
      const client = yield* TestClient
      const appId = `scopes-${Math.random().toString(36).slice(2)}`
      yield* seedDemoData(appId)
      const secret = (grants: SecretGrants) => Effect.map(client.createSecret(appId, undefined, grants), (created) => created.value)
      const full = yield* secret({})
      const call = (secretValue: string, method: string, path: string, body?: unknown) => client.call(method, `/v1${path}`, { secret: secretValue, body })
      return { appId, client, secret, full, call }
    })

    /** A sent quote of a demo part (priced at once), made with the app's full secret. */
    const sentQuote = (app: Effect.Success<typeof demoApp>, quantity = 10, payload: Record<string, unknown> = {}) =>
      Effect.gen(function*() {
        const [customer] = ok(yield* app.call(app.full, "GET", "/customer?externalReference=demo-acme"), "customer")
        const project = ok(yield* app.call(app.full, "POST", "/project", { customerId: customer.id, name: "Order" }), "project")
        const ticket = ok(yield* app.call(app.full, "POST", "/ticket", { projectId: project.id, name: "Run" }), "ticket")
        ok(
          yield* app.call(app.full, "POST", "/ticket-model/from-catalogue", {
            ticketId: ticket.id,
            parts: [{ catalogueModelConfigurationId: "demo-bearing-block-fdm", quantity }]
          }),
          "parts"
        )
        return { ticket, quote: (secretValue: string) => app.call(secretValue, "POST", `/ticket/${ticket.id}/quote`, payload) }
      })

    it.effect("each operation's scope is the table's, in the OpenAPI document (x-required-scope) and in docs/integration.md", () =>
      Effect.gen(function*() {
        const client = yield* TestClient
        const document = (yield* client.call("GET", "/openapi.json")).json()
        const documented: Record<string, unknown> = {}
        const toAccept: Record<string, unknown> = {}
        for (const item of Object.values(document.paths) as Array<Record<string, any>>) {
          for (const operation of Object.values(item)) {
            if (typeof operation?.operationId !== "string" || operation.operationId === "mcp.post") continue
            documented[operation.operationId] = operation["x-required-scope"]
            if (operation["x-required-scope-to-accept"] !== undefined) toAccept[operation.operationId] = operation["x-required-scope-to-accept"]
          }
        }
        const table = Object.entries(OPERATION_SCOPES).flatMap(([group, endpoints]) =>
          Object.entries(endpoints as Readonly<Record<string, ScopeRule>>).map(([name, rule]) =>
            [`${group}.${name}`, typeof rule === "string" ? rule : rule.scope] as const
          )
        )
        assert.strictEqual(OPERATIONS.length, 131)
        assert.deepStrictEqual(Object.fromEntries(OPERATIONS.map((operation) => [operation.id, operation.scope])), Object.fromEntries(table))
        assert.deepStrictEqual(documented, Object.fromEntries(table))
        assert.deepStrictEqual(toAccept, { "ticketQuote.replace": "order" })
        // Spot checks of the table's reading of the issue.
        const scopeOf = new Map(table)
        assert.strictEqual(scopeOf.get("customer.get"), "read")
        assert.strictEqual(scopeOf.get("ticketModel.similarity"), "read")
        assert.strictEqual(scopeOf.get("ticketModel.priceBreaks"), "read")
        assert.strictEqual(scopeOf.get("customer.create"), "write")
        assert.strictEqual(scopeOf.get("ticket.quote"), "quote")
        assert.strictEqual(scopeOf.get("ticket.sendToProduction"), "order")
        assert.strictEqual(scopeOf.get("serviceJob.merge"), "order")
        assert.strictEqual(scopeOf.get("serviceJob.startTimeline"), "order")
        assert.strictEqual(scopeOf.get("serviceJob.reassignTicketModels"), "order")
        assert.strictEqual(scopeOf.get("webhookEndpoint.rotateSecret"), "webhooks")
        assert.strictEqual(scopeOf.get("webhookDelivery.list"), "webhooks")
        assert.strictEqual(scopeOf.get("requestLog.list"), "read")

        const guide = Fs.readFileSync(INTEGRATION_GUIDE, "utf8")
        assert.strictEqual(guide, withCurrentTable(guide), "run `npm run docs:scopes`")
      }))

    it.effect(
      "a secret of one scope is refused on every operation of another scope with the 403 body, and reaches those of its own",
      () =>
        Effect.gen(function*() {
          const app = yield* demoApp
          for (const scope of SCOPES) {
            const secret = yield* app.secret({ scopes: [scope] })
            for (const operation of OPERATIONS) {
              const hasBody = operation.method === "POST" || operation.method === "PUT" || operation.method === "PATCH"
              const reply = yield* app.client.call(operation.method, urlOf(operation.path), { secret, ...(hasBody ? { body: {} } : {}) })
              const where = `${scope}: ${operation.method} ${operation.path} (${operation.id}, needs ${operation.scope}): ${reply.status} ${reply.text}`
              if (operation.scope === scope) {
                assert.isFalse(reply.status === 403 && reply.text.includes("InsufficientScope"), where)
              } else {
                assert.strictEqual(reply.status, 403, where)
                assert.deepStrictEqual(reply.json(), insufficient(operation.id, operation.scope), where)
                // The gateway's refusal: no engine was asked.
                assert.isNull(reply.headers.get("x-error-source"), where)
                assert.match(reply.headers.get("x-request-id") ?? "", /^[0-9a-f-]{36}$/, where)
              }
            }
          }
        }),
      { timeout: 300_000 }
    )

    it.effect("a refused call changes nothing and is metered; a read-only secret reads", () =>
      Effect.gen(function*() {
        const app = yield* demoApp
        const reader = yield* app.secret({ scopes: ["read"] })
        const created = yield* app.call(reader, "POST", "/customer", { name: "Intruder", email: "i@example.com" })
        assert.deepStrictEqual([created.status, created.json()], [403, insufficient("customer.create", "write")])
        const named = ok(yield* app.call(app.full, "GET", "/customer?name=Intruder"), "customers")
        assert.deepStrictEqual(named, [])
        assert.lengthOf(ok(yield* app.call(reader, "GET", "/customer"), "customers as read"), 3)
        const [customer] = ok(yield* app.call(reader, "GET", "/customer?externalReference=demo-acme"), "customer")
        // The direct record read and the router decide alike.
        assert.strictEqual(ok(yield* app.call(reader, "GET", `/customer/${customer.id}`), "read").id, customer.id)
        const replaced = yield* app.call(reader, "PUT", `/customer/${customer.id}`, { name: "Renamed", email: customer.email })
        assert.strictEqual(replaced.status, 403)
        assert.strictEqual(ok(yield* app.call(app.full, "GET", `/customer/${customer.id}`), "after").name, customer.name)
        const usage = (yield* app.client.call("GET", `/api/v1/usage?appId=${app.appId}`, { headers: admin })).json()
        const calls = new Map((usage.byOperation as Array<{ operation: string; calls: number }>).map((row) => [row.operation, row.calls]))
        assert.strictEqual(calls.get("customer.create"), 1)
        assert.strictEqual(calls.get("customer.replace"), 1)
      }))

    it.effect("a quote secret quotes and revises, but cannot accept: 403 naming the acceptance and order, the quote stays sent", () =>
      Effect.gen(function*() {
        const app = yield* demoApp
        const quoter = yield* app.secret({ scopes: ["read", "quote"] })
        const { quote, ticket } = yield* sentQuote(app)
        const sent = ok(yield* quote(quoter), "quote")
        assert.strictEqual(sent.state, "sent")
        const revised = ok(yield* app.call(quoter, "PUT", `/ticket-quote/${sent.id}`, quoteBody(sent, { notes: "Delivery in two weeks" })), "revision")
        assert.strictEqual(revised.notes, "Delivery in two weeks")

        const accepting = yield* app.call(quoter, "PUT", `/ticket-quote/${sent.id}`, quoteBody(revised, { state: "accepted" }))
        assert.strictEqual(accepting.status, 403, accepting.text)
        assert.deepStrictEqual(accepting.json(), insufficient("ticketQuote.replace", "order"))
        assert.strictEqual(ok(yield* app.call(app.full, "GET", `/ticket-quote/${sent.id}`), "quote").state, "sent")
        assert.strictEqual(ok(yield* app.call(app.full, "GET", `/ticket/lookup?identifier=${ticket.id}`), "ticket").state, "quoted")
        const sending = yield* app.call(quoter, "PUT", `/ticket/${ticket.id}/send-to-production`)
        assert.deepStrictEqual(sending.json(), insufficient("ticket.sendToProduction", "order"))

        // With order, the same acceptance goes through.
        const buyer = yield* app.secret({ scopes: ["quote", "order"] })
        const accepted = ok(yield* app.call(buyer, "PUT", `/ticket-quote/${sent.id}`, quoteBody(revised, { state: "accepted" })), "acceptance")
        assert.strictEqual(accepted.state, "accepted")
      }))

    it.effect("a spend-limited secret is refused above its limit (the quote stays sent) and accepts at or below it", () =>
      Effect.gen(function*() {
        const app = yield* demoApp
        const { quote } = yield* sentQuote(app)
        const sent = ok(yield* quote(app.full), "quote")
        assert.isAbove(sent.total, 1)
        const below = Math.floor(sent.total) - 1

        const limited = yield* app.client.createSecret(app.appId, undefined, { maxAcceptTotal: below })
        const refused = yield* app.call(limited.value, "PUT", `/ticket-quote/${sent.id}`, quoteBody(sent, { state: "accepted" }))
        assert.strictEqual(refused.status, 403, refused.text)
        const body = refused.json()
        assert.strictEqual(body.type, "SpendLimitExceeded")
        assert.include(body.message, `${below.toFixed(2)} EUR`)
        assert.include(body.message, `${sent.total.toFixed(2)} EUR`)
        assert.include(body.message, sent.number)
        assert.strictEqual(refused.headers.get("x-error-source"), "engine")
        assert.strictEqual(ok(yield* app.call(app.full, "GET", `/ticket-quote/${sent.id}`), "quote").state, "sent")

        // The limit raised to the total exactly: accepted (a limit is inclusive).
        const raised = yield* app.client.call("PATCH", `/api/v1/secret/${limited.id}`, { headers: admin, body: { maxAcceptTotal: sent.total } })
        assert.strictEqual(raised.json().maxAcceptTotal, sent.total)
        const accepted = ok(yield* app.call(limited.value, "PUT", `/ticket-quote/${sent.id}`, quoteBody(sent, { state: "accepted" })), "acceptance")
        assert.strictEqual(accepted.state, "accepted")
      }))

    it.effect("a quote in another currency is compared in EUR at the quote's own rate", () =>
      Effect.gen(function*() {
        const app = yield* demoApp
        // 2 USD per EUR: the quote's total in USD is twice its value in EUR.
        const { quote } = yield* sentQuote(app, 10, { currencyId: "USD", exchangeRate: 2 })
        const sent = ok(yield* quote(app.full), "quote")
        assert.strictEqual(sent.currencyId, "USD")
        const inEuros = Math.round((sent.total / 2) * 100) / 100
        // Above the total's EUR value, below its USD amount: accepted.
        const limited = yield* app.client.createSecret(app.appId, undefined, { maxAcceptTotal: Math.ceil(inEuros) + 1 })
        assert.isBelow(Math.ceil(inEuros) + 1, sent.total)
        const accepted = ok(yield* app.call(limited.value, "PUT", `/ticket-quote/${sent.id}`, quoteBody(sent, { state: "accepted" })), "acceptance")
        assert.strictEqual(accepted.state, "accepted")

        const { quote: second } = yield* sentQuote(app, 10, { currencyId: "USD", exchangeRate: 2 })
        const other = ok(yield* second(app.full), "second quote")
        const tight = yield* app.client.createSecret(app.appId, undefined, { maxAcceptTotal: Math.floor(other.total / 2) - 1 })
        const refused = yield* app.call(tight.value, "PUT", `/ticket-quote/${other.id}`, quoteBody(other, { state: "accepted" }))
        assert.strictEqual(refused.json().type, "SpendLimitExceeded")
        assert.include(refused.json().message, `${(Math.round((other.total / 2) * 100) / 100).toFixed(2)} EUR (${other.total} USD at 2 per EUR)`)
      }))

    it.effect("MCP: tools/list per scope, a tool outside the scopes is the tool error with the 403 body, a resource the JSON-RPC error", () =>
      Effect.gen(function*() {
        const app = yield* demoApp
        const rpc = (secret: string, method: string, params: Record<string, unknown> = {}) => {
          const name = method === "resources/read" ? params.uri : params.name
          return Effect.map(
            app.client.call("POST", "/v1/mcp", {
              secret,
              body: { jsonrpc: "2.0", id: 1, method, params: { ...params, _meta: meta } },
              headers: {
                accept: "application/json, text/event-stream",
                "mcp-protocol-version": MODERN,
                "mcp-method": method,
                ...(typeof name === "string" ? { "mcp-name": name } : {})
              }
            }),
            (reply: Reply) => ({ status: reply.status, message: reply.json() })
          )
        }
        const everyTool = Object.values(TOOLS_OF).flat()
        for (const scope of SCOPES) {
          const secret = yield* app.secret({ scopes: [scope] })
          const listed = (yield* rpc(secret, "tools/list")).message.result
          assert.sameMembers(listed.tools.map((tool: { name: string }) => tool.name), [...TOOLS_OF[scope]], scope)
          assert.strictEqual(listed.cacheScope, "private")
          const resources = (yield* rpc(secret, "resources/list")).message.result.resources
          assert.strictEqual(resources.length > 0, scope === "read", scope)
          const templates = (yield* rpc(secret, "resources/templates/list")).message.result.resourceTemplates
          assert.strictEqual(templates.length > 0, scope === "read", scope)
          // A tool it may not call, called anyway: the tool's error with the REST body.
          const outside = everyTool.find((tool) => !TOOLS_OF[scope].includes(tool))!
          const called = (yield* rpc(secret, "tools/call", { name: outside, arguments: {} })).message.result
          assert.isTrue(called.isError, `${scope} ${outside}`)
          const refusal = JSON.parse(called.content[0].text)
          assert.strictEqual(refusal.code, 403)
          assert.strictEqual(refusal.type, "InsufficientScope")
          assert.match(refusal.message, new RegExp(`^This secret may not call ${outside} \\(\\w+\\.\\w+\\): it needs the scope "\\w+"$`))
        }
        // Through McpServer (a 2025-11-25 client) alike: the list, and the tool error with the 403 body.
        const reader = yield* app.secret({ scopes: ["read"] })
        const legacy = (method: string, params: Record<string, unknown>) =>
          Effect.map(
            app.client.call("POST", "/v1/mcp", {
              secret: reader,
              body: { jsonrpc: "2.0", id: 1, method, params },
              headers: { accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25" }
            }),
            (reply: Reply) => {
              const text = reply.text.trim()
              const data = text.startsWith("data:") || text.startsWith("event:")
                ? text.split("\n").filter((line) => line.startsWith("data:")).map((line) => line.slice(5).trim()).at(-1)!
                : text
              return JSON.parse(data)
            }
          )
        const legacyList = (yield* legacy("tools/list", {})).result
        assert.sameMembers(legacyList.tools.map((tool: { name: string }) => tool.name), [...TOOLS_OF.read])
        const legacyCall = (yield* legacy("tools/call", { name: "create_ticket", arguments: {} })).result
        assert.isTrue(legacyCall.isError)
        assert.deepStrictEqual(JSON.parse(legacyCall.content[0].text), insufficient("create_ticket (ticket.create)", "write"))

        // A tool of its scope runs.
        const writer = yield* app.secret({ scopes: ["write"] })
        const [project] = ok(yield* app.call(app.full, "GET", "/project?externalReference=demo-acme-retrofit"), "project")
        const made = (yield* rpc(writer, "tools/call", { name: "create_ticket", arguments: { projectId: project.id, name: "By an agent" } })).message
        assert.isFalse(made.result.isError, JSON.stringify(made))

        // A resource read outside the scopes: the JSON-RPC error carrying the REST 403 body.
        const refused = (yield* rpc(writer, "resources/read", { uri: "mfg://customer" })).message
        assert.deepStrictEqual(refused.error, {
          code: -32003,
          message: "This secret may not call customer.list (mfg://customer): it needs the scope \"read\"",
          data: insufficient("customer.list (mfg://customer)", "read")
        })
        const read = (yield* rpc(reader, "resources/read", { uri: "mfg://customer" })).message
        assert.strictEqual(JSON.parse(read.result.contents[0].text).total, 3)
      }))

    it.effect("the admin API lists a secret's scopes, mode and limit (never its value) and changes them; bad values are 400s naming them", () =>
      Effect.gen(function*() {
        const client = yield* TestClient
        const appId = `grants-${Math.random().toString(36).slice(2)}`
        const created = (yield* client.call("POST", "/api/v1/secret", {
          headers: admin,
          body: { appId, ipAddresses: ["0.0.0.0/0"], scopes: ["quote", "read", "quote"], maxAcceptTotal: 250.5 }
        })).json()
        assert.deepStrictEqual([created.scopes, created.mode, created.maxAcceptTotal], [["read", "quote"], "live", 250.5])
        const [listed] = (yield* client.call("GET", `/api/v1/secret?appId=${appId}`, { headers: admin })).json()
        assert.deepStrictEqual([listed.scopes, listed.mode, listed.maxAcceptTotal], [["read", "quote"], "live", 250.5])
        assert.notProperty(listed, "value")
        assert.notInclude(JSON.stringify(listed), created.value.split(".")[1])

        const changed = yield* client.call("PATCH", `/api/v1/secret/${created.id}`, { headers: admin, body: { scopes: ["read"], maxAcceptTotal: null } })
        assert.strictEqual(changed.status, 200, changed.text)
        assert.deepStrictEqual([changed.json().scopes, changed.json().maxAcceptTotal, changed.json().mode], [["read"], null, "live"])

        const bad = [
          [{ scopes: ["admin"] }, "scopes"],
          [{ scopes: [] }, "scopes"],
          [{ maxAcceptTotal: -1 }, "maxAcceptTotal"],
          [{ maxAcceptTotal: 1.005 }, "maxAcceptTotal"],
          [{ mode: "sandbox" }, "mode"]
        ] as const
        for (const [body, field] of bad) {
          const reply = yield* client.call("PATCH", `/api/v1/secret/${created.id}`, { headers: admin, body })
          assert.strictEqual(reply.status, 400, `${JSON.stringify(body)}: ${reply.text}`)
          assert.include(reply.json().message, field, JSON.stringify(body))
        }
        const unknown = yield* client.call("PATCH", `/api/v1/secret/${"0".repeat(24)}`, { headers: admin, body: { scopes: ["read"] } })
        assert.strictEqual(unknown.status, 404)
        const noToken = yield* client.call("PATCH", `/api/v1/secret/${created.id}`, { body: { scopes: ["read", "write"] } })
        assert.strictEqual(noToken.status, 401)
        const [after] = (yield* client.call("GET", `/api/v1/secret?appId=${appId}`, { headers: admin })).json()
        assert.deepStrictEqual(after.scopes, ["read"])
      }))

    it.effect("a change of scopes holds from the secret's next call", () =>
      Effect.gen(function*() {
        const client = yield* TestClient
        const appId = `change-${Math.random().toString(36).slice(2)}`
        const secret = yield* client.createSecret(appId)
        const create = () => client.call("POST", "/v1/customer", { secret: secret.value, body: { name: "A", email: "a@example.com" } })
        assert.strictEqual((yield* create()).status, 200)
        yield* client.call("PATCH", `/api/v1/secret/${secret.id}`, { headers: admin, body: { scopes: ["read"] } })
        assert.deepStrictEqual((yield* create()).json(), insufficient("customer.create", "write"))
        assert.strictEqual((yield* client.call("GET", "/v1/customer", { secret: secret.value })).status, 200)
        yield* client.call("PATCH", `/api/v1/secret/${secret.id}`, { headers: admin, body: { scopes: ["write"] } })
        assert.strictEqual((yield* create()).status, 200)
        assert.deepStrictEqual((yield* client.call("GET", "/v1/customer", { secret: secret.value })).json(), insufficient("customer.list", "read"))
      }))
  })
}
