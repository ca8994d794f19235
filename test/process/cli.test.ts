/**
 * The CLI on the embedded store: it works whether or not a server is
 * running on the same DATA_DIR (PGlite admits one process).
 */
import { execFile } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { baseEnvironment, NODE, ROOT, runCli, type ServiceProcess, startService } from "../support/processes.ts"

describe("CLI on the embedded store", () => {
  const dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "mfg-cli-"))
  // The embedded store, whatever the environment running the tests says.
  const env = { ...baseEnvironment(), DATA_DIR: dataDir }
  const cli = (...args: Array<string>) => runCli(env, ...args)
  let server: ServiceProcess | undefined

  afterAll(async () => {
    await server?.stop()
    Fs.rmSync(dataDir, { recursive: true, force: true })
  })

  it("creates a secret while no server runs", async () => {
    const created = await cli("secret", "create", "--app", "cli-app", "--ip", "127.0.0.1", "--name", "first")
    expect(created.value).toMatch(/^[0-9a-f]{24}\.[A-Za-z0-9_-]{43}$/)
    expect(created.ipAddresses).toEqual(["127.0.0.1/32"])
    expect(Fs.existsSync(Path.join(dataDir, "owner.lock"))).toBe(false)
  }, 60_000)

  it("refuses `secret create` without --ip, naming --ip and how to allow any address; nothing is created", async () => {
    const refused = await new Promise<{ code: number | null; stdout: string; stderr: string }>((done) => {
      execFile(
        NODE,
        ["src/cli.ts", "secret", "create", "--app", "cli-no-ip"],
        { cwd: ROOT, env, timeout: 30_000 },
        (error, stdout, stderr) => done({ code: error === null ? 0 : typeof error.code === "number" ? error.code : null, stdout, stderr })
      )
    })
    expect(refused.code).toBe(1)
    expect(refused.stdout).toBe("")
    const { error } = JSON.parse(refused.stderr) as { error: { code: number; type: string; message: string; errors: Array<{ path: string }> } }
    expect([error.code, error.type]).toEqual([400, "MissingField"])
    expect(error.errors.map((problem) => problem.path)).toEqual(["--ip"])
    expect(error.message).toContain("--ip 0.0.0.0/0")
    expect(await cli("secret", "list", "--app", "cli-no-ip")).toEqual([])
  }, 60_000)

  it("creates, lists and meters while the server holds DATA_DIR", async () => {
    server = await startService({ DATA_DIR: dataDir })
    const created = await cli("secret", "create", "--app", "cli-app", "--ip", "0.0.0.0/0")
    const reply = await fetch(`${server.base}/v1/customer`, { headers: { authorization: created.value } })
    expect(reply.status).toBe(200)
    const listed = await cli("secret", "list", "--app", "cli-app")
    expect(listed.map((s: { id: string }) => s.id)).toContain(created.id)
    expect(JSON.stringify(listed)).not.toContain(created.value.split(".")[1])
    const usage = await cli("usage", "--app", "cli-app")
    expect(usage.total).toBe(1)
    expect(usage.outcomeUnknown).toBe(0)
    // A date as --to is the end of that day: today's call counts.
    const today = new Date().toISOString().slice(0, 10)
    expect((await cli("usage", "--app", "cli-app", "--from", today, "--to", today)).total).toBe(1)

    await cli("secret", "delete", created.id)
    const refused = await fetch(`${server.base}/v1/customer`, { headers: { authorization: created.value } })
    expect(refused.status).toBe(401)
  }, 90_000)

  it("gives a secret scopes, a mode and a spend limit, changes them, and seeds and empties the test data", async () => {
    // The server of the test before holds DATA_DIR: the CLI works through it.
    const base = server!.base
    const agent = await cli(
      "secret",
      "create",
      "--app",
      "cli-grants",
      "--ip",
      "0.0.0.0/0",
      "--scope",
      "read",
      "--scope",
      "quote",
      "--max-accept-total",
      "1500.50"
    )
    expect([agent.scopes, agent.mode, agent.maxAcceptTotal]).toEqual([["read", "quote"], "live", 1500.5])
    const write = () =>
      fetch(`${base}/v1/customer`, {
        method: "POST",
        headers: { authorization: agent.value, "content-type": "application/json" },
        body: "{\"name\":\"A\",\"email\":\"a@example.com\"}"
      })
    expect((await write()).status).toBe(403)
    const updated = await cli("secret", "update", agent.id, "--scope", "read", "--scope", "write", "--max-accept-total", "none")
    expect([updated.scopes, updated.maxAcceptTotal]).toEqual([["read", "write"], null])
    expect((await write()).status).toBe(200)
    const [listed] = await cli("secret", "list", "--app", "cli-grants")
    expect([listed.scopes, listed.mode, listed.maxAcceptTotal]).toEqual([["read", "write"], "live", null])

    const tester = await cli("secret", "create", "--app", "cli-grants", "--ip", "0.0.0.0/0", "--mode", "test")
    expect(tester.mode).toBe("test")
    const seeded = await cli("seed", "--app", "cli-grants", "--mode", "test")
    expect([seeded.appId, seeded.mode]).toEqual(["cli-grants", "test"])
    const customers = async (secret: string) => (await (await fetch(`${base}/v1/customer`, { headers: { authorization: secret } })).json()) as Array<unknown>
    expect(await customers(tester.value)).toHaveLength(3)
    expect(await customers(agent.value)).toHaveLength(1)
    expect((await cli("usage", "--app", "cli-grants", "--mode", "test")).total).toBe(1)

    const emptied = await cli("test-data", "empty", "--app", "cli-grants")
    expect([emptied.appId, emptied.mode]).toEqual(["cli-grants", "test"])
    expect(emptied.records).toBeGreaterThan(10)
    expect(await customers(tester.value)).toHaveLength(0)
    expect(await customers(agent.value)).toHaveLength(1)

    // A scope that does not exist is refused, naming the flag.
    await expect(cli("secret", "create", "--app", "cli-grants", "--ip", "0.0.0.0/0", "--scope", "admin")).rejects.toThrow(/scope/)
  }, 90_000)
})
