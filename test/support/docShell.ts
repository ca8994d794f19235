/**
 * A reader's shell for the docs' command blocks: each block runs in bash
 * (`set -euo pipefail`) in the project's directory with the variables the
 * blocks before it set, as one terminal would have them; a block that runs
 * until stopped (the server, the example model files) runs in the
 * background in its own process group, as in another terminal.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Net from "node:net"
import * as Path from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import { NODE, ROOT } from "./processes.ts"

export interface BlockResult {
  readonly where: string
  readonly text: string
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/**
 * What a fresh machine's shell has: the project's Node first on PATH (as
 * `npm run` puts it), HOME and the locale, and `extra` (DATA_DIR); none of
 * the test run's own settings (vitest's MODEL_FETCH_PLACEHOLDER_HOSTS and
 * RATE_LIMIT, a DATABASE_URL, npm's variables).
 */
export const freshShellEnvironment = (extra: Record<string, string>): Record<string, string> => {
  const inherited = Object.fromEntries(
    ["HOME", "USER", "LANG", "LC_ALL", "TMPDIR"].flatMap((name) => process.env[name] === undefined ? [] : [[name, process.env[name]!]])
  )
  return { ...inherited, PATH: `${Path.dirname(NODE)}:${process.env.PATH ?? "/usr/bin:/bin"}`, ...extra }
}

/**
 * Bash around a block: records the names bash starts with, reads the
 * variables saved by the blocks before, and on a successful exit saves every
 * variable it did not start with (`declare -p`) for the blocks after.
 */
const wrap = (block: string) =>
  `__walkthrough_names=" $(compgen -v | tr '\\n' ' ') "
source "$WALKTHROUGH_STATE"
__walkthrough_save() {
  local __walkthrough_name
  for __walkthrough_name in $(compgen -v); do
    case "$__walkthrough_name" in __walkthrough_* | BASH* | _ | PIPESTATUS | FUNCNAME) continue ;; esac
    case "$__walkthrough_names" in *" $__walkthrough_name "*) continue ;; esac
    declare -p "$__walkthrough_name"
  done >"$WALKTHROUGH_STATE.next" && mv "$WALKTHROUGH_STATE.next" "$WALKTHROUGH_STATE"
}
trap '[ $? -ne 0 ] || __walkthrough_save' EXIT
set -euo pipefail
${block}
`

const collect = (child: ChildProcess) => {
  const output = { stdout: "", stderr: "" }
  child.stdout!.on("data", (chunk: Buffer) => (output.stdout += chunk.toString()))
  child.stderr!.on("data", (chunk: Buffer) => (output.stderr += chunk.toString()))
  return output
}

export interface Shell {
  /** Runs a block to its end (at most `timeoutMs`, then SIGKILL). */
  readonly run: (where: string, text: string, timeoutMs?: number) => Promise<BlockResult>
  /** A variable as the blocks left it ("" when unset). */
  readonly variable: (name: string) => Promise<string>
  /** Starts a block that runs until stopped, in its own process group. */
  readonly background: (where: string, text: string) => Background
  readonly env: Record<string, string>
}

export const makeShell = (stateDir: string, env: Record<string, string>): Shell => {
  const state = Path.join(stateDir, "variables.sh")
  Fs.writeFileSync(state, "")
  const shellEnv = { ...env, WALKTHROUGH_STATE: state }
  const run = (where: string, text: string, timeoutMs = 90_000) =>
    new Promise<BlockResult>((resolve) => {
      const child = spawn("bash", ["-c", wrap(text)], { cwd: ROOT, env: shellEnv, stdio: ["ignore", "pipe", "pipe"] })
      const output = collect(child)
      const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs)
      child.once("close", (code) => {
        clearTimeout(timer)
        resolve({ where, text, code, ...output })
      })
    })
  return {
    run,
    variable: async (name) => (await run("variable", `printf '%s' "\${${name}:-}"`)).stdout,
    background: (where, text) => startBackground(where, text, shellEnv),
    env: shellEnv
  }
}

// ---------------------------------------------------------------------------
// Background blocks

export interface Background {
  readonly where: string
  readonly output: () => string
  /** Whether some process of its group still runs. */
  readonly running: () => boolean
  /**
   * Stops it as a reader would: SIGTERM to the process started (npm, which
   * bash `exec`s), then waits for its whole group to end; whatever of the
   * group outlives that (a server npm did not pass the signal on to) gets
   * SIGTERM, then SIGKILL.
   */
  readonly stop: () => Promise<void>
}

const groupAlive = (pgid: number) => {
  try {
    process.kill(-pgid, 0)
    return true
  } catch {
    return false
  }
}

const waitUntil = async (condition: () => boolean, timeoutMs: number) => {
  const deadline = Date.now() + timeoutMs
  while (!condition()) {
    if (Date.now() > deadline) return false
    await sleep(50)
  }
  return true
}

const startBackground = (where: string, text: string, env: Record<string, string>): Background => {
  const child = spawn("bash", ["-c", text], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"], detached: true })
  const output = collect(child)
  const pgid = child.pid!
  let leaderExited = false
  child.once("exit", () => (leaderExited = true))
  const signalGroup = (signal: NodeJS.Signals) => {
    try {
      process.kill(-pgid, signal)
    } catch {
      // the group has ended
    }
  }
  return {
    where,
    output: () => output.stdout + output.stderr,
    running: () => groupAlive(pgid),
    stop: async () => {
      if (!leaderExited) child.kill("SIGTERM")
      await waitUntil(() => leaderExited, 15_000)
      if (await waitUntil(() => !groupAlive(pgid), 2_000)) return
      signalGroup("SIGTERM")
      if (await waitUntil(() => !groupAlive(pgid), 15_000)) return
      signalGroup("SIGKILL")
      await waitUntil(() => !groupAlive(pgid), 5_000)
    }
  }
}

/** Fails with `message` unless nothing listens on 127.0.0.1:`port`. */
export const assertPortFree = (port: number, message: string) =>
  new Promise<void>((resolve, reject) => {
    const server = Net.createServer()
    server.once("error", (error: NodeJS.ErrnoException) => reject(new Error(error.code === "EADDRINUSE" ? message : `127.0.0.1:${port}: ${error.message}`)))
    server.listen(port, "127.0.0.1", () => server.close(() => resolve()))
  })

/** Waits until `ready` holds, failing when the background block ends first or after `timeoutMs`. */
export const waitForBackground = async (background: Background, ready: () => Promise<boolean>, timeoutMs = 60_000) => {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (await ready()) return
    if (!background.running()) throw new Error(`${background.where} ended before it was ready:\n${background.output()}`)
    await sleep(100)
  }
  throw new Error(`${background.where} was not ready within ${timeoutMs} ms:\n${background.output()}`)
}
