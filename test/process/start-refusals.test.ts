/**
 * Starts that must not happen: configuration that could never work, or that
 * would open the service to anyone, stops the process with a message naming
 * the variable, before it listens.
 */
import { assert, describe, it } from "@effect/vitest"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { failedStart, logLines, startNodeServer } from "../support/processes.ts"

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
