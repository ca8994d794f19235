/**
 * Structured logs: one JSON object per line on stdout, for the request log
 * (RequestTelemetry) and for every Effect log of the process (the logger
 * TelemetryLive installs), with the same keys: `time`, `level`, `msg`, the
 * trace and span ids when a span is active, then the line's own fields.
 *
 * Lines are buffered and written at most every FLUSH_INTERVAL_MS (sooner
 * past FLUSH_AT characters, and at exit), so a server makes one write per
 * batch of requests rather than one system call per line, even when its
 * requests arrive one at a time.
 *
 * The writer is hand-written rather than Effect's `Logger.batched` around a
 * JSON format because the request log line is on every request's path, and
 * there Effect's Logger costs about three times as much CPU per line (3–5 %
 * of an authenticated read's CPU): bench/README.md, "JSON log: why the
 * hand-written writer stays" (`npm run bench:log`).
 */
import { Cause, Context, Logger, LogLevel, References, Tracer } from "effect"
import { writeSync } from "node:fs"

/** Past this many buffered characters the buffer is written at once. */
const FLUSH_AT = 64 * 1024
/** How long a line may wait for others to share its write. */
const FLUSH_INTERVAL_MS = 10

let buffered = ""
let scheduled = false

const flush = () => {
  scheduled = false
  if (buffered.length === 0) return
  const chunk = buffered
  buffered = ""
  process.stdout.write(chunk)
}

// A process that exits (SIGTERM, a failed start) writes what it still holds.
process.once("exit", () => {
  if (buffered.length === 0) return
  const chunk = buffered
  buffered = ""
  try {
    writeSync(1, chunk)
  } catch {
    // stdout closed: nothing left to write to.
  }
})

/** Writes one line (a serialized JSON object, without its newline). */
export const writeLine = (json: string): void => {
  buffered += json + "\n"
  if (buffered.length >= FLUSH_AT) return flush()
  if (!scheduled) {
    scheduled = true
    // Unreferenced: a waiting line does not keep the process alive; the exit handler writes it.
    setTimeout(flush, FLUSH_INTERVAL_MS).unref()
  }
}

/** The level of a log line: the Effect log level's name, upper case. */
export type Level = "TRACE" | "DEBUG" | "INFO" | "WARN" | "ERROR" | "FATAL"

const asText = (part: unknown): string => {
  if (typeof part === "string") return part
  if (part instanceof Error) return part.message
  try {
    return JSON.stringify(part) ?? String(part)
  } catch {
    return String(part)
  }
}

/** The active span of a fiber, if tracing made one (not a no-op span, not the caller's external one). */
export const activeSpan = (context: Context.Context<never>): Tracer.Span | undefined => {
  const span = Context.getOrUndefined(context, Tracer.ParentSpan)
  return span !== undefined && span._tag === "Span" && span.traceId !== "noop" ? span : undefined
}

/** How many errors deep a warning's cause is followed (an error's own `cause`, and so on). */
const CAUSE_DEPTH = 4

/** An error and the errors it was caused by, names and messages only. */
const errorChain = (value: unknown, depth = 0): string => {
  if (!(value instanceof Error)) return asText(value)
  const own = value.message === "" ? value.name : `${value.name}: ${value.message}`
  return depth < CAUSE_DEPTH && value.cause !== undefined ? `${own} ← ${errorChain(value.cause, depth + 1)}` : own
}

/**
 * A cause in one line, without stack traces: what each failure and defect
 * says. A warning is something the service outlives (a library's own, too,
 * such as the webhook cluster's while the database is unreachable), logged
 * again while it lasts: its lines stay short. An error keeps its stack.
 */
const causeSummary = (cause: Cause.Cause<unknown>): string =>
  cause.reasons.map((reason) => reason._tag === "Fail" ? errorChain(reason.error) : reason._tag === "Die" ? errorChain(reason.defect) : "interrupted").join(
    "; "
  )

/**
 * The line of an `Effect.log*`: one JSON object, without its newline.
 * Annotations become fields (`Effect.annotateLogs`); a cause is rendered as
 * text in `cause`: in full for an error or worse, in one line (causeSummary)
 * below.
 */
export const formatLine = Logger.make<unknown, string>(({ cause, date, fiber, logLevel, message }) => {
  const parts = Array.isArray(message) ? message : [message]
  const line: Record<string, unknown> = {
    time: date.toISOString(),
    level: logLevel.toUpperCase(),
    msg: parts.map(asText).join(" ")
  }
  const span = activeSpan(fiber.context)
  if (span !== undefined) {
    line.traceId = span.traceId
    line.spanId = span.spanId
  }
  for (const [key, value] of Object.entries(fiber.getRef(References.CurrentLogAnnotations))) {
    if (!(key in line)) line[key] = value
  }
  if (cause.reasons.length > 0) line.cause = LogLevel.isGreaterThanOrEqualTo(logLevel, "Error") ? Cause.pretty(cause) : causeSummary(cause)
  try {
    return JSON.stringify(line)
  } catch {
    return JSON.stringify({ time: line.time, level: line.level, msg: String(line.msg) })
  }
})

/** The logger of every `Effect.log*`: one JSON line each, written with the next batch. */
export const jsonLogger = Logger.map(formatLine, writeLine)

/** Replaces the default logger with the JSON one. */
export const JsonLoggerLive = Logger.layer([jsonLogger])
