/**
 * A triangle mesh and what the engine measures of it (docs/geometry.md):
 * volume by the divergence theorem, surface area, bounding box extents,
 * triangle count and watertightness. Millimetres throughout. The analysis
 * also draws the mesh's D2 shape distribution, which the part similarity
 * compares (shapeDistribution.ts).
 */
// effect/Data, not the whole of effect: the analysis workers load this module, and start faster so.
import * as Data from "effect/Data"
import type { ModelUnit } from "../../domain/ModelUnits.ts"
import { type DfmMeasurements, measureDfm } from "./dfm/measure.ts"
import { d2Distribution } from "./shapeDistribution.ts"

/**
 * What kind of refusal a ModelError is (the API's error `type`):
 * `UnreadableModel` (the default) when the file is not a model that can be
 * read (damaged, malformed, or breaking a rule of its format);
 * `UnsupportedModelExtension` when a 3MF requires an extension the reader
 * does not implement; `ModelUnitConflict` when the unit the caller states
 * contradicts the file's own; the others when a budget of the analysis is
 * exceeded (limits.ts, ModelAnalyser.ts).
 */
export type ModelErrorType =
  | "UnreadableModel"
  | "UnsupportedModelExtension"
  | "ModelUnitConflict"
  | "ModelTooComplex"
  | "ModelTooLarge"
  | "ModelAnalysisTimeout"
  | "ModelAnalysisOutOfMemory"

/**
 * Why a model file cannot be read or analysed; `reason` says what is wrong,
 * for the caller; `type`, when a budget was exceeded, which (unreadable when
 * absent).
 *
 * A Data.TaggedError, not a Schema one: the analysis threads raise it, and
 * each thread would otherwise load (and, when terminated, tear down) the whole
 * effect package's compiled code.
 */
export class ModelError extends Data.TaggedError("ModelError")<{ readonly reason: string; readonly type?: ModelErrorType }> {}

/** Vertices (x, y, z per vertex, mm) and triangles (three vertex indices each, counter-clockwise seen from outside). */
export interface Mesh {
  readonly positions: Float64Array
  readonly triangles: Uint32Array
}

export interface Geometry {
  readonly volume: number
  readonly surfaceArea: number
  readonly boundingBox: { readonly x: number; readonly y: number; readonly z: number }
  readonly triangleCount: number
  readonly watertight: boolean
}

/**
 * What the analysis stores with a part: the measures, and the D2 shape
 * distribution (fractions of SAMPLE_PAIRS distances per bin), which is for
 * the similarity ranking only and not part of the API's `geometry`.
 */
export interface AnalysedGeometry extends Geometry {
  /** The unit the file's coordinates were read in (the figures are millimetres); absent on geometry analysed before units were read. */
  readonly unit?: ModelUnit
  readonly shapeDistribution: ReadonlyArray<number>
  /** The manufacturability measurements (dfm/measure.ts); absent on geometry analysed before they existed. */
  readonly dfm?: DfmMeasurements
}

/**
 * Whether every edge is shared by exactly two triangles, with opposite
 * orientation: each directed edge a→b occurs once, and so does b→a.
 * Triangles with a repeated vertex (no area) are left out of the check.
 * Outgoing edges are grouped per vertex (counting sort), so the check is
 * linear in the triangle count and needs no hash table.
 */
export const isWatertight = (vertexCount: number, triangles: Uint32Array): boolean => {
  const triangleCount = triangles.length / 3
  if (triangleCount === 0) return false
  const start = new Uint32Array(vertexCount + 1)
  const usable = new Uint8Array(triangleCount)
  for (let t = 0; t < triangleCount; t++) {
    const a = triangles[3 * t]!, b = triangles[3 * t + 1]!, c = triangles[3 * t + 2]!
    if (a === b || b === c || a === c) continue
    usable[t] = 1
    start[a + 1]!++
    start[b + 1]!++
    start[c + 1]!++
  }
  for (let v = 0; v < vertexCount; v++) start[v + 1]! += start[v]!
  const fill = start.slice(0, vertexCount)
  const targets = new Uint32Array(start[vertexCount]!)
  for (let t = 0; t < triangleCount; t++) {
    if (usable[t] === 0) continue
    const a = triangles[3 * t]!, b = triangles[3 * t + 1]!, c = triangles[3 * t + 2]!
    targets[fill[a]!++] = b
    targets[fill[b]!++] = c
    targets[fill[c]!++] = a
  }
  const count = (from: number, to: number) => {
    let n = 0
    for (let i = start[from]!, end = start[from + 1]!; i < end; i++) if (targets[i] === to) n++
    return n
  }
  for (let a = 0; a < vertexCount; a++) {
    for (let i = start[a]!, end = start[a + 1]!; i < end; i++) {
      const b = targets[i]!
      if (count(a, b) !== 1 || count(b, a) !== 1) return false
    }
  }
  return true
}

/**
 * The geometry of a mesh. The volume is the sum of the signed tetrahedra
 * from a reference point (the first vertex: it keeps the products small) to
 * each triangle; a mesh whose triangles all face inwards has it negative,
 * so its magnitude is reported.
 */
export const analyse = (mesh: Mesh): AnalysedGeometry => {
  const p = mesh.positions
  const tris = mesh.triangles
  const triangleCount = tris.length / 3
  const vertexCount = p.length / 3
  if (triangleCount === 0) throw new ModelError({ reason: "the model has no triangles" })
  for (let i = 0; i < tris.length; i++) {
    if (tris[i]! >= vertexCount) throw new ModelError({ reason: `triangle ${Math.floor(i / 3) + 1} refers to vertex ${tris[i]! + 1}, of ${vertexCount}` })
  }
  // Reference point and bounding box over the vertices the triangles use.
  const ox = p[3 * tris[0]!]!, oy = p[3 * tris[0]! + 1]!, oz = p[3 * tris[0]! + 2]!
  let minX = Infinity, minY = Infinity, minZ = Infinity, maxX = -Infinity, maxY = -Infinity, maxZ = -Infinity
  let volume6 = 0
  let area2 = 0
  // Running sums of the areas: the D2 sampling picks triangles by area from them.
  const cumulativeArea = new Float64Array(triangleCount)
  for (let t = 0; t < triangleCount; t++) {
    const i0 = 3 * tris[3 * t]!, i1 = 3 * tris[3 * t + 1]!, i2 = 3 * tris[3 * t + 2]!
    const x0 = p[i0]!, y0 = p[i0 + 1]!, z0 = p[i0 + 2]!
    const x1 = p[i1]!, y1 = p[i1 + 1]!, z1 = p[i1 + 2]!
    const x2 = p[i2]!, y2 = p[i2 + 1]!, z2 = p[i2 + 2]!
    if (x0 < minX) minX = x0
    if (x0 > maxX) maxX = x0
    if (y0 < minY) minY = y0
    if (y0 > maxY) maxY = y0
    if (z0 < minZ) minZ = z0
    if (z0 > maxZ) maxZ = z0
    if (x1 < minX) minX = x1
    if (x1 > maxX) maxX = x1
    if (y1 < minY) minY = y1
    if (y1 > maxY) maxY = y1
    if (z1 < minZ) minZ = z1
    if (z1 > maxZ) maxZ = z1
    if (x2 < minX) minX = x2
    if (x2 > maxX) maxX = x2
    if (y2 < minY) minY = y2
    if (y2 > maxY) maxY = y2
    if (z2 < minZ) minZ = z2
    if (z2 > maxZ) maxZ = z2
    // Edges from vertex 0, and vertex 0 from the reference point.
    const ax = x1 - x0, ay = y1 - y0, az = z1 - z0
    const bx = x2 - x0, by = y2 - y0, bz = z2 - z0
    const cx = ay * bz - az * by, cy = az * bx - ax * bz, cz = ax * by - ay * bx
    area2 += Math.sqrt(cx * cx + cy * cy + cz * cz)
    cumulativeArea[t] = area2
    // (v0 - o) · ((v1 - o) × (v2 - o)) = (v0 - o) · ((v1 - v0) × (v2 - v0))
    volume6 += (x0 - ox) * cx + (y0 - oy) * cy + (z0 - oz) * cz
  }
  if (!Number.isFinite(volume6) || !Number.isFinite(area2) || !Number.isFinite(maxX - minX + maxY - minY + maxZ - minZ)) {
    throw new ModelError({ reason: "the coordinates are too large to measure" })
  }
  return {
    volume: Math.abs(volume6) / 6,
    surfaceArea: area2 / 2,
    boundingBox: { x: maxX - minX, y: maxY - minY, z: maxZ - minZ },
    triangleCount,
    watertight: isWatertight(vertexCount, tris),
    shapeDistribution: d2Distribution(p, tris, cumulativeArea)
  }
}

/** The geometry of a mesh with its manufacturability measurements, as the engine stores it with a part (docs/geometry.md); its unit is the caller's to add. */
export const analyseWithDfm = (mesh: Mesh): AnalysedGeometry => ({ ...analyse(mesh), dfm: measureDfm(mesh.positions, mesh.triangles) })

/**
 * Coordinates welded into shared vertices: equal coordinates (bit for bit,
 * -0 as 0) are one vertex. Open addressing over the coordinates' bits.
 */
export class VertexWelder {
  private readonly mask: number
  private readonly table: Int32Array
  private coordinates: Float64Array
  private readonly scratch = new Float64Array(3)
  private readonly scratchBits = new Int32Array(this.scratch.buffer)
  count = 0

  /** Room for at most `capacity` distinct vertices. */
  constructor(capacity: number) {
    let size = 16
    while (size < capacity * 2) size *= 2
    this.mask = size - 1
    this.table = new Int32Array(size).fill(-1)
    this.coordinates = new Float64Array(Math.max(capacity, 1) * 3)
  }

  /** The index of the vertex (x, y, z), added if new. */
  add(x: number, y: number, z: number): number {
    const s = this.scratch
    // x + 0 turns -0 into 0.
    s[0] = x + 0
    s[1] = y + 0
    s[2] = z + 0
    const b = this.scratchBits
    let h = Math.imul(b[0]! ^ b[1]!, 0x9e3779b1) ^ Math.imul(b[2]! ^ b[3]!, 0x85ebca77) ^ Math.imul(b[4]! ^ b[5]!, 0xc2b2ae3d)
    h ^= h >>> 15
    h = Math.imul(h, 0x2c1b3c6d)
    h = (h ^ (h >>> 16)) & this.mask
    const table = this.table
    const c = this.coordinates
    const sx = s[0]!, sy = s[1]!, sz = s[2]!
    for (;;) {
      const index = table[h]!
      if (index === -1) {
        const id = this.count++
        table[h] = id
        c[3 * id] = sx
        c[3 * id + 1] = sy
        c[3 * id + 2] = sz
        return id
      }
      if (c[3 * index] === sx && c[3 * index + 1] === sy && c[3 * index + 2] === sz) return index
      h = (h + 1) & this.mask
    }
  }

  /** The welded vertices. */
  positions(): Float64Array {
    return this.coordinates.subarray(0, this.count * 3)
  }
}

/** A mesh given as vertices and triangles, with equal vertices welded (their triangles re-pointed). */
export const weld = (positions: ArrayLike<number>, triangles: Uint32Array): Mesh => {
  const vertexCount = positions.length / 3
  const welder = new VertexWelder(vertexCount)
  const map = new Uint32Array(vertexCount)
  for (let v = 0; v < vertexCount; v++) map[v] = welder.add(positions[3 * v]!, positions[3 * v + 1]!, positions[3 * v + 2]!)
  const out = new Uint32Array(triangles.length)
  for (let i = 0; i < triangles.length; i++) out[i] = map[triangles[i]!]!
  return { positions: welder.positions(), triangles: out }
}

/** Numbers appended one by one into a typed array that doubles as it fills (no array of boxed numbers). */
export class GrowableFloats {
  data: Float64Array
  length = 0

  constructor(capacity = 48) {
    this.data = new Float64Array(Math.max(capacity, 4))
  }

  push(value: number): void {
    if (this.length === this.data.length) this.grow()
    this.data[this.length++] = value
  }

  private grow(): void {
    const next = new Float64Array(this.data.length * 2)
    next.set(this.data)
    this.data = next
  }

  /** The numbers pushed (a view, not a copy). */
  values(): Float64Array {
    return this.data.subarray(0, this.length)
  }
}

/** Vertex indices appended one by one, as GrowableFloats. */
export class GrowableIndices {
  data: Uint32Array
  length = 0

  constructor(capacity = 48) {
    this.data = new Uint32Array(Math.max(capacity, 4))
  }

  push(value: number): void {
    if (this.length === this.data.length) this.grow()
    this.data[this.length++] = value
  }

  private grow(): void {
    const next = new Uint32Array(this.data.length * 2)
    next.set(this.data)
    this.data = next
  }

  values(): Uint32Array {
    return this.data.subarray(0, this.length)
  }
}
