/**
 * Benchmark: the request log line, written by the hand-written JSON-lines
 * writer (src/platform/telemetry/JsonLog.ts) against Effect's `Logger` (JSON,
 * `Logger.batched`) and a plain `JSON.stringify` + write per line, on the
 * request path as the service runs it.
 *
 *   node bench/json-log.ts [--lines 100000] [--rounds 3] [--batch 32] [--out file|null] [--service-cpu-us 0]
 *
 * Every measurement is a child process (`--worker <variant>`) whose stdout
 * is a file (default: every line is then read back and checked) or
 * /dev/null, so the terminal is not the bottleneck and each variant starts
 * with a fresh heap. The child serves `--lines` authenticated reads
 * (`GET /v1/customer/:id`, 200), each one fiber as the HTTP server makes it,
 * `--batch` of them at a time with a turn of the event loop between batches
 * (as connections deliver requests, and so that the 10 ms timers flush),
 * after a warm-up of a fifth as many. Each request runs the middleware
 * around an app that fills the request's facts (route, app, secret,
 * operation, trace and span ids, request id) and answers; the variant
 * decides how the line is written:
 *
 * - none: the middleware without a line (the harness alone: what the others are measured against);
 * - hand-written: the service's middleware (requestTelemetry), the line built
 *   as a string, JsonLog's buffer written at most every 10 ms;
 * - hand-written, write per line: the same line, one `process.stdout.write` each;
 * - Logger, prebuilt line: the same string as the message of an
 *   `Effect.logInfo`, through `Logger.batched` (10 ms): Effect's logging and
 *   batching without its formatting;
 * - Logger, same keys: `Effect.logInfo("request")` annotated with the fields
 *   (`Effect.annotateLogs`), formatted by JsonLog's `formatLine` (the keys and
 *   order of today's lines), `Logger.batched` (10 ms): what a switch to
 *   Effect's Logger would run;
 * - Logger.formatJson: the same log through Effect's own JSON format
 *   (`message`, `level`, `timestamp`, `annotations`, `spans`, `fiberId`:
 *   other keys than today's), `Logger.batched` (10 ms);
 * - JSON.stringify + write: an object per line, `JSON.stringify`, one write each.
 *
 * Prints per variant the medians over the rounds: lines per second, CPU
 * (user + system, all threads) per request, the log's own CPU per line
 * (minus that of `none`), and ratios to the hand-written writer. With
 * `--service-cpu-us` (the service's CPU per authenticated read, from
 * bench/auth-read.ts on the same machine) it also prints what each variant
 * adds to a request end to end.
 */
import { Context, Effect, Exit, Layer, Logger, Scope } from "effect"
import { HttpServerRequest, HttpServerResponse } from "effect/http"
import { spawn } from "node:child_process"
import { randomUUID } from "node:crypto"
import * as Fs from "node:fs"
import { cpus, loadavg, tmpdir } from "node:os"
import * as Path from "node:path"
import { parseArgs } from "node:util"
import { CurrentRequestFacts, RequestFacts, requestLine, requestTelemetry } from "../src/gateway/request/RequestTelemetry.ts"
import { NO_INSTRUMENTS } from "../src/platform/telemetry/Instruments.ts"
import { activeSpan, formatLine, JsonLoggerLive } from "../src/platform/telemetry/JsonLog.ts"
import { fixed, median, ratioText, renderTable, thousands } from "./stats.ts"

const VARIANTS = [
  "none",
  "hand-written",
  "hand-written, write per line",
  "Logger, prebuilt line",
  "Logger, same keys",
  "Logger.formatJson",
  "JSON.stringify + write"
] as const
type Variant = (typeof VARIANTS)[number]

const { values: flags } = parseArgs({
  options: {
    lines: { type: "string", default: "100000" },
    rounds: { type: "string", default: "3" },
    batch: { type: "string", default: "32" },
    out: { type: "string", default: "file" },
    "service-cpu-us": { type: "string", default: "0" },
    worker: { type: "string" }
  },
  strict: true
})
const lines = Number(flags.lines)
const rounds = Number(flags.rounds)
const batch = Number(flags.batch)
const serviceCpuUs = Number(flags["service-cpu-us"])
if (!Number.isInteger(lines) || lines < 1000) throw new Error("--lines must be an integer of at least 1000")
if (!Number.isInteger(rounds) || rounds < 1) throw new Error("--rounds must be a positive integer")
if (!Number.isInteger(batch) || batch < 1) throw new Error("--batch must be a positive integer")
if (flags.out !== "file" && flags.out !== "null") throw new Error("--out is file or null")
if (!Number.isFinite(serviceCpuUs) || serviceCpuUs < 0) throw new Error("--service-cpu-us must be a number of microseconds")
const warmup = Math.ceil(lines / 5)

/** The keys of a request line, in order, as the service writes them for an authenticated read. */
const SAME_KEYS = [
  "time",
  "level",
  "msg",
  "traceId",
  "spanId",
  "requestId",
  "method",
  "route",
  "path",
  "status",
  "durationMs",
  "appId",
  "secretId",
  "operation"
]
const FORMAT_JSON_KEYS = ["message", "level", "timestamp", "annotations", "spans", "fiberId"]
/** How long a batching writer may hold a line. */
const FLUSH_WINDOW_MS = 10

interface Measurement {
  readonly wallMs: number
  readonly cpuUs: number
}

// ---------------------------------------------------------------------------
// The worker: one variant, its stdout the output file.
// ---------------------------------------------------------------------------

const hex = (length: number) => randomUUID().replaceAll("-", "").slice(0, length)

/** 64 different reads: their requests, made once (the server parses a request whatever writes its line). */
const PROFILES = Array.from({ length: 64 }, (_, index) => ({
  request: HttpServerRequest.fromWeb(new Request(`http://127.0.0.1:8080/v1/customer/cus_${hex(20)}`, { headers: { authorization: "Bearer redacted" } })),
  secretId: `sec_${hex(16)}`,
  appId: `app-${index}`,
  traceId: hex(32),
  spanId: hex(16)
}))
const RESPONSE = HttpServerResponse.text("{\"id\":\"cus\"}", { contentType: "application/json" })

type Profile = (typeof PROFILES)[number]

/** The route's handler: what the request path learns, written into the request's facts; the request id is the meter's. */
const appFor = (profile: Profile) =>
  Effect.withFiber((fiber) => {
    const requestId = randomUUID()
    const facts = fiber.getRef(CurrentRequestFacts)
    if (facts !== undefined) {
      facts.route = "/v1/customer/:id"
      facts.appId = profile.appId
      facts.secretId = profile.secretId
      facts.operation = "customer.get"
      facts.requestId = requestId
      facts.traceId = profile.traceId
      facts.spanId = profile.spanId
    }
    return Effect.succeed(RESPONSE)
  })

const pathOf = (url: string) => {
  const query = url.indexOf("?")
  return query === -1 ? url : url.slice(0, query)
}

type Finish = (request: HttpServerRequest.HttpServerRequest, facts: RequestFacts, startedAt: number, status: number) => Effect.Effect<void>

/** The service's middleware (RequestTelemetry), with another way of writing the line. */
const middlewareWith = (finish: Finish) => <E, R>(app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
  Effect.withFiber((fiber) => {
    const startedAt = performance.now()
    const request = Context.getUnsafe(fiber.context, HttpServerRequest.HttpServerRequest)
    const facts = new RequestFacts()
    activeSpan(fiber.context)
    return Effect.provideService(app, CurrentRequestFacts, facts).pipe(
      Effect.onExit((exit) => exit._tag === "Success" ? finish(request, facts, startedAt, exit.value.status) : Effect.void)
    )
  })

/** The line's fields after `time`, `level` and `msg`, in the service's order. */
const fieldsOf = (request: HttpServerRequest.HttpServerRequest, facts: RequestFacts, status: number, elapsedMs: number) => {
  const fields: Record<string, unknown> = {}
  if (facts.traceId !== undefined) fields.traceId = facts.traceId
  if (facts.spanId !== undefined) fields.spanId = facts.spanId
  fields.requestId = facts.requestId ?? randomUUID()
  fields.method = request.method
  if (facts.route !== undefined) fields.route = facts.route
  fields.path = pathOf(request.url)
  fields.status = status
  fields.durationMs = Math.round(elapsedMs * 1000) / 1000
  if (facts.appId !== undefined) fields.appId = facts.appId
  if (facts.secretId !== undefined) fields.secretId = facts.secretId
  if (facts.operation !== undefined) fields.operation = facts.operation
  return fields
}

const prebuilt = (request: HttpServerRequest.HttpServerRequest, facts: RequestFacts, startedAt: number, status: number) => {
  const elapsedMs = performance.now() - startedAt
  return requestLine(request, facts, undefined, pathOf(request.url), facts.route, status, elapsedMs)
}

const write = (chunk: string) => {
  process.stdout.write(chunk)
}

/** Effect's batching: one write per window, of the lines joined. */
const batchedTo = <Message>(logger: Logger.Logger<Message, string>) =>
  Logger.batched(logger, {
    window: `${FLUSH_WINDOW_MS} millis`,
    flush: (batchLines) => Effect.sync(() => write(batchLines.join("\n") + "\n"))
  })

/** What a Logger variant logs: the request, at its level, annotated with its fields. */
const logRequest: Finish = (request, facts, startedAt, status) =>
  Effect.annotateLogs(
    Effect.logWithLevel(status >= 500 ? "Error" : "Info")("request"),
    fieldsOf(request, facts, status, performance.now() - startedAt)
  )

interface Setup {
  readonly layer: Layer.Layer<never>
  readonly middleware: (app: ReturnType<typeof appFor>) => ReturnType<typeof appFor>
}

const setupOf = (variant: Variant): Setup => {
  switch (variant) {
    case "none":
      return { layer: JsonLoggerLive, middleware: middlewareWith(() => Effect.void) }
    case "hand-written":
      return { layer: JsonLoggerLive, middleware: requestTelemetry({ log: true, instruments: NO_INSTRUMENTS })! }
    case "hand-written, write per line":
      return {
        layer: JsonLoggerLive,
        middleware: middlewareWith((request, facts, startedAt, status) => Effect.sync(() => write(prebuilt(request, facts, startedAt, status) + "\n")))
      }
    case "Logger, prebuilt line":
      return {
        layer: Logger.layer([batchedTo(Logger.make(({ message }) => String(Array.isArray(message) ? message[0] : message)))]),
        middleware: middlewareWith((request, facts, startedAt, status) =>
          Effect.logWithLevel(status >= 500 ? "Error" : "Info")(prebuilt(request, facts, startedAt, status))
        )
      }
    case "Logger, same keys":
      return { layer: Logger.layer([batchedTo(formatLine)]), middleware: middlewareWith(logRequest) }
    case "Logger.formatJson":
      return { layer: Logger.layer([batchedTo(Logger.formatJson)]), middleware: middlewareWith(logRequest) }
    case "JSON.stringify + write":
      return {
        layer: JsonLoggerLive,
        middleware: middlewareWith((request, facts, startedAt, status) =>
          Effect.sync(() => {
            const line = { time: new Date().toISOString(), level: status >= 500 ? "ERROR" : "INFO", msg: "request" }
            write(JSON.stringify(Object.assign(line, fieldsOf(request, facts, status, performance.now() - startedAt))) + "\n")
          })
        )
      }
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const runWorker = async (variant: Variant): Promise<Measurement> => {
  const setup = setupOf(variant)
  const scope = Scope.makeUnsafe()
  const context = await Effect.runPromise(Layer.buildWithScope(setup.layer, scope))
  const run = Effect.runPromiseWith(context)
  // One effect per profile, made once and run for every request of that profile.
  const requests = PROFILES.map((profile) => Effect.provideService(setup.middleware(appFor(profile)), HttpServerRequest.HttpServerRequest, profile.request))
  const serve = async (count: number) => {
    for (let done = 0; done < count; done += batch) {
      const size = Math.min(batch, count - done)
      await run(Effect.forEach(Array.from({ length: size }, (_, i) => requests[(done + i) % requests.length]!), (request) => request, {
        concurrency: "unbounded",
        discard: true
      }))
      // A turn of the event loop: the next requests arrive with the next I/O, and due timers (the flushes) run.
      await new Promise((resolve) => setImmediate(resolve))
    }
  }
  await serve(warmup)
  await sleep(3 * FLUSH_WINDOW_MS)
  const cpuBefore = process.cpuUsage()
  const started = performance.now()
  await serve(lines)
  const wallMs = performance.now() - started
  // The last lines: a batching writer writes them within its window, or when its scope closes.
  await Effect.runPromise(Scope.close(scope, Exit.void))
  await sleep(3 * FLUSH_WINDOW_MS)
  const cpu = process.cpuUsage(cpuBefore)
  return { wallMs, cpuUs: cpu.user + cpu.system }
}

// ---------------------------------------------------------------------------
// The benchmark: every variant in its own process, round-robin.
// ---------------------------------------------------------------------------

const measure = (variant: Variant, output: string) =>
  new Promise<Measurement>((resolve, reject) => {
    const fd = Fs.openSync(output, "w")
    const child = spawn(process.execPath, [import.meta.filename, "--worker", variant, "--lines", String(lines), "--batch", String(batch)], {
      stdio: ["ignore", fd, "inherit", "ipc"]
    })
    Fs.closeSync(fd)
    let result: Measurement | undefined
    child.on("message", (message) => (result = message as Measurement))
    child.on("error", reject)
    child.on("exit", (code) => (code === 0 && result !== undefined ? resolve(result) : reject(new Error(`${variant}: the worker exited with ${code}`))))
  })

/** Every line of the output: a JSON object of the expected keys, as many as requests served. */
const check = (variant: Variant, output: string): string | undefined => {
  const written = Fs.readFileSync(output, "utf8").split("\n").filter((line) => line.length > 0)
  const expected = variant === "none" ? 0 : warmup + lines
  if (written.length !== expected) return `${written.length} lines instead of ${expected}`
  const keys = variant === "Logger.formatJson" ? FORMAT_JSON_KEYS : SAME_KEYS
  for (const line of written) {
    const parsed = JSON.parse(line) as Record<string, unknown>
    if (Object.keys(parsed).join() !== keys.join()) return `keys ${Object.keys(parsed).join()} in ${line}`
  }
  return undefined
}

const main = async () => {
  const directory = Fs.mkdtempSync(Path.join(tmpdir(), "mfg-json-log-"))
  const output = flags.out === "file" ? Path.join(directory, "lines.jsonl") : "/dev/null"
  const samples = new Map<Variant, Array<Measurement>>(VARIANTS.map((variant) => [variant, []]))
  const samplesLines = new Map<Variant, string>()
  console.log(`machine: ${cpus().length} × ${cpus()[0]?.model ?? "?"}, Node ${process.version}; load average ${fixed(loadavg()[0] ?? 0, 2)}`)
  console.log(`${thousands(lines)} requests per measurement (after ${thousands(warmup)} of warm-up), ${batch} per turn of the event loop, to ${output}`)
  try {
    for (let round = 1; round <= rounds; round++) {
      for (const variant of VARIANTS) {
        const measurement = await measure(variant, output)
        if (flags.out === "file") {
          const problem = check(variant, output)
          if (problem !== undefined) throw new Error(`${variant}: ${problem}`)
          if (round === 1 && variant !== "none") samplesLines.set(variant, Fs.readFileSync(output, "utf8").split("\n", 1)[0]!)
        }
        samples.get(variant)!.push(measurement)
        console.log(
          `round ${round}  ${variant.padEnd(28)}  ${thousands(lines / (measurement.wallMs / 1000)).padStart(9)} lines/s  ${
            fixed(measurement.cpuUs / lines, 2).padStart(6)
          } µs CPU/request`
        )
      }
    }
  } finally {
    Fs.rmSync(directory, { recursive: true, force: true })
  }

  const perSecond = (variant: Variant) => median(samples.get(variant)!.map((m) => lines / (m.wallMs / 1000)))
  const cpuPerRequest = (variant: Variant) => median(samples.get(variant)!.map((m) => m.cpuUs / lines))
  const logCost = (variant: Variant) => cpuPerRequest(variant) - cpuPerRequest("none")
  const handWritten = logCost("hand-written")
  const header = ["variant", "lines/s", "CPU µs/request", "log µs/line", "log / hand-written", "request CPU / hand-written"]
  if (serviceCpuUs > 0) header.push(`read's CPU (${fixed(serviceCpuUs, 0)} µs) + difference`)
  const rows = VARIANTS.map((variant) => {
    const row = [
      variant,
      thousands(perSecond(variant)),
      fixed(cpuPerRequest(variant), 2),
      variant === "none" ? "" : fixed(logCost(variant), 2),
      variant === "none" ? "" : ratioText(logCost(variant) / handWritten),
      ratioText(cpuPerRequest(variant) / cpuPerRequest("hand-written"))
    ]
    if (serviceCpuUs > 0) row.push(variant === "none" ? "" : ratioText((serviceCpuUs + logCost(variant) - handWritten) / serviceCpuUs))
    return row
  })
  console.log(`\nmedians over ${rounds} round(s):\n`)
  console.log(renderTable(header, rows))
  console.log(
    "\nlog µs/line: the variant's CPU per request minus that of `none` (the fibers, the middleware, the facts, the answer)." +
      "\nrequest CPU / hand-written: the whole request of this harness, log included." +
      (serviceCpuUs > 0 ? "\nread's CPU + difference: the service's authenticated read if its line were written this way, against today's." : "")
  )
  if (samplesLines.size > 0) {
    console.log("\nfirst line of each variant:")
    for (const [variant, line] of samplesLines) console.log(`  ${variant}: ${line}`)
  }
  console.log(`\nload average after the run: ${fixed(loadavg()[0] ?? 0, 2)}`)
}

if (flags.worker !== undefined) {
  const variant = VARIANTS.find((name) => name === flags.worker)
  if (variant === undefined) throw new Error(`--worker: one of ${VARIANTS.join(", ")}`)
  const measurement = await runWorker(variant)
  // Started by hand (to profile it, say), the worker prints its figures on stderr.
  if (process.send === undefined) console.error(JSON.stringify(measurement))
  else {
    process.send(measurement)
    process.disconnect()
  }
} else {
  await main()
}
