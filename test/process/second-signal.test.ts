/**
 * A second signal always ends a graceful stop: `npm start` (as an operator
 * runs it) with a call stuck on a remote engine that accepts the connection
 * and never answers, SIGINT twice to npm a moment apart, and the process is
 * gone within 3 seconds of the second.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { baseEnvironment, freePort, ROOT } from "../support/processes.ts"

const ADMIN_TOKEN = "second-signal-admin-token-0123"

describe("a second SIGINT to npm start", () => {
  const dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "mfg-second-signal-"))
  const held: Array<Net.Socket> = []
  // The engine: takes every connection and never says a word.
  const silentEngine = Net.createServer((socket) => void held.push(socket))
  let npm: ChildProcess | undefined

  afterAll(async () => {
    npm?.kill("SIGKILL")
    for (const socket of held) socket.destroy()
    silentEngine.close()
    Fs.rmSync(dataDir, { recursive: true, force: true })
  })

  it("ends the process within 3 s of the second signal while a call waits for the engine", async () => {
    await new Promise<void>((resolve) => silentEngine.listen(0, "127.0.0.1", resolve))
    const port = await freePort()
    const base = `http://127.0.0.1:${port}`
    npm = spawn("npm", ["start"], {
      cwd: ROOT,
      env: {
        ...baseEnvironment(),
        PORT: String(port),
        DATA_DIR: dataDir,
        ADMIN_TOKEN,
        DOWNSTREAM_URL: `http://127.0.0.1:${(silentEngine.address() as Net.AddressInfo).port}`,
        DOWNSTREAM_TIMEOUT_MS: "120000"
      },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let output = ""
    npm.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()))
    npm.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()))
    const exited = new Promise<number | null>((resolve) => npm!.once("exit", (code) => resolve(code)))
    for (let attempt = 0; attempt < 200 && !output.includes("Listening on http"); attempt++) await new Promise((r) => setTimeout(r, 200))
    expect(output).toContain("Listening on http")

    const secret = ((await (await fetch(`${base}/api/v1/secret`, {
      method: "POST",
      headers: { "x-admin-token": ADMIN_TOKEN, "content-type": "application/json" },
      body: JSON.stringify({ appId: "stuck", ipAddresses: ["0.0.0.0/0"] })
    })).json()) as { value: string }).value
    // The call that never ends: the graceful stop would wait for it.
    void fetch(`${base}/v1/customer/c-1`, { headers: { authorization: secret } }).catch(() => undefined)
    for (let attempt = 0; attempt < 50 && held.length === 0; attempt++) await new Promise((r) => setTimeout(r, 100))
    expect(held.length).toBeGreaterThan(0)

    npm.kill("SIGINT")
    await new Promise((resolve) => setTimeout(resolve, 400))
    npm.kill("SIGINT")
    const secondAt = performance.now()
    const code = await Promise.race([exited, new Promise<"still running">((resolve) => setTimeout(() => resolve("still running"), 10_000))])
    expect(code, output).not.toBe("still running")
    expect(performance.now() - secondAt).toBeLessThan(3_000)
    expect(output).toContain("forced to stop by a second signal (SIGINT)")
  }, 90_000)
})
