/**
 * Benchmark: the analysis of a 1,000,000-triangle binary STL (a UV sphere,
 * 1000 × 501, written in memory, ~50 MB), from bytes to geometry: parsing,
 * vertex welding, volume, area, bounding box and the watertightness check;
 * first in this thread (the analysis itself), then as the engine runs it,
 * through the model analyser's worker pool (src/engine/geometry/ModelAnalyser.ts:
 * the bytes moved to a worker thread, analysed there, the geometry back).
 * The analysis includes the manufacturability measurements (DFM: mesh
 * health, shells and cavities, overhang, wall thickness and reachability
 * rays on a BVH), also timed alone. Target: under 2 s each with every
 * check. Prints each run and the medians; exits non-zero when a median
 * misses the target or the geometry is wrong. Last, what a file pays when
 * the pool has no thread (they start on demand and end when idle): a
 * 12-triangle cube on a new pool, then on its warm thread.
 *
 *   node bench/geometry.ts [--runs 5]
 */
import { Effect } from "effect"
import { parseArgs } from "node:util"
import { measureDfm } from "../src/engine/geometry/dfm/measure.ts"
import type { AnalysedGeometry } from "../src/engine/geometry/mesh.ts"
import { analyseModelSync } from "../src/engine/geometry/model.ts"
import { defaultAnalyserOptions, makeModelAnalyser } from "../src/engine/geometry/ModelAnalyser.ts"
import { binaryStl, sphere } from "../src/engine/geometry/writers.ts"

const { values } = parseArgs({ options: { runs: { type: "string", default: "5" } } })
const runs = Math.max(1, Number(values.runs))
const TARGET_MS = 2000

const mesh = sphere(50, 1000, 501)
const file = binaryStl(mesh)
console.log(`binary STL: ${mesh.triangles.length / 3} triangles, ${(file.length / 1e6).toFixed(1)} MB`)

const median = (times: ReadonlyArray<number>) => [...times].sort((a, b) => a - b)[Math.floor(times.length / 2)]!

console.log("in this thread:")
const times: Array<number> = []
let geometry: AnalysedGeometry | undefined
for (let run = 0; run < runs; run++) {
  const start = performance.now()
  geometry = analyseModelSync(file, "sphere.stl")
  const elapsed = performance.now() - start
  times.push(elapsed)
  console.log(`run ${run + 1}: ${elapsed.toFixed(0)} ms`)
}

console.log("the DFM measurements alone:")
const dfmTimes: Array<number> = []
for (let run = 0; run < runs; run++) {
  const start = performance.now()
  measureDfm(mesh.positions, mesh.triangles)
  const elapsed = performance.now() - start
  dfmTimes.push(elapsed)
  console.log(`run ${run + 1}: ${elapsed.toFixed(0)} ms`)
}

console.log("through the worker pool:")
const pooled: Array<number> = []
let pooledGeometry: AnalysedGeometry | undefined
await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
  const analyser = yield* makeModelAnalyser(defaultAnalyserOptions)
  // A thread starts for the first file: one analysis of a cube first, so the runs measure the analysis, not the start.
  yield* analyser.analyse(binaryStl(sphere(1, 8, 4)), "warm.stl", "bench")
  for (let run = 0; run < runs; run++) {
    // The pool takes the bytes (moved to the worker): a copy each run, made before the clock starts.
    const bytes = file.slice()
    const start = performance.now()
    pooledGeometry = yield* analyser.analyse(bytes, "sphere.stl", "bench")
    const elapsed = performance.now() - start
    pooled.push(elapsed)
    console.log(`run ${run + 1}: ${elapsed.toFixed(0)} ms`)
  }
})))

console.log("a thread started for the file (a new pool), then the same thread warm: a 12-triangle cube")
const cube = binaryStl(sphere(1, 8, 4))
const cold: Array<number> = []
const warm: Array<number> = []
for (let run = 0; run < runs; run++) {
  await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
    const analyser = yield* makeModelAnalyser(defaultAnalyserOptions)
    for (const times of [cold, warm]) {
      const start = performance.now()
      yield* analyser.analyse(cube.slice(), "cube.stl", "bench")
      times.push(performance.now() - start)
    }
  })))
  console.log(`run ${run + 1}: ${cold.at(-1)!.toFixed(1)} ms, then ${warm.at(-1)!.toFixed(1)} ms`)
}

console.log(`geometry: ${JSON.stringify(geometry)}`)
console.log(`median of the DFM measurements: ${median(dfmTimes).toFixed(0)} ms (included in the analysis below)`)
console.log(`median in this thread: ${median(times).toFixed(0)} ms (first run ${times[0]!.toFixed(0)} ms; target < ${TARGET_MS} ms)`)
console.log(`median through the pool: ${median(pooled).toFixed(0)} ms (first run ${pooled[0]!.toFixed(0)} ms; target < ${TARGET_MS} ms)`)
console.log(`median of a small file on a thread started for it: ${median(cold).toFixed(1)} ms; on a warm thread: ${median(warm).toFixed(1)} ms`)

const sphereVolume = 4 / 3 * Math.PI * 50 ** 3
const wrong = geometry === undefined || geometry.triangleCount !== 1_000_000 || !geometry.watertight || geometry.dfm?.shells !== 1 ||
  geometry.dfm.openEdges !== 0 || Math.abs((geometry.dfm.wallThickness?.min ?? 0) - 100) > 0.01 ||
  Math.abs(geometry.volume / sphereVolume - 1) > 1e-4 || JSON.stringify(pooledGeometry) !== JSON.stringify(geometry)
if (wrong) console.error("the geometry is wrong")
process.exit(wrong || median(times) >= TARGET_MS || median(pooled) >= TARGET_MS ? 1 : 0)
