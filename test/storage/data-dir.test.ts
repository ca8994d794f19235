/**
 * Data at rest is private: the embedded store's DATA_DIR and everything in it
 * belong to the service's OS user alone (directories 0700, files 0600),
 * whatever the umask, for the server and for the CLI; a DATA_DIR that others
 * can write is refused, one an older version left readable is tightened.
 *
 * The processes run with umask 022 (set here, inherited), under which PGlite
 * alone left DATA_DIR 0755 and most database files 0666.
 */
import { execFile } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { baseEnvironment, NODE, ROOT, startService } from "../support/processes.ts"

const run = promisify(execFile)

const ADMIN_TOKEN = "data-dir-test-admin-token"

const octal = (mode: number) => (mode & 0o7777).toString(8).padStart(4, "0")

/** `path` and everything under it (symbolic links not followed), with modes. */
const walk = (path: string): Array<{ readonly path: string; readonly mode: number; readonly directory: boolean }> => {
  const stats = Fs.lstatSync(path)
  const here = { path, mode: stats.mode & 0o7777, directory: stats.isDirectory() }
  return stats.isDirectory()
    ? [here, ...Fs.readdirSync(path).flatMap((name) => walk(Path.join(path, name)))]
    : [here]
}

/** The entries of `dataDir` that group or others may read, write or execute, as `mode path` lines. */
const notPrivate = (dataDir: string) => walk(dataDir).filter(({ mode }) => (mode & 0o077) !== 0).map(({ mode, path }) => `${octal(mode)} ${path}`)

const expectPrivate = (dataDir: string) => {
  const entries = walk(dataDir)
  // A real database was written: PGlite's pgdata has about a thousand files.
  expect(entries.length).toBeGreaterThan(500)
  const offenders = notPrivate(dataDir)
  expect(offenders, `readable, writable or executable by group or others:\n${offenders.join("\n")}`).toEqual([])
  expect(octal(Fs.statSync(dataDir).mode)).toBe("0700")
}

describe("DATA_DIR is private", () => {
  const scratch = Fs.mkdtempSync(Path.join(Os.tmpdir(), "mfg-data-dir-"))
  // Neither exists yet: the processes create them.
  const serverDir = Path.join(scratch, "server")
  const cliDir = Path.join(scratch, "cli")
  let umask: number | undefined

  const cli = (dataDir: string, ...args: Array<string>) =>
    run(NODE, ["src/cli.ts", ...args], { cwd: ROOT, env: { ...baseEnvironment(), DATA_DIR: dataDir }, timeout: 60_000 })

  /** The CLI's exit code and stderr, for a run expected to fail. */
  const cliFailure = async (dataDir: string, ...args: Array<string>) => {
    const failed = await cli(dataDir, ...args).then(
      () => undefined,
      (error: { code?: number; stderr?: string }) => error
    )
    expect(failed, "the CLI succeeded").toBeDefined()
    return { code: failed!.code, stderr: failed!.stderr ?? "" }
  }

  const start = (dataDir: string) => startService({ DATA_DIR: dataDir, ADMIN_TOKEN })

  beforeAll(() => {
    umask = process.umask(0o022)
  })

  afterAll(() => {
    if (umask !== undefined) process.umask(umask)
    Fs.rmSync(scratch, { recursive: true, force: true })
  })

  it("the server creates a fresh DATA_DIR private and keeps what it writes private", async () => {
    const server = await start(serverDir)
    try {
      const created = await fetch(`${server.base}/api/v1/secret`, {
        method: "POST",
        headers: { "x-admin-token": ADMIN_TOKEN, "content-type": "application/json" },
        body: JSON.stringify({ appId: "data-dir-app", ipAddresses: ["0.0.0.0/0"] })
      })
      expect(created.status).toBe(201)
      const secret = (await created.json()) as { value: string }
      const customer = await fetch(`${server.base}/v1/customer`, {
        method: "POST",
        headers: { authorization: secret.value, "content-type": "application/json" },
        body: JSON.stringify({ name: "Private", email: "private@example.com" })
      })
      expect(customer.status).toBe(200)
      // While it runs: the socket too.
      expect(notPrivate(serverDir)).toEqual([])
    } finally {
      await server.stop()
    }
    expectPrivate(serverDir)
  }, 90_000)

  it("the CLI creates a fresh DATA_DIR private as well", async () => {
    const { stdout } = await cli(cliDir, "secret", "create", "--app", "data-dir-app", "--ip", "0.0.0.0/0")
    expect(JSON.parse(stdout).value).toBeTypeOf("string")
    await cli(cliDir, "secret", "list")
    expectPrivate(cliDir)
  }, 90_000)

  it("refuses a DATA_DIR that group or others can write, naming it and the fix", async () => {
    Fs.chmodSync(serverDir, 0o777)
    const refused = await start(serverDir).then(
      async (server) => {
        await server.stop()
        return "started"
      },
      (error: Error) => error.message
    )
    // A configuration error (78), as one JSON line naming the variable.
    expect(refused).toMatch(/the service exited \(78\)/)
    expect(refused).toContain(`"variable":"DATA_DIR","exitCode":78`)
    expect(refused).toContain(`DATA_DIR ${serverDir}`)
    expect(refused).toContain("0777")
    expect(refused).toContain(`chmod 700 ${serverDir}`)

    Fs.chmodSync(serverDir, 0o775)
    const byCli = await cliFailure(serverDir, "secret", "list")
    expect(byCli.code).not.toBe(0)
    expect(byCli.stderr).toContain(`DATA_DIR ${serverDir}`)
    expect(byCli.stderr).toContain("0775")
    expect(byCli.stderr).toContain(`chmod 700 ${serverDir}`)
    // Refused, not touched.
    expect(octal(Fs.statSync(serverDir).mode)).toBe("0775")
    Fs.chmodSync(serverDir, 0o700)

    // A directory inside that others can write is refused as well.
    const base = Path.join(serverDir, "pgdata", "base")
    Fs.chmodSync(base, 0o777)
    const inside = await cliFailure(serverDir, "secret", "list")
    expect(inside.code).not.toBe(0)
    expect(inside.stderr).toContain(`DATA_DIR ${serverDir}`)
    expect(inside.stderr).toContain(`chmod 700 ${base}`)
    Fs.chmodSync(base, 0o700)
  }, 60_000)

  it("tightens a DATA_DIR an older version left readable (0755 directories, 0644 and 0666 files)", async () => {
    let index = 0
    for (const { path, directory } of walk(serverDir)) {
      Fs.chmodSync(path, directory ? 0o755 : index++ % 2 === 0 ? 0o644 : 0o666)
    }
    expect(notPrivate(serverDir).length).toBeGreaterThan(500)

    const server = await start(serverDir)
    try {
      const listed = await fetch(`${server.base}/api/v1/secret`, { headers: { "x-admin-token": ADMIN_TOKEN } })
      expect(listed.status).toBe(200)
      // The records are still there.
      expect(JSON.stringify(await listed.json())).toContain("data-dir-app")
    } finally {
      await server.stop()
    }
    expectPrivate(serverDir)
  }, 90_000)
})
