/**
 * The service as its own process, for tests that need one (SIGKILL, several
 * instances, the CLI beside a server, exported telemetry).
 */
import { type ChildProcess, execFile, execFileSync, spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { promisify } from "node:util"

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
/** `npm run cli -- <args>` in `env`, its JSON output parsed. */
export const runCli = async (env: Record<string, string | undefined>, ...args: Array<string>) => {
  const { stdout } = await promisify(execFile)(NODE, ["src/cli.ts", ...args], { cwd: ROOT, env, timeout: 30_000 })
  return JSON.parse(stdout)
}

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
      if (output.includes("Listening on http")) {
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
  const stop = () => stopGracefully(child, () => output)
  return { child, base: `http://127.0.0.1:${port}`, output: () => output, stop }
}

/**
 * A graceful stop takes at most this long: the service bounds what it waits
 * for (its webhook delivery 10 s, its calls in flight the drills' own), so a
 * stop past it is a hang, reported with the service's own account of it.
 */
const STOP_WITHIN_MS = 45_000

/** SIGTERM, and the exit; a stop past STOP_WITHIN_MS is killed and fails naming what the service said it waited on. */
const stopGracefully = (child: ChildProcess, output: () => string) =>
  child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        child.kill("SIGKILL")
        const waiting = output().split("\n").filter((line) => line.includes("the graceful stop is still waiting")).at(-1)
        reject(
          new Error(
            `the service did not stop within ${STOP_WITHIN_MS} ms of SIGTERM (${waiting ?? "no part named"}); its output ends:\n${output().slice(-4_000)}`
          )
        )
      }, STOP_WITHIN_MS)
      child.once("exit", () => {
        clearTimeout(timer)
        resolve()
      })
      child.kill("SIGTERM")
    })

// ---------------------------------------------------------------------------
// A private PostgreSQL cluster, for drills that stop and start the database
// (the shared server on :5432 serves everybody's tests and must stay up).

/** The directory of PostgreSQL's server binaries (initdb, pg_ctl), the newest installed. */
const postgresBinDir = (): string | undefined => {
  const root = "/usr/lib/postgresql"
  if (!Fs.existsSync(root)) return undefined
  const versions = Fs.readdirSync(root)
    .filter((version) => Fs.existsSync(Path.join(root, version, "bin", "pg_ctl")))
    .sort((a, b) => Number(b) - Number(a))
  return versions.length === 0 ? undefined : Path.join(root, versions[0]!, "bin")
}

/** initdb and postgres refuse to run as root: as root, the cluster belongs to the `postgres` OS user. */
const isRoot = () => process.getuid?.() === 0

const osUser = (name: string): { uid: number; gid: number } | undefined => {
  try {
    const [uid, gid] = ["-u", "-g"].map((flag) => Number(execFileSync("id", [flag, name], { encoding: "utf8" }).trim()))
    return { uid: uid!, gid: gid! }
  } catch {
    return undefined
  }
}

/** Why a private cluster cannot be started here, or undefined when it can. */
export const privatePostgresUnavailable = (): string | undefined => {
  if (postgresBinDir() === undefined) return "no PostgreSQL server binaries under /usr/lib/postgresql/*/bin"
  if (isRoot() && osUser("postgres") === undefined) return "running as root and there is no `postgres` OS user to own the cluster"
  return undefined
}

export interface PrivatePostgres {
  /** `postgres://postgres@127.0.0.1:<port>/postgres` */
  readonly url: string
  /** `pg_ctl stop -m <mode>`: `fast` disconnects sessions and shuts down cleanly, `immediate` is a crash. */
  readonly stop: (mode: "fast" | "immediate") => Promise<void>
  /** `pg_ctl start`, on the same port, waiting until it accepts connections. */
  readonly start: () => Promise<void>
  /** Stops the cluster if it runs and deletes its files. */
  readonly remove: () => Promise<void>
  /** The server's log. */
  readonly log: () => string
}

/** initdb into a fresh temp dir and start the cluster on a free port (unix socket in that dir). */
export const startPrivatePostgres = async (): Promise<PrivatePostgres> => {
  const unavailable = privatePostgresUnavailable()
  if (unavailable !== undefined) throw new Error(unavailable)
  const bin = postgresBinDir()!
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "pgdrill-"))
  const owner = isRoot() ? osUser("postgres") : undefined
  if (owner !== undefined) Fs.chownSync(dir, owner.uid, owner.gid)
  const run = (tool: string, args: ReadonlyArray<string>) =>
    new Promise<void>((resolve, reject) => {
      const [command, argv] = owner === undefined
        ? [Path.join(bin, tool), args]
        : ["runuser", ["-u", "postgres", "--", Path.join(bin, tool), ...args]]
      execFile(command, argv as Array<string>, { timeout: 30_000 }, (error, stdout, stderr) =>
        error === null ? resolve() : reject(new Error(`${tool} ${args.join(" ")}: ${error.message}\n${stdout}\n${stderr}`)))
    })
  const data = Path.join(dir, "data")
  const logFile = Path.join(dir, "server.log")
  const port = await freePort()
  // fsync off: the drills kill PostgreSQL, never the machine, so what a commit wrote to the OS survives.
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`
  const start = () => run("pg_ctl", ["-D", data, "-o", options, "-l", logFile, "-w", "-t", "30", "start"])
  let running = false
  try {
    await run("initdb", ["-D", data, "-A", "trust", "-U", "postgres", "-E", "UTF8", "--no-sync"])
    await start()
    running = true
  } catch (error) {
    Fs.rmSync(dir, { recursive: true, force: true })
    throw error
  }
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    stop: async (mode) => {
      await run("pg_ctl", ["-D", data, "-m", mode, "-w", "-t", "30", "stop"])
      running = false
    },
    start: async () => {
      await start()
      running = true
    },
    remove: async () => {
      if (running) await run("pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"]).catch(() => undefined)
      Fs.rmSync(dir, { recursive: true, force: true })
    },
    log: () => {
      try {
        return Fs.readFileSync(logFile, "utf8")
      } catch {
        return ""
      }
    }
  }
}

/**
 * Starts `node <script>` (e.g. `src/engineMain.ts`) with `env` on `port`
 * (a free one when omitted) and waits until it listens. `kill` ends it with
 * SIGKILL, as a crash would.
 */
export const startNodeServer = async (
  script: string,
  env: Record<string, string | undefined>,
  options: { readonly port?: number; readonly timeoutMs?: number } = {}
): Promise<ServiceProcess & { readonly port: number; readonly kill: () => Promise<void> }> => {
  const port = options.port ?? await freePort()
  const timeoutMs = options.timeoutMs ?? 45_000
  const child = spawn(NODE, [script], {
    cwd: ROOT,
    env: { ...baseEnvironment(), ...env, PORT: String(port) },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let output = ""
  const onData = (chunk: Buffer) => {
    output += chunk.toString()
  }
  child.stdout!.on("data", onData)
  child.stderr!.on("data", onData)
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve()
    else child.once("exit", () => resolve())
  })
  const end = (signal: NodeJS.Signals) => () => {
    if (signal === "SIGTERM") return stopGracefully(child, () => output)
    if (child.exitCode === null && child.signalCode === null) child.kill(signal)
    return exited
  }
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${script} did not start within ${timeoutMs} ms:\n${output}`)), timeoutMs)
    const check = setInterval(() => {
      if (output.includes("Listening on http")) {
        clearTimeout(timer)
        clearInterval(check)
        resolve()
      }
    }, 20)
    void exited.then(() => {
      clearTimeout(timer)
      clearInterval(check)
      reject(new Error(`${script} exited (${child.exitCode ?? child.signalCode}) before listening:\n${output}`))
    })
  }).catch(async (error: unknown) => {
    await end("SIGKILL")()
    throw error
  })
  return { child, port, base: `http://127.0.0.1:${port}`, output: () => output, stop: end("SIGTERM"), kill: end("SIGKILL") }
}

/**
 * Runs `script` (`src/main.ts`, `src/engineMain.ts`) with `env` until it
 * exits, for a start that must fail: its exit code and everything it wrote.
 * A start that does not fail is killed after 30 seconds (exit code null).
 */
/** A process's output as the JSON log lines it must be: a line that is not one JSON object fails the test. */
export const logLines = (output: string): ReadonlyArray<Record<string, unknown> & { readonly msg?: string; readonly level?: string }> =>
  output.split("\n").filter((line) => line.trim() !== "").map((line) => {
    try {
      const parsed: unknown = JSON.parse(line)
      if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) return parsed as Record<string, unknown>
    } catch {
      // reported below
    }
    throw new Error(`not a JSON log line: ${line}`)
  })

export const failedStart = async (script: string, env: Record<string, string | undefined>) => {
  const port = await freePort()
  return new Promise<{ readonly code: number | null; readonly output: string }>((resolve) => {
    const child = spawn(NODE, [script], { cwd: ROOT, env: { ...baseEnvironment(), PORT: String(port), ...env }, stdio: ["ignore", "pipe", "pipe"] })
    let output = ""
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()))
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()))
    const timer = setTimeout(() => child.kill("SIGKILL"), 30_000)
    child.once("exit", (code) => {
      clearTimeout(timer)
      resolve({ code, output })
    })
  })
}
