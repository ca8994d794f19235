/**
 * The manufacturability measurements of a mesh (docs/geometry.md,
 * "Manufacturability"): what every technology's verdict is made from,
 * measured once with the geometry and stored with it. Nothing here depends
 * on a technology; the limits are applied by the verdict (verdict.ts).
 *
 * - mesh health, exactly (topology.ts): open, non-manifold and inconsistently
 *   oriented edges; degenerate triangles (no area: a repeated vertex, or
 *   three in a line), which the edge counts leave out; shells;
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
 * Each finding is located (region.ts): the box and a few points of the
 * edges, triangles, shells or sampled points it concerns, and of the whole
 * part (what the build volume concerns); for the wall thickness, whose
 * limit is the technology's, the THINNEST_KEPT thinnest sampled points
 * with their thickness, from which the verdict takes those below its
 * limit.
 *
 * The rays run on a BVH (bvh.ts): a 1,000,000-triangle mesh in well under
 * a second.
 */
import { seededRandom, triangleAt } from "../sampling.ts"
import { buildBvh, facesAlong, RayCaster } from "./bvh.ts"
import { type Point, type Region, RegionBuilder, round } from "./region.ts"
import { topologyOf } from "./topology.ts"

/** Points drawn on the surface for the wall thickness and reachability rays, whatever the triangle count. */
export const SAMPLE_POINTS = 2048
/** Shells tested for nesting (one ray each); a model with more is reported as such. */
export const MAX_NESTING_SHELLS = 256
/** The overhang angle from the vertical beyond which a downward face needs support. */
export const OVERHANG_DEGREES = 45
const SEED = 0x5eed_df01
/** The thinnest sampled walls kept with their points: where a thin wall is, for any technology's limit. */
export const THINNEST_KEPT = 16

/** The findings a region locates. */
export type RegionKind =
  | "openEdges"
  | "nonManifoldEdges"
  | "inconsistentEdges"
  | "degenerateTriangles"
  | "extraBodies"
  | "cavities"
  | "overhang"
  | "undercuts"

export interface DfmMeasurements {
  readonly openEdges: number
  readonly nonManifoldEdges: number
  readonly inconsistentEdges: number
  /** Triangles without area (a repeated vertex, or three in a line); absent on measurements made before they were counted. */
  readonly degenerateTriangles?: number
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
  /** The part's box (the vertices its triangles use), in its coordinates; absent, as the rest below, on measurements made before findings were located. */
  readonly bounds?: { readonly min: Point; readonly max: Point }
  /** Where each finding is, for those found. */
  readonly regions?: { readonly [K in RegionKind]?: Region }
  /** The THINNEST_KEPT thinnest sampled walls, thinnest first: [x, y, z, thickness] (mm). */
  readonly thinnestWalls?: ReadonlyArray<readonly [number, number, number, number]>
}

/** A direction in no plane of the axes, so a nesting ray never runs along an axis-aligned face or edge. */
const NESTING_RAY = (() => {
  const x = 0.3178, y = 0.5447, z = 0.7761
  const length = Math.hypot(x, y, z)
  return [x / length, y / length, z / length] as const
})()

const AXES = [[1, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0], [0, 0, 1], [0, 0, -1]] as const

export const measureDfm = (positions: Float64Array, triangles: Uint32Array): DfmMeasurements => {
  const triangleCount = triangles.length / 3
  const topology = topologyOf(positions, triangles)
  const shells = topology.shellCount

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
  let area2 = 0, overhang2 = 0, degenerate = 0
  const part = new RegionBuilder(), overhangRegion = new RegionBuilder(), degenerateRegion = new RegionBuilder()
  // Per shell, when there are several: its box (min x, y, z, max x, y, z), to locate extra bodies and cavities.
  const shellBoxes = shells > 1 ? new Float64Array(6 * shells) : undefined
  if (shellBoxes !== undefined) {
    for (let i = 0; i < shellBoxes.length; i += 6) shellBoxes.set([Infinity, Infinity, Infinity, -Infinity, -Infinity, -Infinity], i)
  }
  for (let t = 0; t < triangleCount; t++) {
    const i0 = 3 * triangles[3 * t]!, i1 = 3 * triangles[3 * t + 1]!, i2 = 3 * triangles[3 * t + 2]!
    const x0 = positions[i0]!, y0 = positions[i0 + 1]!, z0 = positions[i0 + 2]!
    const x1 = positions[i1]!, y1 = positions[i1 + 1]!, z1 = positions[i1 + 2]!
    const x2 = positions[i2]!, y2 = positions[i2 + 1]!, z2 = positions[i2 + 2]!
    const ax = x1 - x0, ay = y1 - y0, az = z1 - z0
    const bx = x2 - x0, by = y2 - y0, bz = z2 - z0
    const cx = ay * bz - az * by, cy = az * bx - ax * bz, cz = ax * by - ay * bx
    const length = Math.sqrt(cx * cx + cy * cy + cz * cz)
    area2 += length
    cumulative[t] = area2
    part.include(x0, y0, z0)
    part.include(x1, y1, z1)
    part.include(x2, y2, z2)
    const shell = topology.shellOf[t]!
    if (shellBoxes !== undefined) {
      const o = 6 * shell
      shellBoxes[o] = Math.min(shellBoxes[o]!, x0, x1, x2)
      shellBoxes[o + 1] = Math.min(shellBoxes[o + 1]!, y0, y1, y2)
      shellBoxes[o + 2] = Math.min(shellBoxes[o + 2]!, z0, z1, z2)
      shellBoxes[o + 3] = Math.max(shellBoxes[o + 3]!, x0, x1, x2)
      shellBoxes[o + 4] = Math.max(shellBoxes[o + 4]!, y0, y1, y2)
      shellBoxes[o + 5] = Math.max(shellBoxes[o + 5]!, z0, z1, z2)
    }
    if (length > 0) {
      normals[3 * t] = cx / length
      normals[3 * t + 1] = cy / length
      normals[3 * t + 2] = cz / length
      if (shellSeed[shell] === -1) shellSeed[shell] = t
      if (cz / length < downward && Math.max(z0, z1, z2) > plate) {
        overhang2 += length
        overhangRegion.include(x0, y0, z0)
        overhangRegion.include(x1, y1, z1)
        overhangRegion.include(x2, y2, z2)
        overhangRegion.candidate((x0 + x1 + x2) / 3, (y0 + y1 + y2) / 3, (z0 + z1 + z2) / 3, length)
      }
    } else {
      degenerate++
      degenerateRegion.include(x0, y0, z0)
      degenerateRegion.include(x1, y1, z1)
      degenerateRegion.include(x2, y2, z2)
      degenerateRegion.point((x0 + x1 + x2) / 3, (y0 + y1 + y2) / 3, (z0 + z1 + z2) / 3)
    }
    shellVolume6[shell]! += x0 * cx + y0 * cy + z0 * cz
  }

  const bvh = buildBvh(positions, triangles)
  const rays = new RayCaster(bvh)

  // Nesting: one ray from a point of each shell; the shells it crosses an odd number of times hold that point.
  const shellsChecked = Math.min(topology.shellCount, MAX_NESTING_SHELLS)
  let cavities = 0, cavityVolume6 = 0
  const isCavity = new Uint8Array(shells)
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
        isCavity[shell] = 1
      }
    }
  }
  const { cavityRegion, extraBodiesRegion } = shellRegions(positions, triangles, shellSeed, shellBoxes, isCavity, shellVolume6)

  // Surface samples: wall thickness inwards (with where, for the thinnest), reachability outwards.
  const thicknesses: Array<number> = []
  const walls: Array<readonly [number, number, number, number]> = []
  const undercutRegion = new RegionBuilder()
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
    if (inward.triangle !== -1 && facesAlong(bvh, inward.triangle, -nx, -ny, -nz)) {
      thicknesses.push(inward.distance)
      walls.push([px, py, pz, inward.distance])
    }
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
    if (!reached) {
      unreachable++
      undercutRegion.point(px, py, pz)
    }
  }
  thicknesses.sort((a, b) => a - b)
  walls.sort((a, b) => a[3] - b[3])
  const area = area2 / 2
  const located: Record<RegionKind, Region | undefined> = {
    openEdges: topology.openRegion,
    nonManifoldEdges: topology.nonManifoldRegion,
    inconsistentEdges: topology.inconsistentRegion,
    degenerateTriangles: degenerateRegion.region(),
    extraBodies: extraBodiesRegion,
    cavities: cavityRegion,
    overhang: overhangRegion.region(),
    undercuts: undercutRegion.region()
  }
  const bounds = part.region()
  return {
    openEdges: topology.openEdges,
    nonManifoldEdges: topology.nonManifoldEdges,
    inconsistentEdges: topology.inconsistentEdges,
    degenerateTriangles: degenerate,
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
    undercutArea: samples === 0 ? 0 : round(area * unreachable / samples),
    ...(bounds === undefined ? {} : { bounds: { min: bounds.min, max: bounds.max } }),
    regions: Object.fromEntries(Object.entries(located).filter(([, region]) => region !== undefined)) as NonNullable<DfmMeasurements["regions"]>,
    thinnestWalls: walls.slice(0, THINNEST_KEPT).map(([x, y, z, thickness]) => [round(x), round(y), round(z), round(thickness)] as const)
  }
}

/**
 * Where the cavities are (the shells inside the material) and the bodies
 * besides the largest (by volume): the boxes of their shells, and a point
 * of each (of its first triangle with an area).
 */
const shellRegions = (
  positions: Float64Array,
  triangles: Uint32Array,
  shellSeed: Int32Array,
  shellBoxes: Float64Array | undefined,
  isCavity: Uint8Array,
  shellVolume6: Float64Array
) => {
  const cavities = new RegionBuilder(), extraBodies = new RegionBuilder()
  if (shellBoxes === undefined) return { cavityRegion: undefined, extraBodiesRegion: undefined }
  let largest = -1
  for (let shell = 0; shell < isCavity.length; shell++) {
    if (isCavity[shell] === 0 && (largest === -1 || Math.abs(shellVolume6[shell]!) > Math.abs(shellVolume6[largest]!))) largest = shell
  }
  for (let shell = 0; shell < isCavity.length; shell++) {
    if (shell === largest) continue
    const region = isCavity[shell] === 1 ? cavities : extraBodies
    const o = 6 * shell
    region.include(shellBoxes[o]!, shellBoxes[o + 1]!, shellBoxes[o + 2]!)
    region.include(shellBoxes[o + 3]!, shellBoxes[o + 4]!, shellBoxes[o + 5]!)
    const t = shellSeed[shell]!
    if (t === -1) continue
    const i0 = 3 * triangles[3 * t]!, i1 = 3 * triangles[3 * t + 1]!, i2 = 3 * triangles[3 * t + 2]!
    region.point(
      (positions[i0]! + positions[i1]! + positions[i2]!) / 3,
      (positions[i0 + 1]! + positions[i1 + 1]! + positions[i2 + 1]!) / 3,
      (positions[i0 + 2]! + positions[i1 + 2]! + positions[i2 + 2]!) / 3
    )
  }
  return { cavityRegion: cavities.region(), extraBodiesRegion: extraBodies.region() }
}
