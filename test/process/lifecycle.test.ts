/**
 * The service's life as an operator sees it: started with `npm start` and
 * stopped by signalling that process, as a container runtime or a systemd
 * unit would; start-up failures as JSON lines that name the cause and the
 * variable, with an exit code that says which kind of failure it was.
 */
import { assert, describe, it } from "@effect/vitest"
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Http from "node:http"
import * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { baseEnvironment, failedStart, freePort, logLines, privatePostgresUnavailable, ROOT, runCli, startPrivatePostgres } from "../support/processes.ts"

const tempDir = () => Fs.mkdtempSync(Path.join(Os.tmpdir(), "lifecycle-"))

interface Started {
  readonly child: ChildProcess
  readonly port: number
  readonly output: () => string
  readonly exited: Promise<number | null>
}

/** Spawns `command` and waits for its "Listening on" line (or fails with what it printed). */
const started = async (command: string, args: ReadonlyArray<string>, env: Record<string, string | undefined>): Promise<Started> => {
  const port = await freePort()
  const child = spawn(command, args, { cwd: ROOT, env: { ...baseEnvironment(), REQUEST_LOG: "false", ...env, PORT: String(port) } })
  let output = ""
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()))
  child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()))
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
  const deadline = Date.now() + 45_000
  while (!output.includes("Listening on http")) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`${command} ${args.join(" ")} did not start:\n${output}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  return { child, port, output: () => output, exited }
}

/** The JSON lines of npm's output (npm adds its own banner lines around the service's). */
const serviceLines = (output: string) => logLines(output.split("\n").filter((line) => line.startsWith("{")).join("\n"))

const isRunning = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** The pid of the one child of `pid` (what `npm start` runs). */
const childOf = (pid: number) => Number(execFileSync("pgrep", ["-P", String(pid)], { encoding: "utf8" }).trim().split("\n")[0])

describe("npm start and signals", () => {
  it("SIGTERM to the npm process stops the server gracefully: shutting down, stopped, exit 0, nothing left running", async () => {
    const dataDir = tempDir()
    const npm = await started("npm", ["start"], { DATA_DIR: dataDir })
    try {
      const server = childOf(npm.child.pid!)
      assert.isTrue(isRunning(server))
      // A keep-alive connection open when the signal arrives.
      const agent = new Http.Agent({ keepAlive: true })
      const health = await new Promise<number>((resolve, reject) =>
        Http.get({ host: "127.0.0.1", port: npm.port, path: "/health", agent }, (response) => {
          response.resume()
          response.once("end", () => resolve(response.statusCode!))
        }).once("error", reject)
      )
      assert.strictEqual(health, 200)

      npm.child.kill("SIGTERM")
      assert.strictEqual(await npm.exited, 0, npm.output())
      agent.destroy()
      assert.isFalse(isRunning(server), "the server outlived npm")
      const lines = serviceLines(npm.output())
      const stopping = lines.find((line) => line.msg === "shutting down")
      const stopped = lines.find((line) => line.msg === "stopped")
      assert.deepInclude(stopping, { level: "INFO", signal: "SIGTERM", openConnections: 1 })
      assert.deepInclude(stopped, { level: "INFO", signal: "SIGTERM", connectionsClosed: 1, meterRowsWritten: 0, exitCode: 0 })
      assert.isAtLeast(lines.indexOf(stopped!), lines.indexOf(stopping!))
      // How long each part took to release: where a slow stop spends its time.
      const partsMs = stopped!.partsMs as Record<string, number>
      assert.deepStrictEqual(Object.keys(partsMs).sort(), ["http server", "services", "storage", "webhook delivery"], JSON.stringify(stopped))
      for (const ms of Object.values(partsMs)) assert.isAtLeast(ms, 0)
    } finally {
      if (npm.child.exitCode === null) npm.child.kill("SIGKILL")
      Fs.rmSync(dataDir, { recursive: true, force: true })
    }
  }, 90_000)

  it("a stop waits for the call in flight; a second signal ends it at once with 130", async () => {
    const dataDir = tempDir()
    const npm = await started("npm", ["start"], { DATA_DIR: dataDir })
    const socket = new Net.Socket()
    try {
      const { value: secret } = await runCli({ ...baseEnvironment(), DATA_DIR: dataDir }, "secret", "create", "--app", "drill", "--ip", "0.0.0.0/0")
      // An authenticated call whose body never finishes arriving: the handler waits for it.
      await new Promise<void>((resolve) => socket.connect(npm.port, "127.0.0.1", resolve))
      socket.write(
        `POST /v1/customer HTTP/1.1\r\nHost: x\r\nAuthorization: ${secret}\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"name":`
      )
      await new Promise((resolve) => setTimeout(resolve, 500))

      npm.child.kill("SIGTERM")
      await new Promise((resolve) => setTimeout(resolve, 1_500))
      assert.isNull(npm.child.exitCode, "the stop waits for the call in flight")
      assert.include(npm.output(), "shutting down")

      npm.child.kill("SIGTERM")
      assert.strictEqual(await npm.exited, 130, npm.output())
      const forced = serviceLines(npm.output()).find((line) => line.level === "WARN" && String(line.msg).startsWith("forced to stop"))
      assert.deepInclude(forced, { signal: "SIGTERM", exitCode: 130, openConnections: 1 })
      assert.notInclude(npm.output(), "\"msg\":\"stopped\"")
    } finally {
      socket.destroy()
      if (npm.child.exitCode === null) npm.child.kill("SIGKILL")
      Fs.rmSync(dataDir, { recursive: true, force: true })
    }
  }, 90_000)

  it("npm run engine stops on SIGTERM to npm as well", async () => {
    const dataDir = tempDir()
    const npm = await started("npm", ["run", "engine"], { DATA_DIR: dataDir })
    try {
      const engine = childOf(npm.child.pid!)
      npm.child.kill("SIGTERM")
      assert.strictEqual(await npm.exited, 0, npm.output())
      assert.isFalse(isRunning(engine), "the engine outlived npm")
      assert.deepInclude(serviceLines(npm.output()).find((line) => line.msg === "stopped"), { exitCode: 0 })
    } finally {
      if (npm.child.exitCode === null) npm.child.kill("SIGKILL")
      Fs.rmSync(dataDir, { recursive: true, force: true })
    }
  }, 90_000)
})

describe("Start-up failures", () => {
  it("invalid variables: every one named in its own JSON line, whichever others are set, exit 78", async () => {
    const dataDir = tempDir()
    try {
      const { code, output } = await failedStart("src/main.ts", {
        DATA_DIR: dataDir,
        METER_FLUSH_WINDOW_MS: "-5",
        DOWNSTREAM_TIMEOUT_MS: "ten",
        DOWNSTREAM_URL: undefined,
        OTEL_METRIC_EXPORT_INTERVAL: "often"
      })
      assert.strictEqual(code, 78, output)
      const lines = logLines(output)
      assert.deepStrictEqual(
        lines.map((line) => [line.level, line.variable, line.exitCode]),
        [["ERROR", "DOWNSTREAM_TIMEOUT_MS", 78], ["ERROR", "METER_FLUSH_WINDOW_MS", 78], ["ERROR", "OTEL_METRIC_EXPORT_INTERVAL", 78]]
      )
      assert.strictEqual(lines[1]!.msg, "METER_FLUSH_WINDOW_MS=\"-5\" is invalid: must be integer, ms (0–1000), not -5")
    } finally {
      Fs.rmSync(dataDir, { recursive: true, force: true })
    }
  }, 40_000)

  it("the port in use: one JSON line naming the port and PORT, exit 69", async () => {
    const dataDir = tempDir()
    const blocker = Net.createServer()
    try {
      const port = await freePort()
      await new Promise<void>((resolve) => blocker.listen(port, "127.0.0.1", resolve))
      const { code, output } = await failedStart("src/main.ts", { DATA_DIR: dataDir, PORT: String(port) })
      assert.strictEqual(code, 69, output)
      const [line, ...rest] = logLines(output)
      assert.deepStrictEqual(rest, [])
      assert.deepInclude(line, { level: "ERROR", variable: "PORT", exitCode: 69 })
      assert.strictEqual(line!.msg, `port ${port} is in use (127.0.0.1:${port}): another process listens there`)
    } finally {
      blocker.close()
      Fs.rmSync(dataDir, { recursive: true, force: true })
    }
  }, 40_000)

  it("a HOST that is not an address of this machine: named, exit 78", async () => {
    const dataDir = tempDir()
    try {
      const { code, output } = await failedStart("src/main.ts", { DATA_DIR: dataDir, HOST: "not-a-host.invalid" })
      assert.strictEqual(code, 78, output)
      assert.deepInclude(logLines(output)[0], { msg: "HOST not-a-host.invalid cannot be resolved to an address", variable: "HOST" })
    } finally {
      Fs.rmSync(dataDir, { recursive: true, force: true })
    }
  }, 40_000)

  it("a second start on the same DATA_DIR says which process holds it, in a moment rather than 30 s", async () => {
    const dataDir = tempDir()
    const first = await started(Path.join(ROOT, "node_modules/.bin/node"), ["src/main.ts"], { DATA_DIR: dataDir })
    try {
      const startedAt = performance.now()
      const { code, output } = await failedStart("src/main.ts", { DATA_DIR: dataDir })
      const seconds = (performance.now() - startedAt) / 1000
      assert.strictEqual(code, 69, output)
      assert.deepInclude(logLines(output)[0], {
        level: "ERROR",
        msg: `DATA_DIR ${dataDir} is in use by process ${first.child.pid}`,
        variable: "DATA_DIR"
      })
      // The process's own start (loading the code) is most of this; the lock is given up on after 0.6 s.
      assert.isBelow(seconds, 10, "it waited as it used to (30 s)")
    } finally {
      first.child.kill("SIGTERM")
      await first.exited
      Fs.rmSync(dataDir, { recursive: true, force: true })
    }
  }, 90_000)
})

describe.skipIf(privatePostgresUnavailable() !== undefined)("PostgreSQL at start", () => {
  it("closed: a WARN line per attempt, then the cause in words naming DATABASE_URL, exit 69", async () => {
    const port = await freePort()
    const startedAt = performance.now()
    const { code, output } = await failedStart("src/main.ts", {
      DATABASE_URL: `postgres://postgres:not-logged@127.0.0.1:${port}/test`,
      DATABASE_CONNECT_TIMEOUT: "2 seconds"
    })
    assert.strictEqual(code, 69, output)
    assert.isBelow((performance.now() - startedAt) / 1000, 20)
    const lines = logLines(output)
    const attempts = lines.filter((line) => line.level === "WARN")
    assert.isAtLeast(attempts.length, 2, output)
    assert.deepInclude(attempts[0], { msg: `cannot reach PostgreSQL at 127.0.0.1:${port}: connection refused; retrying`, attempt: 1 })
    assert.deepInclude(lines.at(-1), {
      level: "ERROR",
      msg: `cannot reach PostgreSQL at 127.0.0.1:${port}: connection refused (gave up after 2s, DATABASE_CONNECT_TIMEOUT)`,
      variable: "DATABASE_URL",
      exitCode: 69
    })
    assert.notInclude(output, "not-logged")
  }, 40_000)

  it("starting late, within DATABASE_CONNECT_TIMEOUT: the service waits for it and starts", async () => {
    const cluster = await startPrivatePostgres()
    try {
      await cluster.stop("fast")
      const port = await freePort()
      const child = spawn(Path.join(ROOT, "node_modules/.bin/node"), ["src/main.ts"], {
        cwd: ROOT,
        env: { ...baseEnvironment(), DATABASE_URL: cluster.url, PORT: String(port), REQUEST_LOG: "false" }
      })
      let output = ""
      child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()))
      child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()))
      try {
        const until = async (what: () => boolean, ms: number) => {
          const deadline = Date.now() + ms
          while (!what()) {
            if (Date.now() > deadline || child.exitCode !== null) throw new Error(`gave up waiting:\n${output}`)
            await new Promise((resolve) => setTimeout(resolve, 100))
          }
        }
        await until(() => logLines(output).filter((line) => line.level === "WARN").length >= 2, 20_000)
        await cluster.start()
        await until(() => output.includes("Listening on http"), 30_000)
        assert.strictEqual((await fetch(`http://127.0.0.1:${port}/ready`)).status, 200)
      } finally {
        child.kill("SIGTERM")
        await new Promise((resolve) => child.once("exit", resolve))
      }
    } finally {
      await cluster.remove()
    }
  }, 90_000)
})
