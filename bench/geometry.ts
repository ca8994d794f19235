/**
 * Benchmark: a 1,000,000-triangle model (a UV sphere, 1000 × 501, written in
 * memory) from bytes to geometry, as binary STL (~50 MB) and as 3MF, plain
 * and ZIP64, each timed in the same run so the ratios compare like with
 * like:
 *
 * - reading the STL: parsing, vertex welding, volume, area, bounding box,
 *   watertightness (target < 1 s);
 * - the whole analysis with the manufacturability measurements (DFM: mesh
 *   health, shells and cavities, overhang, wall thickness and reachability
 *   rays on a BVH), in this thread and through the model analyser's worker
 *   pool (src/engine/geometry/ModelAnalyser.ts: the bytes moved to a worker
 *   thread), and the DFM alone (target < 2 s each);
 * - reading the sphere's 3MF, plain ZIP and ZIP64 (end records and a ZIP64
 *   extra field in every header, written in streaming mode), alternately:
 *   ZIP64 / plain, the median of each pair's ratio, within 1.3x;
 * - the CRC-32 checks of that read: node:zlib's crc32 over the very chunks
 *   the inflation hands on (what streamEntry computes), against the read
 *   that includes it: under 10 %.
 *
 * Last, what a file pays when the pool has no thread (they start on demand
 * and end when idle): a small file on a new pool, then on its warm thread.
 * Prints each run, the medians and the ratios; exits non-zero when a target
 * is missed or a geometry is wrong.
 *
 *   node bench/geometry.ts [--runs 5]
 */
import { Effect } from "effect"
import { parseArgs } from "node:util"
import { crc32 } from "node:zlib"
import { measureDfm } from "../src/engine/geometry/dfm/measure.ts"
import { DEFAULT_LIMITS } from "../src/engine/geometry/limits.ts"
import { analyse, type AnalysedGeometry, type Geometry } from "../src/engine/geometry/mesh.ts"
import { analyseModelSync, parseModel } from "../src/engine/geometry/model.ts"
import { defaultAnalyserOptions, makeModelAnalyser } from "../src/engine/geometry/ModelAnalyser.ts"
import { binaryStl, sphere, threeMf } from "../src/engine/geometry/writers.ts"
import { readZip, streamEntry, unpackBudget } from "../src/engine/geometry/zip.ts"

const { values } = parseArgs({ options: { runs: { type: "string", default: "5" } } })
const runs = Math.max(1, Number(values.runs))
const READ_TARGET_MS = 1000
const ANALYSIS_TARGET_MS = 2000
const ZIP64_TARGET_RATIO = 1.3
const CRC_TARGET_RATIO = 0.1

const mesh = sphere(50, 1000, 501)
const file = binaryStl(mesh)
console.log(`binary STL: ${mesh.triangles.length / 3} triangles, ${(file.length / 1e6).toFixed(1)} MB`)
const model = { objects: [{ id: 1, mesh }], items: [{ objectId: 1 }] }
const plain3mf = threeMf(model)
const zip64 = threeMf({ ...model, zip64: "extra-fields", dataDescriptor: true })
console.log(`3MF: ${(plain3mf.length / 1e6).toFixed(1)} MB plain, ${(zip64.length / 1e6).toFixed(1)} MB ZIP64`)

const median = (times: ReadonlyArray<number>) => [...times].sort((a, b) => a - b)[Math.floor(times.length / 2)]!

/** `work` `runs` times, each timed and printed; the last result and the times. */
const timed = <A>(label: string, work: () => A): { readonly result: A; readonly times: ReadonlyArray<number> } => {
  console.log(`${label}:`)
  const times: Array<number> = []
  let result: A | undefined
  for (let run = 0; run < runs; run++) {
    const start = performance.now()
    result = work()
    times.push(performance.now() - start)
    console.log(`run ${run + 1}: ${times.at(-1)!.toFixed(0)} ms`)
  }
  return { result: result!, times }
}

/** Reading a file: its mesh and measures, without the manufacturability measurements. */
const read = (bytes: Uint8Array, fileName: string): Geometry => analyse(parseModel(bytes, fileName).mesh)

const stlRead = timed("reading the STL (parse, weld, measures)", () => read(file, "sphere.stl"))
const analysed = timed("the whole analysis, in this thread", () => analyseModelSync(file, "sphere.stl"))
const dfm = timed("the DFM measurements alone", () => measureDfm(mesh.positions, mesh.triangles))

console.log("the whole analysis, through the worker pool:")
const pooled: Array<number> = []
let pooledGeometry: AnalysedGeometry | undefined
await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
  const analyser = yield* makeModelAnalyser(defaultAnalyserOptions)
  // A thread starts for the first file: one analysis of a small file first, so the runs measure the analysis, not the start.
  yield* analyser.analyse(binaryStl(sphere(1, 8, 4)), "warm.stl", "bench")
  for (let run = 0; run < runs; run++) {
    // The pool takes the bytes (moved to the worker): a copy each run, made before the clock starts.
    const bytes = file.slice()
    const start = performance.now()
    pooledGeometry = yield* analyser.analyse(bytes, "sphere.stl", "bench")
    pooled.push(performance.now() - start)
    console.log(`run ${run + 1}: ${pooled.at(-1)!.toFixed(0)} ms`)
  }
})))

// The two archives read alternately, so a drift of the machine falls on both.
console.log("reading the 3MF, plain ZIP then ZIP64, alternately:")
const plainTimes: Array<number> = []
const zip64Times: Array<number> = []
let plainGeometry: Geometry | undefined
let zip64Geometry: Geometry | undefined
for (let run = 0; run < runs; run++) {
  let start = performance.now()
  plainGeometry = read(plain3mf, "sphere.3mf")
  plainTimes.push(performance.now() - start)
  start = performance.now()
  zip64Geometry = read(zip64, "sphere.3mf")
  zip64Times.push(performance.now() - start)
  console.log(`run ${run + 1}: ${plainTimes.at(-1)!.toFixed(0)} ms, ZIP64 ${zip64Times.at(-1)!.toFixed(0)} ms`)
}

// The chunks the inflation hands on, as streamEntry checks them; then their CRC-32 alone, as it computes it.
const chunks: Array<Uint8Array> = []
for (const entry of readZip(plain3mf).values()) streamEntry(plain3mf, entry, unpackBudget(DEFAULT_LIMITS), (chunk) => chunks.push(chunk.slice()))
const inflated = chunks.reduce((sum, chunk) => sum + chunk.length, 0)
const crc = timed(`the CRC-32 of the 3MF's ${(inflated / 1e6).toFixed(1)} MB of entries, in the inflater's ${chunks.length} chunks`, () => {
  let value = 0
  for (const chunk of chunks) value = crc32(chunk, value)
  return value
})

console.log("a thread started for the file (a new pool), then the same thread warm: a small sphere")
const small = binaryStl(sphere(1, 8, 4))
const cold: Array<number> = []
const warm: Array<number> = []
for (let run = 0; run < runs; run++) {
  await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
    const analyser = yield* makeModelAnalyser(defaultAnalyserOptions)
    for (const times of [cold, warm]) {
      const start = performance.now()
      yield* analyser.analyse(small.slice(), "small.stl", "bench")
      times.push(performance.now() - start)
    }
  })))
  console.log(`run ${run + 1}: ${cold.at(-1)!.toFixed(1)} ms, then ${warm.at(-1)!.toFixed(1)} ms`)
}

const geometry = analysed.result
// Each ZIP64 read over the plain read just before it: a drift of the machine's load falls on both of a pair.
const zip64Ratio = median(zip64Times.map((time, run) => time / plainTimes[run]!))
const crcRatio = median(crc.times) / median(plainTimes)
const met = (ok: boolean) => (ok ? "met" : "NOT MET")
console.log(`geometry: ${JSON.stringify({ ...geometry, shapeDistribution: undefined, dfm: undefined })}`)
console.log(`median reading the STL: ${median(stlRead.times).toFixed(0)} ms (target < ${READ_TARGET_MS} ms: ${met(median(stlRead.times) < READ_TARGET_MS)})`)
console.log(`median of the DFM measurements: ${median(dfm.times).toFixed(0)} ms (included in the analysis below)`)
console.log(
  `median of the whole analysis in this thread: ${median(analysed.times).toFixed(0)} ms (first run ${
    analysed.times[0]!.toFixed(0)
  } ms; target < ${ANALYSIS_TARGET_MS} ms)`
)
console.log(
  `median of the whole analysis through the pool: ${median(pooled).toFixed(0)} ms (first run ${pooled[0]!.toFixed(0)} ms; target < ${ANALYSIS_TARGET_MS} ms)`
)
console.log(`median reading the 3MF: plain ${median(plainTimes).toFixed(0)} ms, ZIP64 ${median(zip64Times).toFixed(0)} ms`)
console.log(
  `ratio ZIP64 / plain 3MF (median of the pairs): ${zip64Ratio.toFixed(2)}x (target <= ${ZIP64_TARGET_RATIO}x: ${met(zip64Ratio <= ZIP64_TARGET_RATIO)})`
)
console.log(
  `ratio CRC-32 / plain 3MF read: ${(100 * crcRatio).toFixed(1)} % (${median(crc.times).toFixed(1)} ms; target < ${100 * CRC_TARGET_RATIO} %: ${
    met(crcRatio < CRC_TARGET_RATIO)
  })`
)
console.log(`median of a small file on a thread started for it: ${median(cold).toFixed(1)} ms; on a warm thread: ${median(warm).toFixed(1)} ms`)

const sphereVolume = 4 / 3 * Math.PI * 50 ** 3
const sameMeasures = (a: Geometry | undefined, b: Geometry) =>
  a !== undefined && JSON.stringify([a.volume, a.surfaceArea, a.boundingBox, a.triangleCount, a.watertight]) ===
    JSON.stringify([b.volume, b.surfaceArea, b.boundingBox, b.triangleCount, b.watertight])
const wrong = geometry.triangleCount !== 1_000_000 || !geometry.watertight || geometry.dfm?.shells !== 1 ||
  geometry.dfm.openEdges !== 0 || Math.abs((geometry.dfm.wallThickness?.min ?? 0) - 100) > 0.01 ||
  Math.abs(geometry.volume / sphereVolume - 1) > 1e-4 || JSON.stringify(pooledGeometry) !== JSON.stringify(geometry) ||
  !sameMeasures(stlRead.result, geometry) || plainGeometry?.triangleCount !== 1_000_000 || !sameMeasures(zip64Geometry, plainGeometry) ||
  Math.abs(plainGeometry.volume / sphereVolume - 1) > 1e-4
if (wrong) console.error("a geometry is wrong")
const missed = median(stlRead.times) >= READ_TARGET_MS || median(analysed.times) >= ANALYSIS_TARGET_MS || median(pooled) >= ANALYSIS_TARGET_MS ||
  zip64Ratio > ZIP64_TARGET_RATIO || crcRatio >= CRC_TARGET_RATIO
process.exit(wrong || missed ? 1 : 0)
