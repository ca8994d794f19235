/**
 * GET /v1/request-log and MCP `mfg://request-log`: the app's own calls from
 * the meter. Every answer's X-Request-Id finds its row; the filters
 * (requestId, operation, status, secretId, createdAt) and paging; the call
 * reading the log is metered but never in its page; a test secret reads the
 * test calls only, another app's calls never show; no secret value anywhere.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { backends } from "../support/backends.ts"
import { ok } from "../support/http.ts"
import { type Reply, TestApp, TestClient } from "../support/TestApp.ts"

const MODERN = "2026-07-28"
const meta = { "io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {} }

for (const backend of backends) {
  layer(TestApp(backend), { timeout: 120_000, excludeTestServices: true })(`Request log (${backend})`, (it) => {
    const app = Effect.gen(function*() {
      const client = yield* TestClient
      const appId = `log-${Math.random().toString(36).slice(2)}`
      const first = yield* client.createSecret(appId)
      const call = (method: string, path: string, options: { body?: unknown; secret?: string } = {}) =>
        client.call(method, path, { secret: options.secret ?? first.value, body: options.body })
      /** The log as read with `secret`, once every row of `requestIds` has its outcome written (a moment after its answer). */
      const log = (query: string, secret = first.value) =>
        Effect.map(call("GET", `/v1/request-log${query}`, { secret }), (reply) => ({ reply, rows: ok(reply, query) as Array<any> }))
      const settled = (requestIds: ReadonlyArray<string>) =>
        Effect.gen(function*() {
          const query = requestIds.map((id) => `requestId=${id}`).join("&")
          for (let attempt = 0; attempt < 100; attempt++) {
            const { rows } = yield* log(`?${query}`)
            if (rows.length === requestIds.length && rows.every((row) => row.status !== null)) return rows
            yield* Effect.sleep("50 millis")
          }
          return yield* Effect.die(new Error(`the outcomes of ${query} were not written`))
        })
      return { client, appId, first, call, log, settled }
    })

    const requestIdOf = (reply: Reply) => reply.headers.get("x-request-id")!

    it.effect("every answer's X-Request-Id finds its row, with the call's facts and never a secret value", () =>
      Effect.gen(function*() {
        const { call, first, settled } = yield* app
        const created = yield* call("POST", "/v1/customer", { body: { name: "Acme", email: "buyer@acme.example" } })
        const read = yield* call("GET", `/v1/customer/${created.json().id}`)
        const missing = yield* call("PUT", "/v1/customer/does-not-exist", { body: { name: "X", email: "x@example.com" } })
        const invalid = yield* call("POST", "/v1/customer", { body: { email: "no-name@example.com" } })
        const replies = [created, read, missing, invalid]
        const rows = yield* settled(replies.map(requestIdOf))
        const byId = new Map(rows.map((row) => [row.requestId, row]))
        const expected = [
          ["POST", "/v1/customer", "customer.create", 200, null],
          ["GET", "/v1/customer/:id", "customer.get", 200, null],
          ["PUT", "/v1/customer/:id", "customer.replace", 404, "NotFound"],
          ["POST", "/v1/customer", "customer.create", 400, "MissingField"]
        ] as const
        replies.forEach((reply, index) => {
          const row = byId.get(requestIdOf(reply))
          assert.isDefined(row, requestIdOf(reply))
          const [method, route, operation, status, errorType] = expected[index]!
          assert.deepStrictEqual(
            [row.method, row.route, row.operation, row.status, row.errorType, row.secretId],
            [method, route, operation, status, errorType, first.id]
          )
          assert.strictEqual(row.clientAddress, "127.0.0.1")
          assert.isAbove(row.durationMs, 0)
          assert.isBelow(Math.abs(Date.parse(row.createdAt) - Date.now()), 60_000)
          assert.deepStrictEqual(Object.keys(row).sort(), [
            "clientAddress",
            "createdAt",
            "durationMs",
            "errorType",
            "method",
            "operation",
            "requestId",
            "route",
            "secretId",
            "status"
          ])
        })
        assert.notInclude(JSON.stringify(rows), first.value.split(".")[1]!)
      }))

    it.effect("reading the log is metered, but never in the page it answers; another app's calls never show", () =>
      Effect.gen(function*() {
        const { call, client, log, settled } = yield* app
        const other = yield* client.createSecret(`log-other-${Math.random().toString(36).slice(2)}`)
        const theirs = yield* client.call("GET", "/v1/customer", { secret: other.value })
        const { reply, rows } = yield* log("?limit=1000")
        assert.strictEqual(reply.status, 200)
        assert.isFalse(rows.some((row) => row.requestId === requestIdOf(reply)), "the reading call is not in its own page")
        assert.isFalse(rows.some((row) => row.requestId === requestIdOf(theirs)), "another app's call")
        // The next read finds the first.
        const [previous] = yield* settled([requestIdOf(reply)])
        assert.deepStrictEqual([previous.operation, previous.route, previous.status], ["requestLog.list", "/v1/request-log", 200])
        const again = yield* call("GET", `/v1/request-log?requestId=${requestIdOf(theirs)}`)
        assert.deepStrictEqual(again.json(), [])
      }))

    it.effect("filters by operation, status, secret and createdAt, and pages like every list", () =>
      Effect.gen(function*() {
        const { appId, call, client, first, log, settled } = yield* app
        const reader = yield* client.createSecret(appId, undefined, { scopes: ["read"] })
        const replies = [
          yield* call("GET", "/v1/customer"),
          yield* call("GET", "/v1/customer/none"),
          yield* call("POST", "/v1/customer", { secret: reader.value, body: { name: "A", email: "a@example.com" } }),
          yield* call("POST", "/v1/project", { secret: reader.value, body: { customerId: "c", name: "P" } }),
          yield* call("GET", "/v1/project", { secret: reader.value })
        ]
        yield* settled(replies.map(requestIdOf))

        const refused = (yield* log("?status=403")).rows
        assert.deepStrictEqual(refused.map((row) => [row.operation, row.errorType, row.secretId]), [
          ["customer.create", "InsufficientScope", reader.id],
          ["project.create", "InsufficientScope", reader.id]
        ])
        assert.sameMembers((yield* log(`?secretId=${reader.id}`)).rows.map((row) => row.requestId), replies.slice(2).map(requestIdOf))
        assert.lengthOf((yield* log(`?secretId=${first.id}&operation=customer.get`)).rows, 1)
        assert.lengthOf((yield* log("?operation=customer.list&operation=project.list")).rows, 2)
        assert.lengthOf((yield* log("?status=403&status=200&operation=customer.create")).rows, 1)

        const today = new Date().toISOString().slice(0, 10)
        const all = (yield* log(`?createdAt=${today}&limit=1000`)).rows
        assert.includeMembers(all.map((row) => row.requestId), replies.map(requestIdOf))
        assert.deepStrictEqual((yield* log("?createdAt=2001-01-01")).rows, [])
        const from = replies[2]!
        const [fromRow] = all.filter((row) => row.requestId === requestIdOf(from))
        const ranged = (yield* log(`?createdAt%5Bfrom%5D=${encodeURIComponent(fromRow.createdAt)}&limit=1000`)).rows
        assert.isFalse(ranged.some((row) => row.requestId === requestIdOf(replies[0]!)))
        assert.includeMembers(ranged.map((row) => row.requestId), replies.slice(2).map(requestIdOf))
        // Oldest first, stable pages: X-Total-Count and Link as every list.
        const page = yield* log(`?createdAt=${today}&limit=2&offset=1`)
        assert.deepStrictEqual(page.rows.map((row) => row.requestId), all.slice(1, 3).map((row) => row.requestId))
        assert.isAtLeast(Number(page.reply.headers.get("x-total-count")), all.length)
        assert.include(page.reply.headers.get("link"), "rel=\"next\"")
        assert.include(page.reply.headers.get("link"), "rel=\"prev\"")

        const bad = yield* call("GET", "/v1/request-log?status=forbidden")
        assert.strictEqual(bad.status, 400)
        assert.include(bad.json().message, "status")
        // A value storage cannot hold: the 400 naming the filter, not a storage failure.
        const nul = yield* call("GET", "/v1/request-log?secretId=abc&secretId=%00")
        assert.strictEqual(nul.status, 400, nul.text)
        assert.include(nul.json().message, "\"secretId\"")
        const unknown = yield* call("GET", "/v1/request-log?path=/v1/customer")
        assert.strictEqual(unknown.status, 400)
        assert.include(unknown.json().message, "path")
      }))

    it.effect("a test secret reads the test calls, a live one the live calls", () =>
      Effect.gen(function*() {
        const { appId, call, client, log, settled } = yield* app
        const test = yield* client.createSecret(appId, undefined, { mode: "test" })
        const live = yield* call("GET", "/v1/customer")
        const inTest = yield* call("GET", "/v1/customer", { secret: test.value })
        yield* settled([requestIdOf(live)])
        const testLog = (yield* log("?limit=1000", test.value)).rows.map((row) => row.requestId)
        assert.include(testLog, requestIdOf(inTest))
        assert.notInclude(testLog, requestIdOf(live))
        const liveLog = (yield* log("?limit=1000")).rows.map((row) => row.requestId)
        assert.include(liveLog, requestIdOf(live))
        assert.notInclude(liveLog, requestIdOf(inTest))
      }))

    it.effect("MCP mfg://request-log: the newest page, the same filters; a tool call is its row, metered as mcp.<tool>", () =>
      Effect.gen(function*() {
        const { call, first, settled } = yield* app
        // Raw HTTP, as the transport sends it.
        const mcp = (method: string, params: Record<string, unknown>, name: string) =>
          Effect.gen(function*() {
            const client = yield* TestClient
            const reply = yield* client.call("POST", "/v1/mcp", {
              secret: first.value,
              body: { jsonrpc: "2.0", id: 1, method, params: { ...params, _meta: meta } },
              headers: { accept: "application/json, text/event-stream", "mcp-protocol-version": MODERN, "mcp-method": method, "mcp-name": name }
            })
            return { reply, message: reply.json() }
          })
        const tool = yield* mcp("tools/call", { name: "list_parts", arguments: {} }, "list_parts")
        assert.isFalse(tool.message.result.isError)
        const missing = yield* call("GET", "/v1/customer/missing")
        yield* settled([requestIdOf(tool.reply), requestIdOf(missing)])

        const read = (uri: string) => Effect.map(mcp("resources/read", { uri }, uri), ({ message }) => JSON.parse(message.result.contents[0].text))
        const newest = yield* read("mfg://request-log")
        // The newest page: the last calls (the log's own reads among them), up to the latest.
        assert.strictEqual(newest.offset + newest.items.length, newest.total)
        assert.isUndefined(newest.next)
        assert.includeMembers(newest.items.map((row: any) => row.requestId), [requestIdOf(tool.reply), requestIdOf(missing)])
        const byTool = yield* read(`mfg://request-log?requestId=${requestIdOf(tool.reply)}`)
        assert.deepStrictEqual(byTool.items.map((row: any) => [row.operation, row.route, row.method, row.status]), [["mcp.list_parts", "/v1/mcp", "POST", 200]])
        const filtered = yield* read("mfg://request-log?operation=customer.get&status=200")
        assert.deepStrictEqual(filtered.items.map((row: any) => row.requestId), [requestIdOf(missing)])
        const invalid = (yield* mcp("resources/read", { uri: "mfg://request-log?status=x" }, "mfg://request-log?status=x")).message
        assert.strictEqual(invalid.error.code, -32602)
        assert.include(invalid.error.message, "status")
        const nul = (yield* mcp("resources/read", { uri: "mfg://request-log?secretId=%00" }, "mfg://request-log?secretId=%00")).message
        assert.strictEqual(nul.error.code, -32602)
        assert.include(nul.error.message, "secretId")
      }))
  })
}
