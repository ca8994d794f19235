/**
 * Servers under test as child processes: started with their own environment,
 * ready once they log "Listening on http" (and, if asked, once a path answers
 * 200), stopped with SIGTERM (SIGKILL if they do not go).
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { existsSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from "node:fs"
import { createServer } from "node:net"
import * as Path from "node:path"

export const REPO_ROOT = Path.resolve(import.meta.dirname, "..")

/** The project's Node 24 (the `node` package); the running one if it is missing. */
export const NODE = (() => {
  const local = Path.join(REPO_ROOT, "node_modules", ".bin", "node")
  return existsSync(local) ? local : process.execPath
})()

/** A TCP port free right now on 127.0.0.1. */
export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const probe = createServer()
    probe.once("error", reject)
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      probe.close(() => (port > 0 ? resolve(port) : reject(new Error("no free port"))))
    })
  })

const OUTPUT_KEPT = 16_384

export interface Server {
  readonly name: string
  readonly baseUrl: string
  readonly pid: number
  /** The last few kilobytes the process wrote (stdout and stderr). */
  readonly output: () => string
  /**
   * CPU time (user + system, all threads) the process and its child
   * processes (embedded PGlite's database process) have used so far, in
   * seconds (Linux only).
   */
  readonly cpuSeconds: () => number | undefined
  /**
   * Peak resident set size in MiB (VmHWM), while the process runs, of the
   * process and its child processes: the sum of each one's peak, so at least
   * the peak of the whole (Linux only).
   */
  readonly peakRssMiB: () => number | undefined
  /** Resident set size right now in MiB (VmRSS) of the process and its child processes (Linux only). */
  readonly rssMiB: () => number | undefined
  /**
   * Starts the peak (VmHWM) of the process and its child processes again
   * from their current RSS, so that peakRssMiB covers what follows (Linux
   * 4.0+, `/proc/<pid>/clear_refs`); false when the kernel does not allow it.
   */
  readonly resetPeakRss: () => boolean
  /**
   * The largest sum of the peaks (VmHWM) of the process and its child
   * processes seen while it started, sampled every 50 ms until it was ready:
   * a child that ran and exited during the start (embedded PGlite's creation
   * of a fresh DATA_DIR) counts with the others alive beside it (Linux only).
   */
  readonly startupPeakRssMiB: () => number | undefined
  readonly stop: () => Promise<void>
}

export interface ServerSpec {
  readonly name: string
  /** Arguments to node, the script first (relative to the repository root). */
  readonly args: ReadonlyArray<string>
  readonly port: number
  /** Variables set on top of this process's environment. */
  readonly env: Readonly<Record<string, string>>
  /** Variables removed from the inherited environment. */
  readonly unset?: ReadonlyArray<string>
  /** A GET path that must answer 200 before the server counts as ready. */
  readonly readyPath?: string
  readonly startTimeoutMs?: number
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

const exited = (child: ChildProcess) => child.exitCode !== null || child.signalCode !== null

const waitForExit = (child: ChildProcess, timeoutMs: number): Promise<boolean> =>
  exited(child)
    ? Promise.resolve(true)
    : new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), timeoutMs)
      child.once("exit", () => {
        clearTimeout(timer)
        resolve(true)
      })
    })

export const readStatusMiB = (pid: number, field: "VmHWM" | "VmRSS"): number | undefined => {
  try {
    const match = new RegExp(`^${field}:\\s+(\\d+)\\s+kB`, "m").exec(readFileSync(`/proc/${pid}/status`, "utf8"))
    return match === null ? undefined : Number(match[1]) / 1024
  } catch {
    return undefined
  }
}

/**
 * `pid` and every process under it (Linux: each thread's `children` file).
 * The service on embedded PGlite runs its database in a child process, whose
 * memory and CPU are the service's as much as its own are.
 */
export const processTree = (pid: number): ReadonlyArray<number> => {
  const tree = [pid]
  for (let index = 0; index < tree.length; index++) {
    let threads: Array<string>
    try {
      threads = readdirSync(`/proc/${tree[index]}/task`)
    } catch {
      continue
    }
    for (const thread of threads) {
      try {
        const children = readFileSync(`/proc/${tree[index]}/task/${thread}/children`, "utf8").trim()
        if (children !== "") tree.push(...children.split(/\s+/).map(Number))
      } catch {
        // The thread or the process ended meanwhile.
      }
    }
  }
  return tree
}

/** The sum of `read` over the process tree of `pid`; undefined when `pid` itself gives nothing. */
const sumOverTree = (pid: number, read: (pid: number) => number | undefined): number | undefined => {
  const [root, ...descendants] = processTree(pid)
  const own = read(root!)
  return own === undefined ? undefined : descendants.reduce((sum, child) => sum + (read(child) ?? 0), own)
}

export const resetPeakRss = (pid: number): boolean => {
  try {
    // "5" resets the peak resident set size to the current one (proc(5)).
    writeFileSync(`/proc/${pid}/clear_refs`, "5")
    return true
  } catch {
    return false
  }
}

const CLOCK_TICKS = (() => {
  try {
    return Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100
  } catch {
    return 100
  }
})()

const readCpuSeconds = (pid: number | string): number | undefined => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    // The fields after the command name (which may hold spaces), from field 3 on: utime is 14, stime 15.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS
  } catch {
    return undefined
  }
}

/** The local TCP ports of the sockets the processes hold open (Linux only): their ends of their connections. */
const localPorts = (pids: ReadonlyArray<number>): ReadonlySet<number> => {
  const inodes = new Set<string>()
  for (const pid of pids) {
    let fds: Array<string>
    try {
      fds = readdirSync(`/proc/${pid}/fd`)
    } catch {
      continue
    }
    for (const fd of fds) {
      try {
        const inode = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`))?.[1]
        if (inode !== undefined) inodes.add(inode)
      } catch {
        // Closed meanwhile.
      }
    }
  }
  const ports = new Set<number>()
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let lines: Array<string>
    try {
      lines = readFileSync(table, "utf8").split("\n").slice(1)
    } catch {
      continue
    }
    // Columns: sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
    for (const line of lines) {
      const columns = line.trim().split(/\s+/)
      if (columns.length > 9 && inodes.has(columns[9]!)) ports.add(Number.parseInt(columns[1]!.split(":")[1]!, 16))
    }
  }
  return ports
}

/**
 * CPU time (user + system) used so far by each PostgreSQL backend connected
 * to `database` (its process title names it; Linux only), in seconds by pid.
 * With `client`, only the backends of that server's connections (the title
 * names the client's address and port, matched against the ports its
 * processes hold): the other services on the same database, their idle
 * polls included, are not counted in its rows. Server-wide work (WAL
 * writer, checkpointer, autovacuum) is not included.
 */
export const postgresCpuSnapshot = (database: string, client?: Server): ReadonlyMap<string, number> | undefined => {
  const title = ` ${database} `
  try {
    const ports = client === undefined ? undefined : localPorts(processTree(client.pid))
    const snapshot = new Map<string, number>()
    for (const entry of readdirSync("/proc")) {
      if (!/^\d+$/.test(entry)) continue
      try {
        if (readFileSync(`/proc/${entry}/comm`, "utf8").trim() !== "postgres") continue
        const commandLine = readFileSync(`/proc/${entry}/cmdline`, "utf8")
        if (!commandLine.includes(title)) continue
        if (ports !== undefined) {
          const port = /\((\d+)\)/.exec(commandLine.slice(commandLine.indexOf(title)))?.[1]
          if (port === undefined || !ports.has(Number(port))) continue
        }
      } catch {
        continue
      }
      const seconds = readCpuSeconds(entry)
      if (seconds !== undefined) snapshot.set(entry, seconds)
    }
    return snapshot
  } catch {
    return undefined
  }
}

/**
 * The CPU time the backends used between two snapshots: what each backend
 * alive at the end used since the first (all of it for a new one). A backend
 * that exited in between is missed (pools keep theirs open under load).
 */
export const postgresCpuBetween = (
  before: ReadonlyMap<string, number> | undefined,
  after: ReadonlyMap<string, number> | undefined
): number | undefined => {
  if (before === undefined || after === undefined) return undefined
  let total = 0
  for (const [pid, seconds] of after) total += seconds - (before.get(pid) ?? 0)
  return total
}

/** Resident and peak memory (MiB) of each process of a server's tree: the server first, then its children (Linux only). */
export const memoryByProcess = (server: Server): ReadonlyArray<{ readonly pid: number; readonly rssMiB: number; readonly peakMiB: number }> =>
  processTree(server.pid).map((pid) => ({ pid, rssMiB: readStatusMiB(pid, "VmRSS") ?? Number.NaN, peakMiB: readStatusMiB(pid, "VmHWM") ?? Number.NaN }))

/** Every server started and not yet stopped, so an interrupted benchmark can stop them. */
const running = new Set<Server>()

export const stopAll = async (): Promise<void> => {
  await Promise.all([...running].map((server) => server.stop()))
}

export const startServer = async (spec: ServerSpec): Promise<Server> => {
  const env: Record<string, string | undefined> = { ...process.env }
  for (const name of spec.unset ?? []) delete env[name]
  Object.assign(env, spec.env)

  const child = spawn(NODE, [...spec.args], { cwd: REPO_ROOT, env, stdio: ["pipe", "pipe", "pipe"] })
  let output = ""
  let listening = false
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString("utf8")).slice(-OUTPUT_KEPT)
    if (!listening && output.includes("Listening on http")) listening = true
  }
  child.stdout.on("data", keep)
  child.stderr.on("data", keep)
  // The child's stdin closes when this process dies; the baselines stop then.
  child.stdin.on("error", () => {})

  const baseUrl = `http://127.0.0.1:${spec.port}`
  const pid = child.pid
  if (pid === undefined) throw new Error(`${spec.name}: could not start ${NODE}`)

  let startupPeak: number | undefined
  const sampleStartupPeak = () => {
    const now = sumOverTree(pid, (one) => readStatusMiB(one, "VmHWM"))
    if (now !== undefined) startupPeak = Math.max(startupPeak ?? 0, now)
  }
  let stopped: Promise<void> | undefined
  const server: Server = {
    name: spec.name,
    baseUrl,
    pid,
    output: () => output,
    cpuSeconds: () => (exited(child) ? undefined : sumOverTree(pid, readCpuSeconds)),
    peakRssMiB: () => (exited(child) ? undefined : sumOverTree(pid, (one) => readStatusMiB(one, "VmHWM"))),
    rssMiB: () => (exited(child) ? undefined : sumOverTree(pid, (one) => readStatusMiB(one, "VmRSS"))),
    resetPeakRss: () => !exited(child) && processTree(pid).every(resetPeakRss),
    startupPeakRssMiB: () => startupPeak,
    stop: () => {
      stopped ??= (async () => {
        if (!exited(child)) {
          child.kill("SIGTERM")
          if (!(await waitForExit(child, 15_000))) {
            console.error(`${spec.name} (pid ${pid}) did not stop on SIGTERM within 15 s: killing it`)
            child.kill("SIGKILL")
            await waitForExit(child, 5_000)
          }
        }
        child.stdin.destroy()
        running.delete(server)
      })()
      return stopped
    }
  }
  running.add(server)

  const deadline = Date.now() + (spec.startTimeoutMs ?? 60_000)
  const fail = async (why: string): Promise<never> => {
    await server.stop()
    throw new Error(`${spec.name} ${why}\n--- its output ---\n${output}`)
  }
  while (!listening) {
    sampleStartupPeak()
    if (exited(child)) return fail(`exited (code ${child.exitCode}, signal ${child.signalCode}) before listening`)
    if (Date.now() > deadline) return fail("did not log \"Listening on http\" in time")
    await sleep(50)
  }
  if (spec.readyPath !== undefined) {
    let last = "no answer"
    for (;;) {
      sampleStartupPeak()
      if (exited(child)) return fail(`exited (code ${child.exitCode}) before ${spec.readyPath} answered 200`)
      if (Date.now() > deadline) return fail(`${spec.readyPath} did not answer 200 in time (last: ${last})`)
      try {
        const response = await fetch(`${baseUrl}${spec.readyPath}`)
        await response.arrayBuffer()
        if (response.status === 200) break
        last = `status ${response.status}`
      } catch (error) {
        last = error instanceof Error ? error.message : String(error)
      }
      await sleep(50)
    }
  }
  sampleStartupPeak()
  return server
}
