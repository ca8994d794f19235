/**
 * Shapes with known manufacturability answers, for test/engine/dfm.test.ts
 * and the HTTP tests: built from src/engine/geometry/writers.ts's box, merged,
 * turned inside out (a cavity), extruded (a T) or opened (a box without its lid).
 */
import type { Mesh } from "../../src/engine/geometry/mesh.ts"
import { box } from "../../src/engine/geometry/writers.ts"

/** Several meshes as one (their vertices renumbered). */
export const merge = (...meshes: ReadonlyArray<Mesh>): Mesh => {
  const positions: Array<number> = []
  const triangles: Array<number> = []
  for (const mesh of meshes) {
    const offset = positions.length / 3
    positions.push(...mesh.positions)
    triangles.push(...Array.from(mesh.triangles, (index) => index + offset))
  }
  return { positions: Float64Array.from(positions), triangles: Uint32Array.from(triangles) }
}

/** The mesh with every triangle facing the other way: a void's surface, its normals pointing into the void. */
export const inverted = (mesh: Mesh): Mesh => {
  const triangles = Uint32Array.from(mesh.triangles)
  for (let t = 0; t < triangles.length; t += 3) [triangles[t + 1], triangles[t + 2]] = [triangles[t + 2]!, triangles[t + 1]!]
  return { positions: mesh.positions, triangles }
}

/** A 20 mm cube with a centred 18 mm void: walls of 1 mm all round. */
export const hollowBox = () => merge(box(20, 20, 20), inverted(box(18, 18, 18, 1, 1, 1)))

/** A 20 mm cube with a closed 4 mm cubic void in its middle (64 mm³). */
export const cubeWithCavity = () => merge(box(20, 20, 20), inverted(box(4, 4, 4, 8, 8, 8)))

/** A 10 mm cube without its top face: four open edges. */
export const openBox = (): Mesh => {
  const cube = box(10, 10, 10)
  // Triangles 2 and 3 are the top quad (writers.ts: bottom, top, then the sides).
  return { positions: cube.positions, triangles: Uint32Array.from([...cube.triangles.subarray(0, 6), ...cube.triangles.subarray(12)]) }
}

/**
 * A T, one shell: a 10 × 10 × 20 mm stem under a 30 × 10 × 5 mm bar, the
 * profile in x and z extruded 10 mm along y. The bar's underside either side
 * of the stem (2 × 10 × 10 = 200 mm²) faces straight down: a 90° overhang.
 */
export const tee = (): Mesh => {
  const profile = [[10, 0], [20, 0], [20, 20], [30, 20], [30, 25], [0, 25], [0, 20], [10, 20]] as const
  const caps = [[0, 1, 2], [0, 2, 7], [7, 2, 4], [2, 3, 4], [7, 4, 5], [6, 7, 5]] as const
  const n = profile.length
  const positions = [...profile.flatMap(([x, z]) => [x, 0, z]), ...profile.flatMap(([x, z]) => [x, 10, z])]
  const triangles: Array<number> = []
  // The profile runs counter-clockwise in (x, z): at y = 0 that faces −y; the back cap is reversed.
  for (const [a, b, c] of caps) triangles.push(a, b, c, n + a, n + c, n + b)
  for (let i = 0; i < n; i++) {
    const j = (i + 1) % n
    triangles.push(i, n + i, n + j, i, n + j, j)
  }
  return { positions: Float64Array.from(positions), triangles: Uint32Array.from(triangles) }
}
