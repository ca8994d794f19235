/**
 * Rate limits per app through the HTTP surface (a budget of 3 calls per 60 s
 * unless a test sets another): the IETF `RateLimit-Policy` and `RateLimit`
 * headers on every authenticated answer (2xx, 4xx, the direct record read,
 * MCP), the 429 with `Retry-After` and the standard body once the budget is
 * spent (metered like any call), apps counted apart, the override through
 * the admin API, RATE_LIMIT=off, and the Redis store: shared counters when
 * it answers, this instance's memory when it does not.
 * Multi-instance and outage drills: test/process/rate-limits.test.ts.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Option, Redacted } from "effect"
import { randomBytes } from "node:crypto"
import { createConnection } from "node:net"
import { leaseSize } from "../../src/gateway/request/RateLimiting.ts"
import { ADMIN_TOKEN, backends } from "../support/backends.ts"
import { mcpToolCall } from "../support/mcp.ts"
import { type Reply, TestApp, TestClient } from "../support/TestApp.ts"

const admin = { "x-admin-token": ADMIN_TOKEN }
const BUDGET = { limit: 3, windowSeconds: 60 }
/** Redis keeps counters across runs and suites: every app id of a Redis test is new. */
const fresh = (name: string) => `${name}-${randomBytes(4).toString("hex")}`
/** A cheap authenticated call: the direct read of a record that does not exist (200, empty). */
const PROBE = "/v1/customer/missing"

/** `"name";r=2;t=20` → its parts. */
const rateLimitOf = (reply: Reply) => {
  const header = reply.headers.get("ratelimit")
  assert.isNotNull(header, `no RateLimit header on ${reply.status} ${reply.text}`)
  const match = /^"([a-z]+)";r=(\d+);t=(\d+)$/.exec(header!)
  assert.isNotNull(match, `RateLimit: ${header}`)
  return { name: match![1]!, remaining: Number(match![2]), reset: Number(match![3]) }
}

/**
 * Whether `reply` is the 429 of a spent budget, as an integrator sees it: the standard error body, or on MCP a JSON-RPC
 * error with the request's id (`mcpId`), so that a client reads it as this server's answer to its request.
 */
const assertRefused = (reply: Reply, mcpId?: number) => {
  assert.strictEqual(reply.status, 429, reply.text)
  const answer = reply.json()
  if (mcpId !== undefined) {
    assert.deepStrictEqual(Object.keys(answer).sort(), ["error", "id", "jsonrpc"])
    assert.strictEqual(answer.id, mcpId)
    assert.deepStrictEqual(answer.error.data, { type: "TooManyRequests" })
  }
  const body = mcpId === undefined ? answer : { ...answer.error, type: answer.error.data.type }
  assert.deepStrictEqual(Object.keys(body).sort(), ["code", "message", "type"].concat(mcpId === undefined ? [] : ["data"]).sort())
  assert.strictEqual(body.code, 429)
  assert.strictEqual(body.type, "TooManyRequests")
  assert.include(body.message, "3 calls per 60 seconds")
  const retryAfter = Number(reply.headers.get("retry-after"))
  assert.isTrue(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, `Retry-After: ${reply.headers.get("retry-after")}`)
  const limit = rateLimitOf(reply)
  assert.strictEqual(limit.remaining, 0)
  // Retry-After never points before the reset (draft-ietf-httpapi-ratelimit-headers, server behaviour).
  assert.isAtLeast(retryAfter, limit.reset)
}

for (const backend of backends) {
  layer(TestApp(backend, { rateLimit: BUDGET }), { timeout: 60_000, excludeTestServices: true })(`Rate limits (${backend})`, (it) => {
    it.effect("every authenticated answer carries the headers (a 200, the direct read, a 400); the 4th call is the 429, metered", () =>
      Effect.gen(function*() {
        const client = yield* TestClient
        const { value: secret } = yield* client.createSecret("shape")

        const created = yield* client.call("POST", "/v1/customer", { secret, body: { name: "R", email: "r@example.com" } })
        assert.strictEqual(created.status, 200, created.text)
        assert.strictEqual(created.headers.get("ratelimit-policy"), "\"default\";q=3;w=60")
        assert.deepInclude(rateLimitOf(created), { name: "default", remaining: 2 })
        assert.isAtLeast(rateLimitOf(created).reset, 1)

        // GET /v1/customer/{id}: answered by RecordReadDirect, not the router.
        const read = yield* client.call("GET", `/v1/customer/${created.json().id}`, { secret })
        assert.strictEqual(read.status, 200, read.text)
        assert.strictEqual(read.headers.get("ratelimit-policy"), "\"default\";q=3;w=60")
        assert.strictEqual(rateLimitOf(read).remaining, 1)

        const invalid = yield* client.call("POST", "/v1/customer", { secret, body: {} })
        assert.strictEqual(invalid.status, 400, invalid.text)
        assert.strictEqual(invalid.json().code, 400)
        assert.strictEqual(invalid.headers.get("ratelimit-policy"), "\"default\";q=3;w=60")
        assert.strictEqual(rateLimitOf(invalid).remaining, 0)

        const refused = yield* client.call("GET", "/v1/customer/lookup?externalReference=none", { secret })
        assertRefused(refused)
        assert.isNotNull(refused.headers.get("x-request-id"))
        // The direct read is refused the same way, and nothing was read.
        const refusedRead = yield* client.call("GET", `/v1/customer/${created.json().id}`, { secret })
        assertRefused(refusedRead)
        assert.notInclude(refusedRead.text, "r@example.com")

        // Metered like any call: 3 answered, 2 refused.
        const usage = (yield* client.call("GET", "/api/v1/usage?appId=shape", { headers: admin })).json()
        assert.strictEqual(usage.total, 5)
      }))

    it.effect("the 401 stays the one 401: no app, no budget, no headers", () =>
      Effect.gen(function*() {
        const client = yield* TestClient
        const { value: secret } = yield* client.createSecret("unknown-caller")
        for (const authorization of [undefined, `${secret}x`]) {
          for (let i = 0; i < 4; i++) {
            const reply = yield* client.call("GET", PROBE, authorization === undefined ? {} : { secret: authorization })
            assert.strictEqual(reply.status, 401)
            assert.strictEqual(reply.text, JSON.stringify({ code: 401, message: "Not Authorized" }))
            assert.isNull(reply.headers.get("ratelimit"))
            assert.isNull(reply.headers.get("ratelimit-policy"))
          }
        }
        // Refused secrets spent nothing of the app's budget.
        assert.strictEqual(rateLimitOf(yield* client.call("GET", PROBE, { secret })).remaining, 2)
      }))

    it.effect("each app has its own budget; every secret of an app draws on the app's", () =>
      Effect.gen(function*() {
        const client = yield* TestClient
        const { value: first } = yield* client.createSecret("busy")
        const { value: second } = yield* client.createSecret("busy")
        const { value: quiet } = yield* client.createSecret("quiet")
        for (const secret of [first, second, first]) assert.strictEqual((yield* client.call("GET", PROBE, { secret })).status, 200)
        assertRefused(yield* client.call("GET", PROBE, { secret: second }))
        const other = yield* client.call("GET", PROBE, { secret: quiet })
        assert.strictEqual(other.status, 200)
        assert.strictEqual(rateLimitOf(other).remaining, 2)
      }))

    it.effect("an MCP call carries the headers, and is refused with the 429 once the budget is spent", () =>
      Effect.gen(function*() {
        const client = yield* TestClient
        const { value: secret } = yield* client.createSecret("mcp-limited")
        const toolCall = () =>
          Effect.promise(async () => {
            const response = await mcpToolCall(client.baseUrl, secret, "lookup_ticket", { identifier: "T-999999" })
            const text = await response.text()
            return { status: response.status, headers: response.headers, text, json: () => JSON.parse(text) } satisfies Reply
          })
        const answered = yield* toolCall()
        assert.strictEqual(answered.status, 200, answered.text)
        assert.strictEqual(answered.json().jsonrpc, "2.0")
        assert.strictEqual(answered.headers.get("ratelimit-policy"), "\"default\";q=3;w=60")
        assert.deepInclude(rateLimitOf(answered), { name: "default", remaining: 2 })
        yield* toolCall()
        yield* toolCall()
        // The request's id (1) is echoed: the status stays 429, the body is MCP's.
        assertRefused(yield* toolCall(), 1)
      }))

    it.effect("an override set through the admin API is in force at once; cleared, the default is back", () =>
      Effect.gen(function*() {
        const client = yield* TestClient
        const { value: secret } = yield* client.createSecret("vip")
        assert.strictEqual((yield* client.call("GET", PROBE, { secret })).headers.get("ratelimit-policy"), "\"default\";q=3;w=60")

        const before = yield* client.call("GET", "/api/v1/app/vip/rate-limit", { headers: admin })
        assert.deepStrictEqual(before.json(), { appId: "vip", source: "default", limit: 3, windowSeconds: 60, updatedAt: null })

        const set = yield* client.call("PUT", "/api/v1/app/vip/rate-limit", { headers: admin, body: { limit: 5, windowSeconds: 10 } })
        assert.strictEqual(set.status, 200, set.text)
        assert.deepInclude(set.json(), { appId: "vip", source: "override", limit: 5, windowSeconds: 10 })
        const read = (yield* client.call("GET", "/api/v1/app/vip/rate-limit", { headers: admin })).json()
        assert.strictEqual(read.source, "override")
        assert.strictEqual(read.updatedAt, set.json().updatedAt)

        // A new budget starts whole: 5 calls, then the 429.
        for (let i = 4; i >= 0; i--) {
          const reply = yield* client.call("GET", PROBE, { secret })
          assert.strictEqual(reply.status, 200, reply.text)
          assert.strictEqual(reply.headers.get("ratelimit-policy"), "\"app\";q=5;w=10")
          assert.deepInclude(rateLimitOf(reply), { name: "app", remaining: i })
        }
        const over = yield* client.call("GET", PROBE, { secret })
        assert.strictEqual(over.status, 429)
        assert.include(over.json().message, "5 calls per 10 seconds")

        const cleared = yield* client.call("DELETE", "/api/v1/app/vip/rate-limit", { headers: admin })
        assert.strictEqual(cleared.status, 204)
        assert.strictEqual((yield* client.call("GET", "/api/v1/app/vip/rate-limit", { headers: admin })).json().source, "default")
        const back = yield* client.call("GET", PROBE, { secret })
        assert.strictEqual(back.headers.get("ratelimit-policy"), "\"default\";q=3;w=60")
        // The default's counter went on from where it was: 1 call before the override, 1 now.
        assert.strictEqual(rateLimitOf(back).remaining, 1)
      }))

    it.effect("the admin endpoints check their token and input", () =>
      Effect.gen(function*() {
        const client = yield* TestClient
        const noToken = yield* client.call("PUT", "/api/v1/app/vip/rate-limit", { body: { limit: 5, windowSeconds: 10 } })
        assert.strictEqual(noToken.status, 401)
        for (const body of [{ limit: 0, windowSeconds: 10 }, { limit: 5 }, { limit: 1.5, windowSeconds: 10 }, { limit: 5, windowSeconds: 86_401 }]) {
          const reply = yield* client.call("PUT", "/api/v1/app/vip/rate-limit", { headers: admin, body })
          assert.strictEqual(reply.status, 400, JSON.stringify(body))
          assert.strictEqual(reply.json().code, 400)
        }
        const badApp = yield* client.call("GET", "/api/v1/app/%20bad/rate-limit", { headers: admin })
        assert.strictEqual(badApp.status, 400)
      }))
  })

  layer(TestApp(backend), { timeout: 60_000, excludeTestServices: true })(`Rate limits off (${backend})`, (it) => {
    it.effect("RATE_LIMIT=off: no limit and no headers, but an app's override still applies", () =>
      Effect.gen(function*() {
        const client = yield* TestClient
        const { value: free } = yield* client.createSecret("free")
        for (let i = 0; i < 5; i++) {
          const reply = yield* client.call("GET", PROBE, { secret: free })
          assert.strictEqual(reply.status, 200)
          assert.isNull(reply.headers.get("ratelimit"))
          assert.isNull(reply.headers.get("ratelimit-policy"))
        }
        assert.deepStrictEqual((yield* client.call("GET", "/api/v1/app/free/rate-limit", { headers: admin })).json(), {
          appId: "free",
          source: "default",
          limit: null,
          windowSeconds: null,
          updatedAt: null
        })
        const { value: capped } = yield* client.createSecret("capped")
        yield* client.call("PUT", "/api/v1/app/capped/rate-limit", { headers: admin, body: { limit: 1, windowSeconds: 60 } })
        const first = yield* client.call("GET", PROBE, { secret: capped })
        assert.strictEqual(first.headers.get("ratelimit-policy"), "\"app\";q=1;w=60")
        assert.strictEqual((yield* client.call("GET", PROBE, { secret: capped })).status, 429)
      }))
  })

  const redis = Option.some(Redacted.make("redis://127.0.0.1:6379"))
  layer(TestApp(backend, { rateLimit: BUDGET, redisUrl: redis }), { timeout: 60_000, excludeTestServices: true })(
    `Rate limits in Redis (${backend})`,
    (it) => {
      it.effect("counts in Redis: the same headers and the same 429", () =>
        Effect.gen(function*() {
          const client = yield* TestClient
          const app = fresh("redis")
          const { value: secret } = yield* client.createSecret(app)
          for (let remaining = 2; remaining >= 0; remaining--) {
            const reply = yield* client.call("GET", PROBE, { secret })
            assert.strictEqual(reply.status, 200)
            assert.strictEqual(rateLimitOf(reply).remaining, remaining)
          }
          assertRefused(yield* client.call("GET", PROBE, { secret }))
          // The counter is Redis's: the key holds the app's 3 calls (the refused one took none).
          const count = yield* Effect.promise(() => redisGet(`mfg:ratelimit:3/60:${app}`))
          assert.strictEqual(count, "3")
        }))
    }
  )

  // A large budget in Redis is taken a lease at a time (leaseSize: a hundredth of it), not a round trip per call.
  const LEASED = { limit: 205, windowSeconds: 60 }
  layer(TestApp(backend, { rateLimit: LEASED, redisUrl: redis }), { timeout: 60_000, excludeTestServices: true })(
    `Rate limits in Redis, leased (${backend})`,
    (it) => {
      it.effect("takes units two at a time, counts the rest one by one, and refuses exactly past the budget", () =>
        Effect.gen(function*() {
          assert.strictEqual(leaseSize(LEASED.limit), 2)
          const client = yield* TestClient
          const app = fresh("leased")
          const key = `mfg:ratelimit:205/60:${app}`
          const { value: secret } = yield* client.createSecret(app)
          const first = yield* client.call("GET", PROBE, { secret })
          assert.strictEqual(rateLimitOf(first).remaining, 204)
          assert.strictEqual(yield* Effect.promise(() => redisGet(key)), "2", "one lease of two units taken")
          assert.strictEqual(rateLimitOf(yield* client.call("GET", PROBE, { secret })).remaining, 203)
          assert.strictEqual(yield* Effect.promise(() => redisGet(key)), "2", "the second call came from the lease")
          const statuses: Array<number> = []
          for (let call = 3; call <= 207; call++) statuses.push((yield* client.call("GET", PROBE, { secret })).status)
          assert.deepStrictEqual(statuses.filter((status) => status === 200).length, 203, "205 calls in all")
          assert.deepStrictEqual(statuses.slice(-2), [429, 429])
          assert.strictEqual(yield* Effect.promise(() => redisGet(key)), "205", "no unit taken that was not used")
        }))
    }
  )

  // Nothing listens on port 1: Redis is down from the start.
  const down = Option.some(Redacted.make("redis://127.0.0.1:1"))
  layer(TestApp(backend, { rateLimit: BUDGET, redisUrl: down }), { timeout: 60_000, excludeTestServices: true })(
    `Rate limits with Redis down (${backend})`,
    (it) => {
      it.effect("neither lets every call through nor refuses them all: this instance counts the budget in memory", () =>
        Effect.gen(function*() {
          const client = yield* TestClient
          const { value: secret } = yield* client.createSecret(fresh("outage"))
          const statuses: Array<number> = []
          for (let i = 0; i < 5; i++) {
            const reply = yield* client.call("GET", PROBE, { secret })
            statuses.push(reply.status)
            assert.isNotNull(reply.headers.get("ratelimit"))
          }
          assert.deepStrictEqual(statuses, [200, 200, 200, 429, 429])
        }))
    }
  )
}

/** GET of one Redis key over RESP, without a client library in the test. */
const redisGet = (key: string) =>
  new Promise<string | null>((resolve, reject) => {
    const socket = createConnection({ host: "127.0.0.1", port: 6379 })
    let data = ""
    socket.on("error", reject)
    socket.on("data", (chunk) => {
      data += chunk.toString()
      if (data.startsWith("$-1\r\n")) {
        socket.end()
        resolve(null)
      }
      const match = /^\$(\d+)\r\n/.exec(data)
      if (match !== null && data.length >= match[0].length + Number(match[1]) + 2) {
        socket.end()
        resolve(data.slice(match[0].length, match[0].length + Number(match[1])))
      }
    })
    socket.write(`*2\r\n$3\r\nGET\r\n$${Buffer.byteLength(key)}\r\n${key}\r\n`)
  })
