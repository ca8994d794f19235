/**
 * The CLI on the embedded store: it works whether or not a server is
 * running on the same DATA_DIR (PGlite admits one process).
 */
import { execFile, spawn, type ChildProcess } from "node:child_process"
import * as Fs from "node:fs"
import * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const ROOT = Path.resolve(import.meta.dirname, "../..")
const NODE = Path.join(ROOT, "node_modules/.bin/node")
const run = promisify(execFile)

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = Net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as Net.AddressInfo
      server.close(() => resolve(port))
    })
  })

describe("CLI on the embedded store", () => {
  const dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "mfg-cli-"))
  // The embedded store, whatever the environment running the tests says.
  const { DATABASE_URL: _postgres, ...inherited } = process.env
  const env = { ...inherited, DATA_DIR: dataDir }
  const cli = async (...args: Array<string>) => {
    const { stdout } = await run(NODE, ["src/cli.ts", ...args], { cwd: ROOT, env, timeout: 30_000 })
    return JSON.parse(stdout)
  }
  let server: ChildProcess | undefined
  let port = 0

  beforeAll(async () => {
    port = await freePort()
  })

  afterAll(async () => {
    if (server !== undefined && server.exitCode === null) {
      server.kill("SIGTERM")
      await new Promise((resolve) => server!.once("exit", resolve))
    }
    Fs.rmSync(dataDir, { recursive: true, force: true })
  })

  it("creates a secret while no server runs", async () => {
    const created = await cli("secret", "create", "--app", "cli-app", "--ip", "127.0.0.1", "--name", "first")
    expect(created.value).toMatch(/^[0-9a-f]{24}\.[A-Za-z0-9_-]{43}$/)
    expect(created.ipAddresses).toEqual(["127.0.0.1/32"])
    expect(Fs.existsSync(Path.join(dataDir, "owner.lock"))).toBe(false)
  }, 60_000)

  it("creates, lists and meters while the server holds DATA_DIR", async () => {
    server = spawn(NODE, ["src/main.ts"], { cwd: ROOT, env: { ...env, PORT: String(port) }, stdio: ["ignore", "pipe", "pipe"] })
    let output = ""
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`server did not start:\n${output}`)), 45_000)
      const onData = (chunk: Buffer) => {
        output += chunk.toString()
        if (output.includes("Listening on")) {
          clearTimeout(timer)
          resolve()
        }
      }
      server!.stdout!.on("data", onData)
      server!.stderr!.on("data", onData)
    })

    const created = await cli("secret", "create", "--app", "cli-app")
    const reply = await fetch(`http://127.0.0.1:${port}/v1/customer`, { headers: { authorization: created.value } })
    expect(reply.status).toBe(200)
    const listed = await cli("secret", "list", "--app", "cli-app")
    expect(listed.map((s: { id: string }) => s.id)).toContain(created.id)
    expect(JSON.stringify(listed)).not.toContain(created.value.split(".")[1])
    const usage = await cli("usage", "--app", "cli-app")
    expect(usage.total).toBe(1)

    await cli("secret", "delete", created.id)
    const refused = await fetch(`http://127.0.0.1:${port}/v1/customer`, { headers: { authorization: created.value } })
    expect(refused.status).toBe(401)
  }, 90_000)
})
