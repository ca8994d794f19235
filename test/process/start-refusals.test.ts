/**
 * Starts that must not happen: configuration that could never work, or that
 * would open the service to anyone, stops the process with a message naming
 * the variable, before it listens.
 */
import { assert, describe, it } from "@effect/vitest"
import { spawn } from "node:child_process"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { baseEnvironment, failedStart, freePort, logLines, ROOT, startNodeServer } from "../support/processes.ts"

const withDataDir = async <A>(run: (dataDir: string) => Promise<A>) => {
  const dataDir = await mkdtemp(join(tmpdir(), "start-refusals-"))
  try {
    return await run(dataDir)
  } finally {
    await rm(dataDir, { recursive: true, force: true })
  }
}

describe("Start-up refusals", () => {
  it("the engine on an address other than loopback without ENGINE_TOKEN", () =>
    withDataDir(async (dataDir) => {
      const { code, output } = await failedStart("src/engineMain.ts", { DATA_DIR: dataDir, HOST: "0.0.0.0", ENGINE_TOKEN: undefined })
      assert.strictEqual(code, 78, output)
      assert.deepInclude(logLines(output)[0], { variable: "ENGINE_TOKEN" })
      assert.include(output, "ENGINE_TOKEN must be set when the engine listens on HOST=0.0.0.0")
      assert.notInclude(output, "Listening on")
    }), 40_000)

  it("the engine on loopback without ENGINE_TOKEN still starts (one machine, nobody else reaches it)", () =>
    withDataDir(async (dataDir) => {
      const engine = await startNodeServer("src/engineMain.ts", { DATA_DIR: dataDir, HOST: "127.0.0.1", ENGINE_TOKEN: undefined })
      try {
        assert.strictEqual((await fetch(`${engine.base}/health`)).status, 200)
      } finally {
        await engine.stop()
      }
    }), 60_000)

  it("the gateway with an ADMIN_TOKEN of spaces", () =>
    withDataDir(async (dataDir) => {
      const { code, output } = await failedStart("src/main.ts", { DATA_DIR: dataDir, ADMIN_TOKEN: " ".repeat(16) })
      assert.strictEqual(code, 78, output)
      assert.deepInclude(logLines(output)[0], { msg: "ADMIN_TOKEN=(secret, not shown) is invalid: it is blank", variable: "ADMIN_TOKEN" })
      assert.notInclude(output, "Listening on")
    }), 40_000)
})

describe("Start-up messages that say the cause", () => {
  it("`npm start` writes JSON lines only to stdout (no npm banner)", async () => {
    const { code, stdout } = await new Promise<{ code: number | null; stdout: string }>((resolve) => {
      const child = spawn("npm", ["start"], { cwd: ROOT, env: { ...baseEnvironment(), PORT: "not-a-port" }, stdio: ["ignore", "pipe", "ignore"] })
      let stdout = ""
      child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()))
      child.once("exit", (code) => resolve({ code, stdout }))
    })
    assert.strictEqual(code, 78, stdout)
    const lines = stdout.split("\n").filter((line) => line !== "")
    assert.isAbove(lines.length, 0)
    for (const line of lines) assert.doesNotThrow(() => JSON.parse(line), line)
    assert.deepInclude(JSON.parse(lines[0]!), { variable: "PORT", exitCode: 78 })
  }, 40_000)

  it("DATABASE_CONNECT_TIMEOUT in the table's compact form (3s) is accepted", () =>
    withDataDir(async (dataDir) => {
      const closed = await freePort()
      const { code, output } = await failedStart("src/main.ts", {
        DATA_DIR: dataDir,
        DATABASE_URL: `postgres://postgres@127.0.0.1:${closed}/test`,
        DATABASE_CONNECT_TIMEOUT: "3s"
      })
      assert.strictEqual(code, 69, output)
      assert.include(output, `cannot reach PostgreSQL at 127.0.0.1:${closed}: connection refused (gave up after 3s, DATABASE_CONNECT_TIMEOUT)`)
    }), 40_000)

  it.skipIf(process.env.TEST_DATABASE_URL === undefined)(
    "a database or a role that does not exist stops the start with PostgreSQL's own message (78)",
    async () => {
      for (
        const [user, database, message] of [
          ["postgres", "no_such_database_here", `database "no_such_database_here" does not exist (3D000)`],
          ["no_such_role_here", "test", `role "no_such_role_here" does not exist (28000)`]
        ] as const
      ) {
        const url = new URL(process.env.TEST_DATABASE_URL!)
        url.username = user
        url.pathname = `/${database}`
        const { code, output } = await failedStart("src/main.ts", { DATABASE_URL: url.toString() })
        assert.strictEqual(code, 78, output)
        const last = logLines(output).at(-1)!
        assert.deepInclude(last, { variable: "DATABASE_URL", exitCode: 78 })
        assert.include(last.msg, message)
      }
    },
    60_000
  )
})
