/**
 * Fault drill: the engine behind the gateway goes down, then is slow, then
 * comes back, while a client keeps calling.
 *
 * Two processes, as deployed: the gateway (`node src/main.ts`, DOWNSTREAM_URL)
 * and the engine (`node src/engineMain.ts`), each on its own DATA_DIR. On the
 * engine's port, in turn:
 *
 *   up        the engine                               → 2xx
 *   refused   nothing (the engine SIGKILLed)           → 502 "unreachable", at once
 *   silent    a socket that accepts and never answers  → 504 after DOWNSTREAM_TIMEOUT_MS
 *   stalled   headers sent, the body never finished    → 504 after DOWNSTREAM_TIMEOUT_MS
 *   back      the engine restarted                     → 2xx again, the gateway untouched
 *
 * Every 502/504 has the standard body and `x-error-source: engine` with the
 * call's request id; the time of each is measured against the timeout.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Fs from "node:fs"
import * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { freePort, startNodeServer } from "../support/processes.ts"
import { type Answer, isOk, sleep, timedClient } from "../support/timedClient.ts"

type NodeServer = Awaited<ReturnType<typeof startNodeServer>>

const ADMIN_TOKEN = "downstream-faults-admin-token"
const APP_ID = "downstream-drill"
const TIMEOUT_MS = 500
/** A 504 may come this much after DOWNSTREAM_TIMEOUT_MS (timer, event loop and a loaded 2-core machine). */
const TIMEOUT_MARGIN_MS = 400
/** A refused connection must be answered well before the timeout: it is detected, not waited out. */
const REFUSED_MS = TIMEOUT_MS
const RECOVERY_MS = 3_000
const LOOPS = 4
const PHASE_MS = 1_000
/** The slow phases: each loop completes at least one timed-out call that started and ended inside. */
const SLOW_PHASE_MS = 4 * TIMEOUT_MS

/** A server on `port` that the phase controls; `close` ends it and every connection it holds. */
const listen = async (port: number, onConnection: (socket: Net.Socket) => void) => {
  const sockets = new Set<Net.Socket>()
  const server = Net.createServer((socket) => {
    sockets.add(socket)
    socket.on("close", () => sockets.delete(socket))
    socket.on("error", () => undefined)
    onConnection(socket)
  })
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(port, "127.0.0.1", () => resolve())
  })
  return () =>
    new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy()
      server.close(() => resolve())
    })
}

/** Accepts, reads, never answers. */
const silentEngine = (port: number) => listen(port, (socket) => socket.resume())

/** Answers the status line, the headers and part of the body, then stalls. */
const stalledEngine = (port: number) =>
  listen(port, (socket) => {
    socket.once("data", () => {
      socket.write("HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n{\"result\":")
    })
  })

const tempDir = (prefix: string) =>
  Effect.acquireRelease(
    Effect.sync(() => Fs.mkdtempSync(Path.join(Os.tmpdir(), prefix))),
    (dir) => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true }))
  )

/** Starting takes seconds, and far more on a loaded 2-core machine (two embedded databases open at once). */
const STARTUP_TIMEOUT_MS = 90_000

const startEngine = (dataDir: string, port: number): Promise<NodeServer> =>
  startNodeServer("src/engineMain.ts", { DATA_DIR: dataDir, DATABASE_URL: undefined, ENGINE_TOKEN: undefined }, {
    port,
    timeoutMs: STARTUP_TIMEOUT_MS
  })

describe("The engine down, slow, then back, under load", () => {
  it.live("answers 502 at once, 504 at the timeout, both naming the engine, and recovers without a restart", () =>
    Effect.gen(function*() {
      const began = Date.now()
      const engineDir = yield* tempDir("drill-engine-")
      const gatewayDir = yield* tempDir("drill-gateway-")
      const enginePort = yield* Effect.promise(freePort)
      // Both start at once (each takes seconds); whichever started is killed at the end.
      const [first, gateway]: [NodeServer, NodeServer] = yield* Effect.all([
        Effect.acquireRelease(
          Effect.promise(() => startEngine(engineDir, enginePort)),
          () => Effect.promise(() => engine.kill())
        ),
        Effect.acquireRelease(
          Effect.promise(() =>
            startNodeServer("src/main.ts", {
              DATA_DIR: gatewayDir,
              DATABASE_URL: undefined,
              DOWNSTREAM_URL: `http://127.0.0.1:${enginePort}`,
              DOWNSTREAM_TIMEOUT_MS: String(TIMEOUT_MS),
              ENGINE_TOKEN: undefined,
              ADMIN_TOKEN
            }, { timeoutMs: STARTUP_TIMEOUT_MS })
          ),
          (gateway) => Effect.promise(() => gateway.kill())
        )
      ], { concurrency: 2 })
      let engine: NodeServer = first
      const startedMs = Date.now() - began
      let closeStub: (() => Promise<void>) | undefined
      yield* Effect.addFinalizer(() => Effect.promise(() => closeStub?.() ?? Promise.resolve()))

      const epoch = Date.now()
      const now = () => Date.now() - epoch
      const timed = timedClient(gateway.base, epoch, TIMEOUT_MS * 10)
      const call = (method: string, path: string, headers: Record<string, string>, body?: unknown) => timed({ method, path, headers, body })

      const { secret, customerId } = yield* Effect.promise(async () => {
        const issued = await call("POST", "/api/v1/secret", { "x-admin-token": ADMIN_TOKEN }, { appId: APP_ID, ipAddresses: ["0.0.0.0/0"] })
        assert.strictEqual(issued.status, 201, issued.body)
        const secret = (JSON.parse(issued.body) as { value: string }).value
        const created = await call("POST", "/v1/customer", { authorization: secret }, { name: "Drill", email: "drill@example.com" })
        assert.strictEqual(created.status, 200, created.body)
        return { secret, customerId: (JSON.parse(created.body) as { id: string }).id }
      })

      const answers: Array<Answer> = []
      let loading = true
      const loop = async () => {
        while (loading) answers.push(await call("GET", `/v1/customer/${customerId}`, { authorization: secret }))
      }
      const load = Promise.all(Array.from({ length: LOOPS }, loop))

      type Phase = "up" | "refused" | "silent" | "stalled" | "back"
      const windows: Array<{ phase: Phase; from: number; to: number }> = []
      const phase = async (name: Phase, enter: () => Promise<void>, leave: () => Promise<void>) => {
        await enter()
        const from = now()
        await sleep(name === "silent" || name === "stalled" ? SLOW_PHASE_MS : PHASE_MS)
        windows.push({ phase: name, from, to: now() })
        await leave()
      }

      let recoveryMs: number | undefined
      let restartMs: number | undefined
      yield* Effect.promise(async () => {
        try {
          await phase("up", async () => {}, () => engine.kill())
          await phase("refused", async () => {}, async () => {})
          await phase("silent", async () => {
            closeStub = await silentEngine(enginePort)
          }, () => closeStub!())
          await phase("stalled", async () => {
            closeStub = await stalledEngine(enginePort)
          }, async () => {
            await closeStub!()
            closeStub = undefined
          })
          await phase("back", async () => {
            const restarting = now()
            engine = await startEngine(engineDir, enginePort)
            const listening = now()
            restartMs = listening - restarting
            while (now() - listening < RECOVERY_MS && !answers.some((a) => a.startedAt >= listening && isOk(a))) await sleep(10)
            const first = answers.find((a) => a.startedAt >= listening && isOk(a))
            recoveryMs = first === undefined ? undefined : first.endedAt - listening
          }, async () => {})
        } finally {
          loading = false
          await load
        }
      })

      /** The calls that started and ended within a phase. */
      const within = (name: Phase) => {
        const window = windows.find((w) => w.phase === name)!
        return answers.filter((a) => a.startedAt >= window.from && a.endedAt <= window.to)
      }
      const summary = Object.fromEntries(windows.map(({ phase }) => {
        const calls = within(phase)
        const durations = calls.map((a) => a.endedAt - a.startedAt)
        return [phase, {
          calls: calls.length,
          statuses: [...new Set(calls.map((a) => a.status ?? a.error))],
          minMs: Math.min(...durations),
          maxMs: Math.max(...durations)
        }]
      }))
      console.log(`downstream-faults ${JSON.stringify({ startedMs, restartMs, calls: answers.length, recoveryMs, timeoutMs: TIMEOUT_MS, phases: summary })}`)

      const assertNamesEngine = (answer: Answer, status: number, body: unknown, what: string) => {
        assert.strictEqual(answer.status, status, `${what}: ${answer.status} ${answer.body} ${answer.error ?? ""}`)
        assert.deepStrictEqual(JSON.parse(answer.body), body, what)
        assert.strictEqual(answer.errorSource, "engine", what)
        assert.isNotNull(answer.requestId, what)
        assert.strictEqual(answer.errorSourceRequestId, answer.requestId, what)
      }

      for (const name of ["up", "back"] as const) {
        assert.isAbove(within(name).length, 0, name)
        for (const answer of within(name)) assert.strictEqual(answer.status, 200, `${name}: ${answer.body} ${answer.error ?? ""}`)
      }
      assert.isDefined(recoveryMs, `no 2xx within ${RECOVERY_MS} ms of the engine listening again`)

      assert.isAtLeast(within("refused").length, LOOPS, "refused: too few calls")
      for (const answer of within("refused")) {
        assertNamesEngine(answer, 502, { code: 502, message: "The engine is unreachable", type: "BadGateway" }, "refused")
        assert.isBelow(answer.endedAt - answer.startedAt, REFUSED_MS, "refused: answered only after waiting")
      }

      const timedOut = { code: 504, message: `The engine did not answer within ${TIMEOUT_MS} ms`, type: "GatewayTimeout" }
      for (const name of ["silent", "stalled"] as const) {
        assert.isAtLeast(within(name).length, LOOPS, `${name}: too few calls`)
        for (const answer of within(name)) {
          assertNamesEngine(answer, 504, timedOut, name)
          const elapsed = answer.endedAt - answer.startedAt
          assert.isAtLeast(elapsed, TIMEOUT_MS - 5, `${name}: a 504 before the timeout`)
          assert.isBelow(elapsed, TIMEOUT_MS + TIMEOUT_MARGIN_MS, `${name}: a 504 long after the timeout`)
        }
      }
      // Whenever it happened, no call went unanswered and none was a 500 or the 401.
      for (const answer of answers) assert.include([200, 502, 504], answer.status, `${answer.startedAt} ms: ${answer.body} ${answer.error ?? ""}`)

      // Every call the gateway answered was metered (before its handler ran), the 2xx ones included.
      const usage = yield* Effect.promise(() => call("GET", `/api/v1/usage?appId=${APP_ID}`, { "x-admin-token": ADMIN_TOKEN }))
      assert.strictEqual(usage.status, 200, usage.body)
      const metered = (JSON.parse(usage.body) as { total: number }).total
      assert.isAtLeast(metered, answers.filter(isOk).length + 1)
      assert.isAtLeast(metered, answers.filter((a) => a.requestId !== null).length + 1)
    }), 180_000)
})
