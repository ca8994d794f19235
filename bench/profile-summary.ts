/**
 * Reads a V8 CPU profile (`node --cpu-prof`, e.g. from `bench/suite.ts
 * --profile`) and prints where the busy time went: self time by area
 * (node internals, effect, pg, the service's own files, GC) and by function,
 * and inclusive time by function (every sample whose stack holds it).
 * Percentages are of the samples that were not idle.
 *
 *   node bench/profile-summary.ts <file.cpuprofile> [--top 25] [--match text]
 *
 * --match keeps the inclusive list to functions whose name or file holds the text.
 */
import { readFileSync } from "node:fs"
import * as Path from "node:path"
import { parseArgs } from "node:util"
import { positiveNumber, usageError } from "./options.ts"
import { fixed, renderTable } from "./stats.ts"

const USAGE = "usage: node bench/profile-summary.ts <file.cpuprofile> [--top N] [--match text]"

interface CallFrame {
  readonly functionName: string
  readonly url: string
  readonly lineNumber: number
}

interface ProfileNode {
  readonly id: number
  readonly callFrame: CallFrame
  readonly children?: ReadonlyArray<number>
}

interface CpuProfile {
  readonly nodes: ReadonlyArray<ProfileNode>
  readonly samples: ReadonlyArray<number>
  readonly timeDeltas: ReadonlyArray<number>
}

const { values: flags, positionals } = parseArgs({
  options: { top: { type: "string", default: "25" }, match: { type: "string" } },
  allowPositionals: true,
  strict: true
})
const file = positionals[0] ?? usageError("a profile file is required", USAGE)
const top = positiveNumber("top", flags.top, true, USAGE)

const REPO = Path.resolve(import.meta.dirname, "..")

/** A short file name: relative to the repository, `node_modules/` and `file://` removed. */
const shortUrl = (url: string) => url.replace(/^file:\/\//, "").replace(`${REPO}/`, "").replace(/^.*node_modules\//, "")

/** What part of the stack a frame belongs to. */
const areaOf = (frame: CallFrame): string => {
  const { url, functionName } = frame
  if (url === "") return functionName.startsWith("(") ? functionName : "native / V8 builtins"
  if (url.startsWith("node:")) return `node: ${url.slice(5).split("/")[0]}`
  const short = shortUrl(url)
  if (short.startsWith("src/")) return short
  const parts = short.split("/")
  const pkg = parts[0]!.startsWith("@") ? `${parts[0]}/${parts[1]}` : parts[0]!
  if (pkg === "effect") return `effect/${(parts[2] ?? "").replace(/\.js$/, "")}`.replace(/\/internal$/, `/internal/${parts[3] ?? ""}`)
  return pkg
}

const frameKey = (frame: CallFrame) => `${frame.functionName || "(anonymous)"} ${shortUrl(frame.url)}${frame.url === "" ? "" : `:${frame.lineNumber + 1}`}`

const profile = JSON.parse(readFileSync(file, "utf8")) as CpuProfile
const byId = new Map(profile.nodes.map((node) => [node.id, node]))
const parent = new Map<number, number>()
for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id)

const self = new Map<string, number>()
const areas = new Map<string, number>()
const inclusive = new Map<string, number>()
let busy = 0
let idle = 0
profile.samples.forEach((id, index) => {
  const node = byId.get(id)
  if (node === undefined) return
  const weight = profile.timeDeltas[index] ?? 0
  if (node.callFrame.functionName === "(idle)") {
    idle += weight
    return
  }
  busy += weight
  self.set(frameKey(node.callFrame), (self.get(frameKey(node.callFrame)) ?? 0) + weight)
  areas.set(areaOf(node.callFrame), (areas.get(areaOf(node.callFrame)) ?? 0) + weight)
  const seen = new Set<string>()
  for (let current: number | undefined = id; current !== undefined; current = parent.get(current)) {
    const key = frameKey(byId.get(current)!.callFrame)
    if (seen.has(key)) continue
    seen.add(key)
    inclusive.set(key, (inclusive.get(key) ?? 0) + weight)
  }
})

const share = (value: number) => `${fixed((100 * value) / busy, 1)} %`
const ranked = (map: ReadonlyMap<string, number>, keep: (key: string) => boolean = () => true) =>
  [...map].filter(([key]) => keep(key)).sort((a, b) => b[1] - a[1]).slice(0, top)

console.log(`${file}: ${fixed(busy / 1e6, 1)} s busy, ${fixed(idle / 1e6, 1)} s idle (percentages: of the busy time)\n`)
console.log(renderTable(["self time by area", "share"], ranked(areas).map(([key, value]) => [key, share(value)])))
console.log("")
console.log(renderTable(["self time by function", "share"], ranked(self).map(([key, value]) => [key, share(value)])))
console.log("")
const match = flags.match
const skipRoots = (key: string) => !key.startsWith("(root)") && !key.startsWith("processTicksAndRejections") && !key.startsWith("listOnTimeout")
console.log(renderTable(
  [`inclusive time by function${match === undefined ? "" : ` (matching ${JSON.stringify(match)})`}`, "share"],
  ranked(inclusive, (key) => skipRoots(key) && (match === undefined || key.includes(match))).map(([key, value]) => [key, share(value)])
))
