/**
 * What a process allocates per request, by site: V8's sampling heap profiler
 * over a load, through the inspector (bench/inspector.ts). Objects that die
 * young are counted too (`includeObjectsCollectedByMinorGC` and `…MajorGC`),
 * so the total is everything allocated, not what survived: the work the
 * garbage collector is given per request.
 */
import * as Path from "node:path"
import type { Inspector } from "./inspector.ts"

interface CallFrame {
  readonly functionName: string
  readonly url: string
  readonly lineNumber: number
}

interface SamplingNode {
  readonly callFrame: CallFrame
  /** Bytes allocated here (V8 scales the samples to an estimate of all allocations). */
  readonly selfSize: number
  readonly children: ReadonlyArray<SamplingNode>
}

/** Bytes by site, most first. */
export interface AllocationSite {
  readonly site: string
  readonly bytes: number
}

export interface AllocationSummary {
  readonly totalBytes: number
  /** Where the bytes were allocated: the allocating function itself. */
  readonly bySelf: ReadonlyArray<AllocationSite>
  /** The nearest frame of the service's own code (`src/`) on each allocation's stack, or "(no src/ frame)". */
  readonly bySourceFrame: ReadonlyArray<AllocationSite>
  /** The allocating function's package or area (effect/…, node:…, src/…). */
  readonly byArea: ReadonlyArray<AllocationSite>
}

const REPO = Path.resolve(import.meta.dirname, "..")
/** One sample per this many bytes allocated, on average: fine enough for sites of a few hundred bytes per request. */
const SAMPLING_INTERVAL = 4096

const shortUrl = (url: string) => url.replace(/^file:\/\//, "").replace(`${REPO}/`, "").replace(/^.*node_modules\//, "")

const siteOf = (frame: CallFrame) =>
  frame.url === "" ? frame.functionName || "(native)" : `${frame.functionName || "(anonymous)"} ${shortUrl(frame.url)}:${frame.lineNumber + 1}`

const areaOf = (frame: CallFrame) => {
  if (frame.url === "") return frame.functionName.startsWith("(") ? frame.functionName : "(native / V8 builtins)"
  if (frame.url.startsWith("node:")) return `node:${frame.url.slice(5).split("/")[0]}`
  const short = shortUrl(frame.url)
  if (short.startsWith("src/")) return short
  const parts = short.split("/")
  return parts[0]!.startsWith("@") ? `${parts[0]}/${parts[1]}` : parts[0] === "effect" ? `effect/${parts.at(-1)}` : parts[0]!
}

const ranked = (totals: Map<string, number>): ReadonlyArray<AllocationSite> =>
  [...totals].map(([site, bytes]) => ({ site, bytes })).sort((a, b) => b.bytes - a.bytes)

const add = (totals: Map<string, number>, key: string, bytes: number) => totals.set(key, (totals.get(key) ?? 0) + bytes)

export const summarizeAllocations = (head: SamplingNode): AllocationSummary => {
  const bySelf = new Map<string, number>()
  const bySource = new Map<string, number>()
  const byArea = new Map<string, number>()
  let totalBytes = 0
  const visit = (node: SamplingNode, nearestSource: string | undefined) => {
    const source = shortUrl(node.callFrame.url).startsWith("src/") ? siteOf(node.callFrame) : nearestSource
    if (node.selfSize > 0) {
      totalBytes += node.selfSize
      add(bySelf, siteOf(node.callFrame), node.selfSize)
      add(bySource, source ?? "(no src/ frame)", node.selfSize)
      add(byArea, areaOf(node.callFrame), node.selfSize)
    }
    for (const child of node.children) visit(child, source)
  }
  visit(head, undefined)
  return { totalBytes, bySelf: ranked(bySelf), bySourceFrame: ranked(bySource), byArea: ranked(byArea) }
}

/**
 * Starts sampling in the inspected process; the returned function stops and
 * summarises. `promotedOnly`: leave out what a scavenge collected, so what is
 * counted is what survived the young generation (it lives on, or dies in a
 * full collection: the work that makes full collections come sooner).
 */
export const sampleAllocations = async (
  inspector: Inspector,
  promotedOnly = false
): Promise<() => Promise<AllocationSummary>> => {
  await inspector.send("HeapProfiler.enable")
  await inspector.send("HeapProfiler.startSampling", {
    samplingInterval: SAMPLING_INTERVAL,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: !promotedOnly
  })
  return async () => {
    const { profile } = await inspector.send<{ readonly profile: { readonly head: SamplingNode } }>("HeapProfiler.stopSampling")
    return summarizeAllocations(profile.head)
  }
}
