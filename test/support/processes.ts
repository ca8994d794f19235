/**
 * The service as its own process, for tests that need one (SIGKILL, several
 * instances, the CLI beside a server, exported telemetry).
 */
import { spawn, type ChildProcess } from "node:child_process"
import * as Net from "node:net"
import * as Path from "node:path"

export const ROOT = Path.resolve(import.meta.dirname, "../..")
export const NODE = Path.join(ROOT, "node_modules/.bin/node")

export const freePort = () =>
  new Promise<number>((resolve) => {
    const server = Net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as Net.AddressInfo
      server.close(() => resolve(port))
    })
  })

/** The environment of the tests, without DATABASE_URL (each test chooses its storage). */
export const baseEnvironment = () => {
  const { DATABASE_URL: _postgres, ...inherited } = process.env
  return inherited
}

export interface ServiceProcess {
  readonly child: ChildProcess
  readonly base: string
  readonly output: () => string
  /** SIGTERM, and wait for the exit. */
  readonly stop: () => Promise<void>
}

/** Starts `node src/main.ts` with `env` on a free port and waits until it listens. */
export const startService = async (env: Record<string, string | undefined>, timeoutMs = 45_000): Promise<ServiceProcess> => {
  const port = await freePort()
  const child = spawn(NODE, ["src/main.ts"], {
    cwd: ROOT,
    env: { ...baseEnvironment(), ...env, PORT: String(port) },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let output = ""
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the service did not start:\n${output}`)), timeoutMs)
    const onData = (chunk: Buffer) => {
      output += chunk.toString()
      if (output.includes("Listening on")) {
        clearTimeout(timer)
        resolve()
      }
    }
    child.stdout!.on("data", onData)
    child.stderr!.on("data", onData)
    child.once("exit", (code) => {
      clearTimeout(timer)
      reject(new Error(`the service exited (${code}):\n${output}`))
    })
  })
  const stop = () =>
    child.exitCode !== null || child.signalCode !== null
      ? Promise.resolve()
      : new Promise<void>((resolve) => {
        child.once("exit", () => resolve())
        child.kill("SIGTERM")
      })
  return { child, base: `http://127.0.0.1:${port}`, output: () => output, stop }
}
