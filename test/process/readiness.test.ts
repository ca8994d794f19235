/**
 * `/ready` means it: the processes as deployed, their dependencies taken away.
 *
 * - A gateway (`node src/main.ts`) with DOWNSTREAM_URL at an engine
 *   (`node src/engineMain.ts`) and REDIS_URL at Redis: ready while all
 *   answer; the engine SIGKILLed: 503 naming `engine` within seconds while
 *   `/health` stays 200; the engine started again on its port: ready again,
 *   the gateway untouched.
 * - A gateway whose REDIS_URL is a closed port and whose engine accepts
 *   connections but never answers: 503 naming both, once the engine's check
 *   has had its 2 s (checks run at once, each bounded: none hangs `/ready`).
 * - Neither the engine's token nor Redis's password is in a body or a log line.
 *
 * Storage down is drilled in postgres-restart.test.ts (`/ready` 503 naming
 * `storage` while PostgreSQL is stopped).
 */
import * as Fs from "node:fs"
import * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { assert, describe, it } from "vitest"
import { freePort, startNodeServer } from "../support/processes.ts"

type NodeServer = Awaited<ReturnType<typeof startNodeServer>>

const ENGINE_TOKEN = "readiness-drill-engine-token-0123456789"
const REDIS_PASSWORD = "readiness-drill-redis-password"
/** The shared Redis of the test machine: the gateway only PINGs it (RATE_LIMIT is off in the tests). */
const REDIS_URL = "redis://127.0.0.1:6379"
/** How soon `/ready` must follow a dependency going away or coming back: generous, for a loaded 2-core machine. */
const NOTICE_MS = 6_000
/** `/ready` with a dependency that hangs answers when its check's 2 s bound ends: this is generous for that. */
const HUNG_ANSWER_MS = 5_000
/** Starting takes seconds, and far more on a loaded machine (two embedded databases open at once). */
const STARTUP_TIMEOUT_MS = 45_000

interface Reply {
  readonly status: number
  readonly text: string
  readonly body: { readonly status?: string; readonly reason?: string; readonly degraded?: string; readonly checks?: Record<string, string> }
}

const get = async (base: string, path: string): Promise<Reply> => {
  const response = await fetch(`${base}${path}`, { signal: AbortSignal.timeout(10_000) })
  const text = await response.text()
  return { status: response.status, text, body: JSON.parse(text) as Reply["body"] }
}

/** `/ready` until `until` holds, for at most NOTICE_MS; the last answer either way. */
const readyUntil = async (base: string, until: (reply: Reply) => boolean): Promise<Reply> => {
  const deadline = Date.now() + NOTICE_MS
  for (;;) {
    const reply = await get(base, "/ready")
    if (until(reply) || Date.now() > deadline) return reply
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

const tempDir = (prefix: string) => Fs.mkdtempSync(Path.join(Os.tmpdir(), prefix))

const startEngine = (dataDir: string, port: number) =>
  startNodeServer("src/engineMain.ts", { DATA_DIR: dataDir, DATABASE_URL: undefined, ENGINE_TOKEN }, { port, timeoutMs: STARTUP_TIMEOUT_MS })

const startGateway = (dataDir: string, env: Record<string, string | undefined>) =>
  startNodeServer("src/main.ts", { DATA_DIR: dataDir, DATABASE_URL: undefined, DOWNSTREAM_URL: undefined, REDIS_URL: undefined, ...env }, {
    timeoutMs: STARTUP_TIMEOUT_MS
  })

const assertNoSecret = (what: string, text: string) => {
  assert.notInclude(text, ENGINE_TOKEN, `${what} shows ENGINE_TOKEN`)
  assert.notInclude(text, REDIS_PASSWORD, `${what} shows the password of REDIS_URL`)
}

describe("GET /ready", () => {
  it("names the engine while it is down, and is ready again once it is back; /health stays 200", async () => {
    const engineDir = tempDir("ready-engine-")
    const gatewayDir = tempDir("ready-gateway-")
    const enginePort = await freePort()
    // Each process as soon as it listens, so that one that started is killed even if the other did not.
    const started: Array<NodeServer> = []
    const track = (server: NodeServer) => {
      started.push(server)
      return server
    }
    try {
      const [first, gateway] = await Promise.all([
        startEngine(engineDir, enginePort).then(track),
        startGateway(gatewayDir, { DOWNSTREAM_URL: `http://127.0.0.1:${enginePort}`, ENGINE_TOKEN, REDIS_URL }).then(track)
      ])

      const up = await readyUntil(gateway.base, (reply) => reply.status === 200)
      assert.deepStrictEqual([up.status, up.body], [200, { status: "ready", checks: { storage: "ok", engine: "ok", redis: "ok" } }])
      // The engine's own /ready checks its storage.
      const engineReady = await get(first.base, "/ready")
      assert.deepStrictEqual([engineReady.status, engineReady.body], [200, { status: "ready", checks: { storage: "ok" } }])

      await first.kill()
      const down = await readyUntil(gateway.base, (reply) => reply.status === 503)
      assert.strictEqual(down.status, 503, `/ready ${NOTICE_MS} ms after the engine was killed: ${down.text}`)
      assert.strictEqual(down.body.status, "unavailable")
      assert.strictEqual(down.body.reason, "engine unreachable")
      assert.deepStrictEqual({ ...down.body.checks, engine: undefined }, { storage: "ok", engine: undefined, redis: "ok" })
      assert.match(down.body.checks?.engine ?? "", /^unreachable: \S/)
      assertNoSecret("/ready", down.text)
      const health = await get(gateway.base, "/health")
      assert.deepStrictEqual([health.status, health.body], [200, { status: "ok" }])
      // Refused once the killed engine's connections are gone.
      const refused = await readyUntil(gateway.base, (reply) => reply.body.checks?.engine === "unreachable: connection refused")
      assert.strictEqual(refused.body.checks?.engine, "unreachable: connection refused", refused.text)

      track(await startEngine(engineDir, enginePort))
      const back = await readyUntil(gateway.base, (reply) => reply.status === 200)
      assert.deepStrictEqual([back.status, back.body], [200, { status: "ready", checks: { storage: "ok", engine: "ok", redis: "ok" } }])
      assertNoSecret("the gateway's log", gateway.output())
    } finally {
      await Promise.all(started.map((server) => server.kill()))
      for (const dir of [engineDir, gatewayDir]) Fs.rmSync(dir, { recursive: true, force: true })
    }
  }, 90_000)

  it("names every dependency that does not answer, without waiting on one that hangs", async () => {
    const gatewayDir = tempDir("ready-redis-")
    const closedPort = await freePort()
    // An engine that accepts connections and never answers.
    const sockets = new Set<Net.Socket>()
    const silent = Net.createServer((socket) => {
      sockets.add(socket)
      socket.on("error", () => undefined)
      socket.resume()
    })
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", () => resolve()))
    const silentPort = (silent.address() as Net.AddressInfo).port
    let gateway: NodeServer | undefined
    try {
      gateway = await startGateway(gatewayDir, {
        DOWNSTREAM_URL: `http://127.0.0.1:${silentPort}`,
        ENGINE_TOKEN,
        REDIS_URL: `redis://default:${REDIS_PASSWORD}@127.0.0.1:${closedPort}`
      })
      const began = Date.now()
      const reply = await get(gateway.base, "/ready")
      const tookMs = Date.now() - began
      assert.strictEqual(reply.status, 503, reply.text)
      // Redis down is a degraded gateway, not an unready one (rate limits are counted in memory meanwhile).
      assert.deepStrictEqual(reply.body, {
        status: "unavailable",
        reason: "engine unreachable",
        degraded: "redis unreachable: rate limits counted in each instance's memory",
        checks: { storage: "ok", engine: "unreachable: no answer within 2 s", redis: "unreachable: not connected (connection refused)" }
      })
      // The checks run at once, each bounded: the answer comes about when the 2 s bound ends, however long the engine hangs.
      assert.isBelow(tookMs, HUNG_ANSWER_MS, "/ready waited on the engine that never answers")
      assertNoSecret("/ready", reply.text)
      assertNoSecret("the gateway's log", gateway.output())
      const health = await get(gateway.base, "/health")
      assert.deepStrictEqual([health.status, health.body], [200, { status: "ok" }])
    } finally {
      await gateway?.kill()
      for (const socket of sockets) socket.destroy()
      silent.close()
      Fs.rmSync(gatewayDir, { recursive: true, force: true })
    }
  }, 60_000)
})
