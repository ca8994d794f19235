/**
 * Rate limits across processes:
 *
 * - a malformed RATE_LIMIT or REDIS_URL stops the start, naming the variable;
 * - the CLI sets, shows and clears an app's override on the embedded store
 *   beside a running server, which applies it within POLICY_TTL_MS;
 * - two gateways on one Redis (a private redis-server on a free port) share
 *   one budget per app; while Redis hangs or is gone, each counts the budget
 *   in its own memory (never every call through, never every call refused),
 *   warns once, stays ready (`/ready` 200, Redis named as degraded), and
 *   shares the budget again once Redis is back;
 * - a Redis restart that lost its counters does not hand the app a fresh
 *   budget: each gateway adds back what it took before and admitted meanwhile.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { promisify } from "node:util"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { POLICY_TTL_MS } from "../../src/gateway/request/RateLimiting.ts"
import { baseEnvironment, failedStart, freePort, logLines, NODE, ROOT, runCli, type ServiceProcess, startService } from "../support/processes.ts"

const run = promisify(execFile)
const ADMIN_TOKEN = "rate-limits-admin-token-0123456789"
const PROBE = "/v1/customer/missing"
const REDIS_SERVER = "/usr/bin/redis-server"

const tempDir = (prefix: string) => Fs.mkdtempSync(Path.join(Os.tmpdir(), prefix))
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const get = async (base: string, secret: string) => {
  const reply = await fetch(`${base}${PROBE}`, { headers: { authorization: secret }, signal: AbortSignal.timeout(10_000) })
  await reply.arrayBuffer()
  return { status: reply.status, policy: reply.headers.get("ratelimit-policy"), limit: reply.headers.get("ratelimit") }
}

const createSecret = async (base: string, appId: string) => {
  const reply = await fetch(`${base}/api/v1/secret`, {
    method: "POST",
    headers: { "x-admin-token": ADMIN_TOKEN, "content-type": "application/json" },
    body: JSON.stringify({ appId, ipAddresses: ["0.0.0.0/0"] })
  })
  assert.strictEqual(reply.status, 201)
  return ((await reply.json()) as { value: string }).value
}

describe("Rate limit configuration at start", () => {
  for (
    const [name, value, expected] of [
      ["RATE_LIMIT", "lots", "RATE_LIMIT=\"lots\" is invalid: \"lots\" is not <limit>/<window>"],
      ["RATE_LIMIT", "0/60s", "RATE_LIMIT=\"0/60s\" is invalid: \"0/60s\" is not <limit>/<window>"],
      ["RATE_LIMIT", "10/48h", "RATE_LIMIT=\"10/48h\" is invalid: the window of \"10/48h\" is longer than 24h"],
      ["REDIS_URL", "http://127.0.0.1:6379", "REDIS_URL=(secret, not shown) is invalid: must be a redis:// or rediss:// URL"]
    ] as const
  ) {
    it(`${name}=${value} stops the start, naming ${name}`, async () => {
      const dataDir = tempDir("rate-limit-start-")
      try {
        const { code, output } = await failedStart("src/main.ts", { DATA_DIR: dataDir, [name]: value })
        assert.strictEqual(code, 78, output)
        const refusal = logLines(output).find((line) => line.variable === name)
        assert.include(refusal?.msg, expected)
        assert.notInclude(output, "Listening on")
      } finally {
        Fs.rmSync(dataDir, { recursive: true, force: true })
      }
    }, 40_000)
  }
})

describe("Rate limit overrides through the CLI beside a running server", () => {
  let dataDir = ""
  let env: Record<string, string | undefined> = {}
  beforeAll(() => {
    dataDir = tempDir("rate-limit-cli-")
    env = { ...baseEnvironment(), DATA_DIR: dataDir, RATE_LIMIT: "3/60s" }
  })
  const cli = (...args: Array<string>) => runCli(env, ...args)
  let server: ServiceProcess | undefined

  afterAll(async () => {
    await server?.stop()
    if (dataDir !== "") Fs.rmSync(dataDir, { recursive: true, force: true })
  })

  /** Calls until the answers carry `policy`: how long the running server took to apply a change. */
  const until = async (secret: string, policy: string) => {
    const started = Date.now()
    for (;;) {
      const reply = await get(server!.base, secret)
      if (reply.policy === policy) return Date.now() - started
      if (Date.now() - started > POLICY_TTL_MS + 3_000) assert.fail(`still ${reply.policy} after ${Date.now() - started} ms`)
      await sleep(250)
    }
  }

  it("sets, shows and clears an override; the server applies each within POLICY_TTL_MS", async () => {
    server = await startService({ DATA_DIR: dataDir, RATE_LIMIT: "3/60s", ADMIN_TOKEN })
    const secret = (await cli("secret", "create", "--app", "cli-limited", "--ip", "0.0.0.0/0")).value as string
    assert.strictEqual((await get(server.base, secret)).policy, "\"default\";q=3;w=60")

    const set = await cli("rate-limit", "set", "--app", "cli-limited", "1000/1m")
    assert.deepInclude(set, { appId: "cli-limited", source: "override", limit: 1000, windowSeconds: 60 })
    assert.deepStrictEqual(await cli("rate-limit", "get", "--app", "cli-limited"), set)
    assert.isAtMost(await until(secret, "\"app\";q=1000;w=60"), POLICY_TTL_MS + 1_000)

    const cleared = await cli("rate-limit", "clear", "--app", "cli-limited")
    assert.deepStrictEqual(cleared, { appId: "cli-limited", source: "default", limit: 3, windowSeconds: 60, updatedAt: null })
    assert.isAtMost(await until(secret, "\"default\";q=3;w=60"), POLICY_TTL_MS + 1_000)
  }, 120_000)

  it("refuses a malformed budget with a message, exit code 1", async () => {
    const refused = await run(NODE, ["src/cli.ts", "rate-limit", "set", "--app", "cli-limited", "fast"], { cwd: ROOT, env, timeout: 30_000 })
      .then(() => undefined, (error: { code: number; stderr: string; stdout: string }) => error)
    assert.isDefined(refused, "the CLI accepted `fast`")
    assert.strictEqual(refused!.code, 1)
    assert.include(refused!.stdout + refused!.stderr, "\"fast\" is not <limit>/<window>")
  }, 60_000)
})

/** A private redis-server on a free port, which the drill hangs (SIGSTOP), kills and starts again. */
const startRedis = async (port: number): Promise<ChildProcess> => {
  const child = spawn(REDIS_SERVER, ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], {
    stdio: ["ignore", "pipe", "pipe"]
  })
  let output = ""
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`redis-server did not start:\n${output}`)), 10_000)
    child.stdout!.on("data", (chunk: Buffer) => {
      output += chunk.toString()
      if (output.includes("Ready to accept connections")) {
        clearTimeout(timer)
        resolve()
      }
    })
    child.once("exit", (code) => reject(new Error(`redis-server exited (${code}):\n${output}`)))
  })
  return child
}

describe.skipIf(!Fs.existsSync(REDIS_SERVER))("Two gateways on one Redis", () => {
  let dirs: Array<string> = []
  let redisPort = 0
  let redis: ChildProcess | undefined
  let gateways: Array<ServiceProcess> = []

  beforeAll(async () => {
    dirs = [tempDir("rate-limit-redis-a-"), tempDir("rate-limit-redis-b-")]
    redisPort = await freePort()
    redis = await startRedis(redisPort)
    const env = (dataDir: string) => ({ DATA_DIR: dataDir, ADMIN_TOKEN, RATE_LIMIT: "4/60s", REDIS_URL: `redis://127.0.0.1:${redisPort}` })
    gateways = await Promise.all(dirs.map((dir) => startService(env(dir))))
  }, 90_000)

  afterAll(async () => {
    if (redis !== undefined && redis.exitCode === null) {
      redis.kill("SIGCONT")
      redis.kill("SIGKILL")
    }
    await Promise.all(gateways.map((gateway) => gateway.stop()))
    for (const dir of dirs) Fs.rmSync(dir, { recursive: true, force: true })
  }, 60_000)

  /** A new app with a secret on each gateway (each has its own database; the budget is the app's). */
  const app = async (name: string) => {
    const appId = `${name}-${randomBytes(4).toString("hex")}`
    const [a, b] = gateways as [ServiceProcess, ServiceProcess]
    return { a: { base: a.base, secret: await createSecret(a.base, appId) }, b: { base: b.base, secret: await createSecret(b.base, appId) } }
  }
  const statuses = async (target: { base: string; secret: string }, calls: number) => {
    const seen: Array<number> = []
    for (let i = 0; i < calls; i++) seen.push((await get(target.base, target.secret)).status)
    return seen
  }

  it("share one budget per app while Redis answers", async () => {
    const { a, b } = await app("shared")
    const answers = [await get(a.base, a.secret), await get(b.base, b.secret), await get(a.base, a.secret), await get(b.base, b.secret)]
    assert.deepStrictEqual(answers.map((answer) => answer.status), [200, 200, 200, 200])
    assert.deepStrictEqual(answers.map((answer) => answer.limit?.split(";")[1]), ["r=3", "r=2", "r=1", "r=0"])
    assert.strictEqual((await get(a.base, a.secret)).status, 429)
    assert.strictEqual((await get(b.base, b.secret)).status, 429)
  }, 60_000)

  it("count in each instance's memory while Redis hangs or is gone, warn, and share again once it is back", async () => {
    // Hung: commands time out (COMMAND_TIMEOUT_MS); each gateway enforces the whole budget on its own.
    redis!.kill("SIGSTOP")
    const hung = await app("hung")
    const startedAt = Date.now()
    assert.deepStrictEqual(await statuses(hung.a, 5), [200, 200, 200, 200, 429])
    assert.deepStrictEqual(await statuses(hung.b, 5), [200, 200, 200, 200, 429])
    // The watchdog drops the hung connection: one call waits about COMMAND_TIMEOUT_MS, the others none.
    assert.isBelow(Date.now() - startedAt, 5_000, "a hung Redis slowed every call")

    // Gone: the connection is refused; the same.
    redis!.kill("SIGCONT")
    redis!.kill("SIGKILL")
    await new Promise((resolve) => redis!.once("exit", resolve))
    const gone = await app("gone")
    assert.deepStrictEqual(await statuses(gone.a, 5), [200, 200, 200, 200, 429])
    assert.deepStrictEqual(await statuses(gone.b, 5), [200, 200, 200, 200, 429])
    // Still ready: the fallback serves; `/ready` names Redis as degraded.
    for (const gateway of gateways) {
      const ready = await fetch(`${gateway.base}/ready`)
      assert.strictEqual(ready.status, 200)
      const body = (await ready.json()) as { checks: Record<string, string> }
      assert.deepStrictEqual({ ...body, checks: { ...body.checks, redis: undefined } }, {
        status: "ready",
        degraded: "redis unreachable: rate limits counted in each instance's memory",
        checks: { storage: "ok", redis: undefined }
      })
      // "not connected", with the cause once a reconnection has failed ("(connection refused)").
      assert.match(body.checks.redis!, /^unreachable: not connected/)
    }
    // A warning when the outage starts (at most one more if a reconnection raced the kill), not one per call.
    for (const gateway of gateways) {
      const warnings = gateway.output().split("rate limits: Redis cannot answer").length - 1
      assert.isAtLeast(warnings, 1)
      assert.isAtMost(warnings, 2)
    }

    // Back (empty, as after a restart): both gateways reconnect on their own and count in Redis again.
    redis = await startRedis(redisPort)
    const probe = await app("probe")
    const deadline = Date.now() + 20_000
    while (!gateways.every((gateway) => gateway.output().includes("Redis answers again"))) {
      assert.isBelow(Date.now(), deadline, "the gateways did not return to Redis")
      await get(probe.a.base, probe.a.secret)
      await get(probe.b.base, probe.b.secret)
      await sleep(200)
    }
    const back = await app("back")
    assert.deepStrictEqual([...(await statuses(back.a, 2)), ...(await statuses(back.b, 3))], [200, 200, 200, 200, 429])
    for (const gateway of gateways) {
      const ready = await fetch(`${gateway.base}/ready`)
      assert.deepStrictEqual([ready.status, await ready.json()], [200, { status: "ready", checks: { storage: "ok", redis: "ok" } }])
    }
  }, 90_000)

  it("keep an app's budget across a Redis restart that lost its counters", async () => {
    const kept = await app("kept")
    // Two of the four calls counted in Redis, through gateway a.
    assert.deepStrictEqual(await statuses(kept.a, 2), [200, 200])
    const reconciled = gateways.map((gateway) => gateway.output().split("rate limits: Redis lost its counters").length)

    // Redis dies with its counters; meanwhile gateway b admits one call in its own memory.
    redis!.kill("SIGKILL")
    await new Promise((resolve) => redis!.once("exit", resolve))
    assert.deepStrictEqual(await statuses(kept.b, 1), [200])

    // Back, empty: each gateway adds what it took before (a: 2) and admitted meanwhile (b: 1).
    redis = await startRedis(redisPort)
    const deadline = Date.now() + 20_000
    while (gateways.some((gateway, index) => gateway.output().split("rate limits: Redis lost its counters").length <= reconciled[index]!)) {
      assert.isBelow(Date.now(), deadline, "the gateways did not add their counts back")
      await sleep(200)
    }
    // One call left of the four, not a fresh budget.
    assert.deepStrictEqual([...(await statuses(kept.a, 1)), ...(await statuses(kept.b, 1)), ...(await statuses(kept.a, 1))], [200, 429, 429])
  }, 60_000)
})
