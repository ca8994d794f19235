/**
 * What clients habitually send, as the service takes it:
 *
 * - an operation that takes no body (a POST or a workflow PUT) answers the
 *   same to no body, `Content-Length: 0`, `{}` and a chunked `{}`; a body
 *   with fields is a 400 naming each field;
 * - a 400 lists at most 50 problems in `errors` and counts the rest in
 *   `moreErrors`, so a body of a megabyte of unknown keys answers a small 400;
 * - an empty list where one item is required says it "must have at least
 *   one item", naming the list (not its missing first element).
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { request as httpRequest } from "node:http"
import { PublicApi } from "../../src/contract/PublicApi.ts"
import { ADMIN_TOKEN, backends } from "../support/backends.ts"
import { appWithTicket, ok } from "../support/http.ts"
import { rawRequest } from "../support/rawHttp.ts"
import { TestApp, TestClient } from "../support/TestApp.ts"

interface Answer {
  readonly status: number
  readonly body: any
}

/** Every operation that takes no body but reads one (POST, PUT), from the API itself. */
const BODYLESS_WRITES = Object.values(PublicApi.groups).flatMap((group) =>
  Object.values(group.endpoints).filter((endpoint) => endpoint.method !== "GET" && endpoint.method !== "DELETE" && endpoint.payload.size === 0)
)

/** The 400 of `reply`: its `type`, and the fields `errors` names. */
const refusal = (reply: Answer) => {
  assert.strictEqual(reply.status, 400, JSON.stringify(reply.body))
  return { type: reply.body.type as string, paths: (reply.body.errors ?? []).map((problem: { path: string }) => problem.path) }
}

for (const backend of backends) {
  layer(TestApp(backend), { timeout: 120_000, excludeTestServices: true })(`HTTP habits (${backend})`, (it) => {
    /** One request with exactly these headers and body bytes (`chunked`: sent in chunks, no Content-Length). */
    const send = (method: string, path: string, secret: string, body: string | undefined, chunked = false) =>
      Effect.gen(function*() {
        const client = yield* TestClient
        const port = Number(new URL(client.baseUrl).port)
        if (body === undefined) {
          // No Content-Length and no Transfer-Encoding: a request without a body, as curl -X POST sends it.
          const raw = yield* Effect.promise(() => rawRequest(port, method, path, [`Authorization: ${secret}`]))
          return { status: raw.status, body: raw.body.length > 0 ? JSON.parse(raw.body) : null }
        }
        return yield* Effect.promise(() =>
          new Promise<Answer>((resolve, reject) => {
            const headers: Record<string, string> = { authorization: secret, "content-type": "application/json" }
            if (!chunked) headers["content-length"] = String(Buffer.byteLength(body))
            const req = httpRequest({ host: "127.0.0.1", port, path, method, headers }, (res) => {
              const chunks: Array<Buffer> = []
              res.on("data", (chunk: Buffer) => chunks.push(chunk))
              res.on("end", () => {
                const text = Buffer.concat(chunks).toString("utf8")
                resolve({ status: res.statusCode ?? 0, body: text.length > 0 ? JSON.parse(text) : null })
              })
            })
            req.on("error", reject)
            if (chunked) req.write(body)
            req.end(chunked ? undefined : body)
          })
        )
      })

    it.effect("an operation that takes no body answers alike to none, Content-Length: 0, {} and a chunked {}", () =>
      Effect.gen(function*() {
        const client = yield* TestClient
        const { value: secret } = yield* client.createSecret(`habits-${Math.random().toString(36).slice(2)}`)
        const call = (method: string, path: string, body?: unknown) => client.call(method, `/v1${path}`, { secret, body })
        const endpoint = ok(yield* call("POST", "/webhook-endpoint", { url: "https://hooks.example/orders", events: ["*"] }), "endpoint")

        // A real endpoint: rotating its secret answers the new one, whichever way "no body" is written.
        const rotations: Array<Answer> = []
        for (const [body, chunked] of [[undefined, false], ["", false], ["{}", false], [" { } ", false], ["{}", true]] as const) {
          rotations.push(yield* send("POST", `/v1/webhook-endpoint/${endpoint.id}/rotate-secret`, secret, body, chunked))
        }
        assert.deepStrictEqual(rotations.map((answer) => answer.status), [200, 200, 200, 200, 200], JSON.stringify(rotations))
        assert.strictEqual(new Set(rotations.map((answer) => answer.body.secret)).size, 5, "each call rotated the secret")

        // Every operation that takes no body: `{}` answers as no body does (here: the engine's 404 for an unknown id).
        assert.isAtLeast(BODYLESS_WRITES.length, 7)
        for (const each of BODYLESS_WRITES) {
          const path = each.path.replace(/:\w+/g, "no-such-record")
          const without = yield* send(each.method, path, secret, undefined)
          const empty = yield* send(each.method, path, secret, "{}")
          const zero = yield* send(each.method, path, secret, "")
          const where = `${each.method} ${each.path}`
          assert.notStrictEqual(without.status, 400, `${where}: ${JSON.stringify(without.body)}`)
          assert.deepStrictEqual([empty.status, empty.body?.type], [without.status, without.body?.type], where)
          assert.deepStrictEqual([zero.status, zero.body?.type], [without.status, without.body?.type], where)
        }
      }))

    it.effect("a body with fields where none is taken is a 400 naming each field; a body that is no object says it must be empty or {}", () =>
      Effect.gen(function*() {
        const { call, ticket } = yield* appWithTicket("habits-fields")
        const client = yield* TestClient
        const { value: secret } = yield* client.createSecret(`habits-fields-${Math.random().toString(36).slice(2)}`)
        const endpoint = ok(yield* client.call("POST", "/v1/webhook-endpoint", { secret, body: { url: "https://hooks.example/a", events: ["*"] } }), "endpoint")

        const fields = refusal(yield* send("POST", `/v1/webhook-endpoint/${endpoint.id}/test`, secret, JSON.stringify({ force: true, retries: 3 })))
        assert.deepStrictEqual(fields, { type: "UnknownField", paths: ["force", "retries"] })
        const reply = yield* send("POST", `/v1/webhook-endpoint/${endpoint.id}/test`, secret, "{\"force\":true}")
        assert.include(reply.body.message, "Unknown field \"force\": POST /v1/webhook-endpoint/{id}/test takes no body")

        for (const body of ["[]", "null", "\"text\"", "not json"]) {
          const other = yield* send("POST", `/v1/webhook-endpoint/${endpoint.id}/rotate-secret`, secret, body)
          assert.deepStrictEqual(refusal(other), { type: "UnexpectedBody", paths: [] }, body)
          assert.include(other.body.message, "must be empty or {}")
        }
        // Nothing was sent to production by the refused call; the same call without the field goes through.
        const refused = refusal(
          yield* call.withHeaders("PUT", `/ticket/${ticket.id}/send-to-production`, {}, { now: true }).pipe(
            Effect.map((answer) => ({ status: answer.status, body: answer.json() }))
          )
        )
        assert.deepStrictEqual(refused, { type: "UnknownField", paths: ["now"] })
        assert.strictEqual(ok(yield* call("GET", `/ticket/lookup?identifier=${ticket.id}`), "ticket").state, "draft")
      }))

    it.effect("a 400 lists at most 50 problems and counts the rest; a megabyte of unknown keys answers a small 400", () =>
      Effect.gen(function*() {
        const client = yield* TestClient
        const { value: secret } = yield* client.createSecret(`habits-many-${Math.random().toString(36).slice(2)}`)
        // 200 unknown fields, and the two required ones missing: 202 problems.
        const body = Object.fromEntries(Array.from({ length: 200 }, (_, index) => [`unknown${index}`, index]))
        const reply = yield* client.call("POST", "/v1/customer", { secret, body })
        assert.strictEqual(reply.status, 400)
        const answer = reply.json()
        assert.strictEqual(answer.type, "UnknownField")
        assert.lengthOf(answer.errors, 50)
        assert.strictEqual(answer.moreErrors, 152)
        assert.strictEqual(answer.errors[0].path, "unknown0")

        // Just under the 1 MiB body limit, all unknown keys.
        const keys = Array.from({ length: 60_000 }, (_, index) => `"k${index}":1`).join(",")
        const huge = yield* send("POST", "/v1/customer", secret, `{${keys}}`)
        assert.strictEqual(refusal(huge).type, "UnknownField")
        assert.lengthOf(huge.body.errors, 50)
        assert.strictEqual(huge.body.moreErrors, 60_000 + 2 - 50)
        assert.isBelow(JSON.stringify(huge.body).length, 16 * 1024)

        // Within the limit, every problem is listed and there is no count.
        const few = (yield* client.call("POST", "/v1/customer", { secret, body: { nickname: "x" } })).json()
        assert.deepStrictEqual(few.errors.map((problem: { path: string }) => problem.path).sort(), ["email", "name", "nickname"])
        assert.notProperty(few, "moreErrors")
      }))

    it.effect("an empty list where one item is required says it must have at least one item, naming the list", () =>
      Effect.gen(function*() {
        const client = yield* TestClient
        const admin = yield* client.call("POST", "/api/v1/secret", {
          headers: { "x-admin-token": ADMIN_TOKEN },
          body: { appId: "habits-empty", ipAddresses: [] }
        })
        assert.strictEqual(admin.status, 400, admin.text)
        const refused = admin.json()
        assert.strictEqual(refused.type, "ValidationError")
        assert.deepStrictEqual(refused.errors, [{ path: "ipAddresses", message: "Invalid value for field \"ipAddresses\": must have at least one item" }])

        const { call, ticket } = yield* appWithTicket("habits-empty")
        for (
          const [path, body, field] of [
            ["/ticket-model/from-catalogue", { ticketId: ticket.id, parts: [] }, "parts"],
            ["/webhook-endpoint", { url: "https://hooks.example/a", events: [] }, "events"],
            ["/service-job/reassign-ticket-models", { fromServiceJobId: "a", toServiceJobId: "b", ticketModelIds: [] }, "ticketModelIds"]
          ] as const
        ) {
          const reply = yield* call("POST", path, body)
          assert.strictEqual(reply.status, 400, reply.text)
          const answer = reply.json()
          assert.strictEqual(answer.type, "ValidationError", path)
          assert.deepStrictEqual(answer.errors, [{ path: field, message: `Invalid value for field "${field}": must have at least one item` }], path)
        }
      }))
  })
}
