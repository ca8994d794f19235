/**
 * The mesh's topology, exactly, on its welded vertices (docs/geometry.md,
 * "Manufacturability"): every undirected edge with how many triangles use
 * it in each direction, where the edges that are not shared as a closed
 * surface shares them are, and the shells (sets of triangles joined through
 * shared vertices). A triangle with a repeated vertex has no area and no
 * side: it is left out of the edges (as the watertightness check leaves it
 * out) and counted as degenerate by measure.ts.
 *
 * Edges are grouped by their lower vertex (a counting sort, as the
 * watertightness check does) and sorted within each group, so the count is
 * about linear in the triangles (a fan's hub costs n log n) and needs no
 * hash of edges; shells are a union-find over the vertices.
 */
import { type Region, RegionBuilder } from "./region.ts"

export interface Topology {
  /** Edges used by one triangle only: the holes' rims. */
  readonly openEdges: number
  /** Edges used by more than two triangles. */
  readonly nonManifoldEdges: number
  /** Edges used by two triangles in the same direction: one of them faces the wrong way. */
  readonly inconsistentEdges: number
  /** Shells: triangles connected through shared vertices. */
  readonly shellCount: number
  /** The shell of each triangle (0 … shellCount − 1; degenerate triangles too). */
  readonly shellOf: Uint32Array
  /** Where the open, non-manifold and inconsistent edges are: their ends' box, and a few of their midpoints. */
  readonly openRegion: Region | undefined
  readonly nonManifoldRegion: Region | undefined
  readonly inconsistentRegion: Region | undefined
}

/** Whether a triangle repeats a vertex (no area, no side). */
const repeats = (triangles: Uint32Array, t: number) => {
  const a = triangles[3 * t]!, b = triangles[3 * t + 1]!, c = triangles[3 * t + 2]!
  return a === b || b === c || a === c
}

const find = (parent: Int32Array, v: number): number => {
  let root = v
  while (parent[root]! !== root) root = parent[root]!
  // Path halving keeps later finds short.
  while (parent[v]! !== root) {
    const next = parent[v]!
    parent[v] = root
    v = next
  }
  return root
}

export const topologyOf = (positions: Float64Array, triangles: Uint32Array): Topology => {
  const vertexCount = positions.length / 3
  const triangleCount = triangles.length / 3
  // How many edges each vertex is the lower end of.
  const start = new Uint32Array(vertexCount + 1)
  for (let t = 0; t < triangleCount; t++) {
    if (repeats(triangles, t)) continue
    for (let k = 0; k < 3; k++) {
      const a = triangles[3 * t + k]!, b = triangles[3 * t + ((k + 1) % 3)]!
      start[Math.min(a, b) + 1]!++
    }
  }
  for (let v = 0; v < vertexCount; v++) start[v + 1]! += start[v]!
  const fill = start.slice(0, vertexCount)
  // other vertex × 2 + 1 when the edge runs lower → higher: exact in a double (vertex ids < 2²⁵).
  const keys = new Float64Array(start[vertexCount]!)
  for (let t = 0; t < triangleCount; t++) {
    if (repeats(triangles, t)) continue
    for (let k = 0; k < 3; k++) {
      const a = triangles[3 * t + k]!, b = triangles[3 * t + ((k + 1) % 3)]!
      keys[fill[Math.min(a, b)]!++] = Math.max(a, b) * 2 + (a < b ? 1 : 0)
    }
  }
  let openEdges = 0, nonManifoldEdges = 0, inconsistentEdges = 0
  const open = new RegionBuilder(), nonManifold = new RegionBuilder(), inconsistent = new RegionBuilder()
  /** The edge a–b in a region: both ends in its box, its midpoint among its points. */
  const locate = (region: RegionBuilder, a: number, b: number) => {
    region.include(positions[3 * a]!, positions[3 * a + 1]!, positions[3 * a + 2]!)
    region.include(positions[3 * b]!, positions[3 * b + 1]!, positions[3 * b + 2]!)
    region.point(
      (positions[3 * a]! + positions[3 * b]!) / 2,
      (positions[3 * a + 1]! + positions[3 * b + 1]!) / 2,
      (positions[3 * a + 2]! + positions[3 * b + 2]!) / 2
    )
  }
  for (let a = 0; a < vertexCount; a++) {
    const begin = start[a]!, end = start[a + 1]!
    // Sorted per group, so an edge's uses are adjacent: insertion sort for the usual handful, the typed sort for a fan's hub.
    if (end - begin > 16) keys.subarray(begin, end).sort()
    else {
      for (let i = begin + 1; i < end; i++) {
        const key = keys[i]!
        let j = i - 1
        while (j >= begin && keys[j]! > key) {
          keys[j + 1] = keys[j]!
          j--
        }
        keys[j + 1] = key
      }
    }
    let i = begin
    while (i < end) {
      const b = Math.floor(keys[i]! / 2)
      let forwards = 0, backwards = 0
      while (i < end && Math.floor(keys[i]! / 2) === b) {
        if (keys[i]! % 2 === 1) forwards++
        else backwards++
        i++
      }
      const uses = forwards + backwards
      if (uses === 1) {
        openEdges++
        locate(open, a, b)
      } else if (uses > 2) {
        nonManifoldEdges++
        locate(nonManifold, a, b)
      } else if (forwards !== 1) {
        inconsistentEdges++
        locate(inconsistent, a, b)
      }
    }
  }

  const parent = new Int32Array(vertexCount)
  for (let v = 0; v < vertexCount; v++) parent[v] = v
  for (let t = 0; t < triangleCount; t++) {
    const a = find(parent, triangles[3 * t]!)
    const b = find(parent, triangles[3 * t + 1]!)
    const c = find(parent, triangles[3 * t + 2]!)
    if (b !== a) parent[b] = a
    if (c !== a && c !== b) parent[c] = a
  }
  const shellOfRoot = new Int32Array(vertexCount).fill(-1)
  const shellOf = new Uint32Array(triangleCount)
  let shellCount = 0
  for (let t = 0; t < triangleCount; t++) {
    const root = find(parent, triangles[3 * t]!)
    if (shellOfRoot[root] === -1) shellOfRoot[root] = shellCount++
    shellOf[t] = shellOfRoot[root]!
  }
  return {
    openEdges,
    nonManifoldEdges,
    inconsistentEdges,
    shellCount,
    shellOf,
    openRegion: open.region(),
    nonManifoldRegion: nonManifold.region(),
    inconsistentRegion: inconsistent.region()
  }
}
