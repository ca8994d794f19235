/**
 * Benchmark: the analysis of a 1,000,000-triangle binary STL (a UV sphere,
 * 1000 × 501, written in memory, ~50 MB), from bytes to geometry: parsing,
 * vertex welding, volume, area, bounding box and the watertightness check.
 * Target: under 1 s. Prints each run and the median; exits non-zero when
 * the median misses the target or the geometry is wrong.
 *
 *   node bench/geometry.ts [--runs 5]
 */
import { parseArgs } from "node:util"
import { analyseModelSync } from "../src/engine/geometry/model.ts"
import { binaryStl, sphere } from "../src/engine/geometry/writers.ts"

const { values } = parseArgs({ options: { runs: { type: "string", default: "5" } } })
const runs = Math.max(1, Number(values.runs))
const TARGET_MS = 1000

const mesh = sphere(50, 1000, 501)
const file = binaryStl(mesh)
console.log(`binary STL: ${mesh.triangles.length / 3} triangles, ${(file.length / 1e6).toFixed(1)} MB`)

const times: Array<number> = []
let geometry: ReturnType<typeof analyseModelSync> | undefined
for (let run = 0; run < runs; run++) {
  const start = performance.now()
  geometry = analyseModelSync(file, "sphere.stl")
  const elapsed = performance.now() - start
  times.push(elapsed)
  console.log(`run ${run + 1}: ${elapsed.toFixed(0)} ms`)
}
const median = [...times].sort((a, b) => a - b)[Math.floor(times.length / 2)]!
console.log(`geometry: ${JSON.stringify(geometry)}`)
console.log(`median: ${median.toFixed(0)} ms (first run ${times[0]!.toFixed(0)} ms; target < ${TARGET_MS} ms)`)

const sphereVolume = 4 / 3 * Math.PI * 50 ** 3
const wrong = geometry === undefined || geometry.triangleCount !== 1_000_000 || !geometry.watertight ||
  Math.abs(geometry.volume / sphereVolume - 1) > 1e-4
if (wrong) console.error("the geometry is wrong")
process.exit(wrong || median >= TARGET_MS ? 1 : 0)
