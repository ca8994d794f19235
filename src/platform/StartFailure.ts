/**
 * Why the service stopped on a failure, as log lines an operator can act on:
 * each names the cause in words and, where one would fix it, the variable to
 * change; and the exit code, which tells a configuration error from a
 * dependency that is not there and from a bug (docs/operations.md, "Exit
 * codes").
 */
import { Cause, Schema } from "effect"

/** The process's exit codes (sysexits.h where one fits). */
export const ExitCode = {
  /** Stopped by SIGTERM or SIGINT after a graceful drain. */
  stopped: 0,
  /** A dependency is not there: the port is taken, DATA_DIR is held, PostgreSQL cannot be reached (EX_UNAVAILABLE). */
  unavailable: 69,
  /** An unexpected failure, at start or later: a bug to report (EX_SOFTWARE). */
  runtimeFailure: 70,
  /** The configuration cannot work: an invalid variable, an address or port the system refuses (EX_CONFIG). */
  configuration: 78,
  /** A second signal ended a graceful stop before it finished (128 + SIGINT). */
  forced: 130
} as const

/** PostgreSQL did not answer within DATABASE_CONNECT_TIMEOUT at start. */
export class StorageUnreachable extends Schema.TaggedError<StorageUnreachable>()("StorageUnreachable", {
  message: Schema.String
}) {}

export interface FailureLine {
  readonly message: string
  readonly variable?: string
  readonly exitCode: number
}

interface SystemError {
  readonly code?: string
  readonly address?: string
  readonly port?: number
  readonly hostname?: string
  readonly message?: string
  readonly cause?: unknown
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null

/** The Node system error under `error` (its `cause` chain), if any. */
const systemErrorIn = (error: unknown): SystemError | undefined => {
  for (let current: unknown = error, depth = 0; isObject(current) && depth < 5; current = current.cause, depth++) {
    if (typeof current.code === "string") return current as SystemError
  }
  return undefined
}

/** An HTTP server that could not listen on HOST:PORT. */
const listenFailure = (error: unknown): FailureLine => {
  const system = systemErrorIn(error)
  const where = system?.address === undefined ? "" : ` (${system.address}${system.port === undefined ? "" : `:${system.port}`})`
  switch (system?.code) {
    case "EADDRINUSE":
      return { message: `port ${system.port ?? "?"} is in use${where}: another process listens there`, variable: "PORT", exitCode: ExitCode.unavailable }
    case "EACCES":
      return { message: `port ${system.port ?? "?"} needs privileges this process does not have${where}`, variable: "PORT", exitCode: ExitCode.configuration }
    case "EADDRNOTAVAIL":
      return { message: `HOST ${system.address ?? "?"} is not an address of this machine`, variable: "HOST", exitCode: ExitCode.configuration }
    case "ENOTFOUND":
    case "EAI_AGAIN":
    case "EAI_FAIL":
      return { message: `HOST ${system.hostname ?? "?"} cannot be resolved to an address`, variable: "HOST", exitCode: ExitCode.configuration }
    default:
      return { message: `cannot listen${where}: ${system?.message ?? String(error)}`, exitCode: ExitCode.unavailable }
  }
}

const tagOf = (error: unknown) => isObject(error) && typeof error._tag === "string" ? error._tag : undefined

const messageOf = (error: unknown) => error instanceof Error ? error.message : String(error)

/** The lines that say why the service stopped, one per problem (every invalid variable, for instance). */
export const describeFailure = (cause: Cause.Cause<unknown>): ReadonlyArray<FailureLine> => {
  const error = Cause.squash(cause)
  switch (tagOf(error)) {
    case "InvalidConfig": {
      const { message, problems } = error as { message: string; problems?: ReadonlyArray<{ variable: string; message: string }> }
      return problems === undefined || problems.length === 0
        ? [{ message, exitCode: ExitCode.configuration }]
        : problems.map((problem) => ({ message: problem.message, variable: problem.variable, exitCode: ExitCode.configuration }))
    }
    case "DataDirInUse":
      return [{ message: messageOf(error), variable: "DATA_DIR", exitCode: ExitCode.unavailable }]
    case "DataDirNotPrivate":
      return [{ message: messageOf(error), variable: "DATA_DIR", exitCode: ExitCode.configuration }]
    case "StorageUnreachable":
      return [{ message: messageOf(error), variable: "DATABASE_URL", exitCode: ExitCode.unavailable }]
    case "ServeError":
      return [listenFailure(error)]
    default:
      return [{ message: `stopped by an unexpected failure: ${messageOf(error)}`, exitCode: ExitCode.runtimeFailure }]
  }
}
