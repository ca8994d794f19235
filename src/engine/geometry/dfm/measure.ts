/**
 * The manufacturability measurements of a mesh (docs/geometry.md,
 * "Manufacturability"): what every technology's verdict is made from,
 * measured once with the geometry and stored with it. Nothing here depends
 * on a technology; the limits are applied by the verdict (verdict.ts).
 *
 * - mesh health, exactly (topology.ts): open, non-manifold and inconsistently
 *   oriented edges; shells;
 * - enclosed cavities: shells inside an odd number of other shells, by the
 *   parity of one ray's crossings (at most MAX_NESTING_SHELLS shells tested);
 * - overhang: the area of the triangles facing down more steeply than 45°
 *   (normal z < −cos 45°), leaving out those on the build plate (at the
 *   lowest z), in the file's orientation;
 * - wall thickness: from SAMPLE_POINTS points drawn uniformly on the surface
 *   (seeded, so a mesh always gives the same figures), a ray into the
 *   material (against the triangle's normal) to the first surface it leaves
 *   through; the thinnest and the 5th percentile;
 * - CNC reachability: from the same points, a ray towards each of the six
 *   axis directions the surface does not face away from; a point that none
 *   leaves without hitting the part is an undercut, and the undercut area is
 *   the surface area times the share of such points.
 *
 * The rays run on a BVH (bvh.ts): a 1,000,000-triangle mesh in well under
 * a second.
 */
import { seededRandom, triangleAt } from "../sampling.ts"
import { buildBvh, facesAlong, RayCaster } from "./bvh.ts"
import { topologyOf } from "./topology.ts"

/** Points drawn on the surface for the wall thickness and reachability rays, whatever the triangle count. */
export const SAMPLE_POINTS = 2048
/** Shells tested for nesting (one ray each); a model with more is reported as such. */
export const MAX_NESTING_SHELLS = 256
/** The overhang angle from the vertical beyond which a downward face needs support. */
export const OVERHANG_DEGREES = 45
const SEED = 0x5eed_df01
/** Stored figures are rounded to this many decimals (1e-6 mm, 1e-6 mm²). */
const DECIMALS = 6

export interface DfmMeasurements {
  readonly openEdges: number
  readonly nonManifoldEdges: number
  readonly inconsistentEdges: number
  readonly shells: number
  /** Shells tested for nesting (the first MAX_NESTING_SHELLS). */
  readonly shellsChecked: number
  /** Shells enclosed by the material (inside an odd number of other shells): voids with no way out. */
  readonly cavities: number
  /** mm³, of the cavities. */
  readonly cavityVolume: number
  /** mm², facing down beyond 45° from vertical, not on the build plate. */
  readonly overhangArea: number
  /** Points sampled on the surface. */
  readonly samples: number
  /** mm: the thinnest wall the sampled points measured, and the 5th percentile; null when no ray found a wall (an open sheet). */
  readonly wallThickness: { readonly min: number; readonly p5: number; readonly measured: number } | null
  /** mm², the surface no axis direction reaches (estimated from the samples). */
  readonly undercutArea: number
}

const round = (value: number) => Math.round(value * 10 ** DECIMALS) / 10 ** DECIMALS

/** A direction in no plane of the axes, so a nesting ray never runs along an axis-aligned face or edge. */
const NESTING_RAY = (() => {
  const x = 0.3178, y = 0.5447, z = 0.7761
  const length = Math.hypot(x, y, z)
  return [x / length, y / length, z / length] as const
})()

const AXES = [[1, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0], [0, 0, 1], [0, 0, -1]] as const

export const measureDfm = (positions: Float64Array, triangles: Uint32Array): DfmMeasurements => {
  const triangleCount = triangles.length / 3
  const topology = topologyOf(positions.length / 3, triangles)

  // Per triangle: unit normal, doubled area; per shell: signed volume; overall extents.
  const normals = new Float64Array(triangleCount * 3)
  const cumulative = new Float64Array(triangleCount)
  const shellVolume6 = new Float64Array(topology.shellCount)
  const shellSeed = new Int32Array(topology.shellCount).fill(-1)
  let minZ = Infinity, extent = 0
  let lowX = Infinity, lowY = Infinity, highX = -Infinity, highY = -Infinity, highZ = -Infinity
  for (let i = 0; i < positions.length; i += 3) {
    lowX = Math.min(lowX, positions[i]!)
    highX = Math.max(highX, positions[i]!)
    lowY = Math.min(lowY, positions[i + 1]!)
    highY = Math.max(highY, positions[i + 1]!)
    minZ = Math.min(minZ, positions[i + 2]!)
    highZ = Math.max(highZ, positions[i + 2]!)
  }
  extent = Math.max(highX - lowX, highY - lowY, highZ - minZ, 0)
  // Hits nearer than this are the surface the ray starts on.
  const epsilon = Math.max(extent, 1) * 1e-9
  const plate = minZ + Math.max(extent, 1) * 1e-9
  const downward = -Math.cos(OVERHANG_DEGREES * Math.PI / 180)
  let area2 = 0, overhang2 = 0
  for (let t = 0; t < triangleCount; t++) {
    const i0 = 3 * triangles[3 * t]!, i1 = 3 * triangles[3 * t + 1]!, i2 = 3 * triangles[3 * t + 2]!
    const x0 = positions[i0]!, y0 = positions[i0 + 1]!, z0 = positions[i0 + 2]!
    const ax = positions[i1]! - x0, ay = positions[i1 + 1]! - y0, az = positions[i1 + 2]! - z0
    const bx = positions[i2]! - x0, by = positions[i2 + 1]! - y0, bz = positions[i2 + 2]! - z0
    const cx = ay * bz - az * by, cy = az * bx - ax * bz, cz = ax * by - ay * bx
    const length = Math.sqrt(cx * cx + cy * cy + cz * cz)
    area2 += length
    cumulative[t] = area2
    if (length > 0) {
      normals[3 * t] = cx / length
      normals[3 * t + 1] = cy / length
      normals[3 * t + 2] = cz / length
      const shell = topology.shellOf[t]!
      if (shellSeed[shell] === -1) shellSeed[shell] = t
      if (cz / length < downward && Math.max(z0, positions[i1 + 2]!, positions[i2 + 2]!) > plate) overhang2 += length
    }
    shellVolume6[topology.shellOf[t]!]! += x0 * cx + y0 * cy + z0 * cz
  }

  const bvh = buildBvh(positions, triangles)
  const rays = new RayCaster(bvh)

  // Nesting: one ray from a point of each shell; the shells it crosses an odd number of times hold that point.
  const shellsChecked = Math.min(topology.shellCount, MAX_NESTING_SHELLS)
  let cavities = 0, cavityVolume6 = 0
  if (topology.shellCount > 1) {
    const parity = new Uint8Array(topology.shellCount)
    const touched: Array<number> = []
    for (let shell = 0; shell < shellsChecked; shell++) {
      const t = shellSeed[shell]!
      if (t === -1) continue
      const i0 = 3 * triangles[3 * t]!, i1 = 3 * triangles[3 * t + 1]!, i2 = 3 * triangles[3 * t + 2]!
      const ox = (positions[i0]! + positions[i1]! + positions[i2]!) / 3
      const oy = (positions[i0 + 1]! + positions[i1 + 1]! + positions[i2 + 1]!) / 3
      const oz = (positions[i0 + 2]! + positions[i1 + 2]! + positions[i2 + 2]!) / 3
      rays.all(ox, oy, oz, NESTING_RAY[0], NESTING_RAY[1], NESTING_RAY[2], (hit) => {
        const other = topology.shellOf[hit]!
        if (other === shell) return
        if (parity[other] === 0) touched.push(other)
        parity[other]! ^= 1
      })
      let depth = 0
      for (const other of touched) {
        depth += parity[other]!
        parity[other] = 0
      }
      touched.length = 0
      if (depth % 2 === 1) {
        cavities++
        cavityVolume6 += Math.abs(shellVolume6[shell]!)
      }
    }
  }

  // Surface samples: wall thickness inwards, reachability outwards.
  const thicknesses: Array<number> = []
  let unreachable = 0
  const samples = area2 > 0 && Number.isFinite(area2) ? SAMPLE_POINTS : 0
  const random = seededRandom(SEED)
  for (let sample = 0; sample < samples; sample++) {
    const t = triangleAt(cumulative, random() * area2)
    let u = random(), v = random()
    if (u + v > 1) {
      u = 1 - u
      v = 1 - v
    }
    const i0 = 3 * triangles[3 * t]!, i1 = 3 * triangles[3 * t + 1]!, i2 = 3 * triangles[3 * t + 2]!
    const px = positions[i0]! + u * (positions[i1]! - positions[i0]!) + v * (positions[i2]! - positions[i0]!)
    const py = positions[i0 + 1]! + u * (positions[i1 + 1]! - positions[i0 + 1]!) + v * (positions[i2 + 1]! - positions[i0 + 1]!)
    const pz = positions[i0 + 2]! + u * (positions[i1 + 2]! - positions[i0 + 2]!) + v * (positions[i2 + 2]! - positions[i0 + 2]!)
    const nx = normals[3 * t]!, ny = normals[3 * t + 1]!, nz = normals[3 * t + 2]!
    // Into the material: the wall ends where the ray leaves it, through a surface facing along the ray.
    const inward = rays.closest(px, py, pz, -nx, -ny, -nz, t, epsilon)
    if (inward.triangle !== -1 && facesAlong(bvh, inward.triangle, -nx, -ny, -nz)) thicknesses.push(inward.distance)
    // Reachable when some axis direction the surface does not face away from leaves without a hit.
    const ox = px + nx * epsilon * 10, oy = py + ny * epsilon * 10, oz = pz + nz * epsilon * 10
    let reached = false
    for (const [dx, dy, dz] of AXES) {
      if (nx * dx + ny * dy + nz * dz < -1e-9) continue
      if (!rays.any(ox, oy, oz, dx, dy, dz, t, epsilon)) {
        reached = true
        break
      }
    }
    if (!reached) unreachable++
  }
  thicknesses.sort((a, b) => a - b)
  const area = area2 / 2
  return {
    openEdges: topology.openEdges,
    nonManifoldEdges: topology.nonManifoldEdges,
    inconsistentEdges: topology.inconsistentEdges,
    shells: topology.shellCount,
    shellsChecked,
    cavities,
    cavityVolume: round(cavityVolume6 / 6),
    overhangArea: round(overhang2 / 2),
    samples,
    wallThickness: thicknesses.length === 0 ? null : {
      min: round(thicknesses[0]!),
      p5: round(thicknesses[Math.floor(thicknesses.length * 0.05)]!),
      measured: thicknesses.length
    },
    undercutArea: samples === 0 ? 0 : round(area * unreachable / samples)
  }
}
