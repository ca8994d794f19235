/**
 * What rendering quote PDFs does to the event loop that answers requests:
 * the same PDFs rendered on the loop itself (what the gateway did before
 * PdfRenderer.ts) and in the PDF thread, one after the other in one run,
 * with the loop's delay measured meanwhile (`monitorEventLoopDelay`): the
 * wait every other call would have had.
 *
 *   node bench/quote-pdf.ts [--pdfs 20] [--lines 5,60]
 *
 * Each mode runs in a process of its own, with the node options and
 * environment of `npm start`: it renders one PDF first (fonts read, modules
 * loaded, thread started), then --pdfs PDFs in turn, their line counts
 * taken in turn from --lines. Prints the time, the loop's delay (p50, p99,
 * max) and the process's resident memory (the thread's included) per mode.
 */
import { Duration, Effect } from "effect"
import { execFileSync } from "node:child_process"
import { monitorEventLoopDelay } from "node:perf_hooks"
import { readPdfFonts } from "../src/adapters/pdf/PdfFonts.ts"
import { makePdfRenderer } from "../src/adapters/pdf/PdfRenderer.ts"
import { type QuotePdfData, renderQuotePdf } from "../src/adapters/pdf/QuotePdf.ts"
import { parseFlags, positiveNumber, usageError } from "./options.ts"
import { NODE, REPO_ROOT } from "./servers.ts"
import { fixed, renderTable } from "./stats.ts"
import { START_ENV, START_NODE_OPTIONS } from "./targets.ts"

const USAGE = "usage: node bench/quote-pdf.ts [--pdfs 20] [--lines 5,60]"
const flags = parseFlags({
  pdfs: { type: "string", default: "20" },
  lines: { type: "string", default: "5,60" },
  /** Internal: the mode a child process measures, printing its row as JSON. */
  mode: { type: "string" }
}, USAGE)
const pdfs = positiveNumber("pdfs", flags.pdfs, true, USAGE)
const lineCounts = flags.lines.split(",").map((text) => positiveNumber("lines", text.trim(), true, USAGE))

const quote = (lines: number): QuotePdfData => ({
  appName: "bench",
  id: "q-bench",
  number: "Q-000001",
  state: "sent",
  createdAt: "2026-11-02T09:00:00.000Z",
  updatedAt: "2026-11-02T09:00:00.000Z",
  validUntil: "2026-12-02T09:00:00.000Z",
  currency: { code: "EUR", minorUnits: 2, exchangeRate: 1, base: "EUR" },
  total: 42 * lines,
  ticket: { number: "T-000001", name: "Bench run" },
  customer: { name: "Acme Robotics", email: "buyer@acme.example" },
  lines: Array.from({ length: lines }, (_, i) => ({ description: `Bracket ${i + 1}`, kind: "part", quantity: 10, unitPrice: 4.2, total: 42 }))
})

const residentMiB = () => Math.round(process.memoryUsage().rss / 2 ** 20)

const MODES = { loop: "on the event loop", thread: "in the PDF thread" } as const
type Mode = keyof typeof MODES

/** One mode measured in this process: its row of the table. */
const measure = (mode: Mode) =>
  Effect.scoped(Effect.gen(function*() {
    const fonts = yield* Effect.promise(() => readPdfFonts())
    const renderer = yield* makePdfRenderer(Duration.minutes(1))
    const render = (data: QuotePdfData) => mode === "loop" ? Effect.promise(() => renderQuotePdf(data, fonts)) : renderer.render(data, "bench")
    yield* render(quote(lineCounts[0]!))
    const warm = residentMiB()
    const delay = monitorEventLoopDelay({ resolution: 1 })
    delay.enable()
    const start = performance.now()
    for (let i = 0; i < pdfs; i++) yield* render(quote(lineCounts[i % lineCounts.length]!))
    const elapsed = performance.now() - start
    delay.disable()
    const ms = (nanoseconds: number) => fixed(nanoseconds / 1e6, 1)
    return [MODES[mode], fixed(elapsed, 0), ms(delay.percentile(50)), ms(delay.percentile(99)), ms(delay.max), String(warm), String(residentMiB())]
  }))

if (flags.mode !== undefined) {
  if (!(flags.mode in MODES)) usageError(`--mode must be loop or thread, not ${JSON.stringify(flags.mode)}`, USAGE)
  console.log(JSON.stringify(await Effect.runPromise(measure(flags.mode as Mode))))
} else {
  const rows = (Object.keys(MODES) as Array<Mode>).map((mode) => {
    const output = execFileSync(NODE, [...START_NODE_OPTIONS, "bench/quote-pdf.ts", "--mode", mode, "--pdfs", String(pdfs), "--lines", flags.lines], {
      cwd: REPO_ROOT,
      env: { ...process.env, ...START_ENV },
      encoding: "utf8"
    })
    return JSON.parse(output.trim().split("\n").at(-1)!) as Array<string>
  })
  console.log(
    `${pdfs} PDFs of ${lineCounts.join(", ")} lines in turn, after one to warm up; each mode in a process of its own, run as npm start runs the service`
  )
  console.log(renderTable(["rendered", "ms", "loop delay p50 ms", "p99 ms", "max ms", "RSS after one MiB", "RSS after all MiB"], rows))
}
