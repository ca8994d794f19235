/**
 * The D2 shape distribution and the similarity score on analytic shapes:
 * the distribution is deterministic, the same for a moved, scaled or turned
 * copy and nearly the same for another triangulation, and tells shapes
 * apart; copies of a cube (moved, scaled, turned, re-triangulated) score
 * above every different shape of about the same size, the scaled copy below
 * 1 (size counts a little).
 */
import { assert, describe, it } from "@effect/vitest"
import { analyse, type Mesh } from "../../src/engine/geometry/mesh.ts"
import { analyseModelSync } from "../../src/engine/geometry/model.ts"
import { d2Distance, d2Distribution, DISTRIBUTION_BINS, distributionCdf, SAMPLE_PAIRS } from "../../src/engine/geometry/shapeDistribution.ts"
import { binaryStl, box, obj, sphere } from "../../src/engine/geometry/writers.ts"
import { AppShapes } from "../../src/engine/orders/shapeIndex.ts"
import { type ShapeGeometry, shapeSignature, similarityScore } from "../../src/engine/orders/shapeSignature.ts"

/** A closed cylinder of radius r and height h around the z axis. */
const cylinder = (r: number, h: number, segments = 64): Mesh => {
  const positions = [0, 0, 0, 0, 0, h]
  for (let s = 0; s < segments; s++) {
    const angle = (2 * Math.PI * s) / segments
    positions.push(r * Math.cos(angle), r * Math.sin(angle), 0, r * Math.cos(angle), r * Math.sin(angle), h)
  }
  const bottom = (s: number) => 2 + 2 * (s % segments)
  const top = (s: number) => 3 + 2 * (s % segments)
  const triangles: Array<number> = []
  for (let s = 0; s < segments; s++) {
    triangles.push(0, bottom(s + 1), bottom(s), 1, top(s), top(s + 1))
    triangles.push(bottom(s), bottom(s + 1), top(s + 1), bottom(s), top(s + 1), top(s))
  }
  return { positions: Float64Array.from(positions), triangles: Uint32Array.from(triangles) }
}

/** The mesh with every vertex mapped by `f`. */
const mapped = (mesh: Mesh, f: (x: number, y: number, z: number) => readonly [number, number, number]): Mesh => {
  const positions = new Float64Array(mesh.positions.length)
  for (let i = 0; i < positions.length; i += 3) positions.set(f(mesh.positions[i]!, mesh.positions[i + 1]!, mesh.positions[i + 2]!), i)
  return { positions, triangles: mesh.triangles }
}

/** Turned by `a` degrees about z, then `b` about x. */
const turned = (mesh: Mesh, a: number, b: number) => {
  const [ca, sa, cb, sb] = [Math.cos(a * Math.PI / 180), Math.sin(a * Math.PI / 180), Math.cos(b * Math.PI / 180), Math.sin(b * Math.PI / 180)]
  return mapped(mesh, (x, y, z) => {
    const [x1, y1] = [ca * x - sa * y, sa * x + ca * y]
    return [x1, cb * y1 - sb * z, sb * y1 + cb * z]
  })
}

/** Every triangle split in four at its edges' midpoints: the same surface, other triangles. */
const subdivided = (mesh: Mesh): Mesh => {
  const positions = Array.from(mesh.positions)
  const midpoint = (a: number, b: number) => {
    positions.push(...[0, 1, 2].map((k) => (positions[3 * a + k]! + positions[3 * b + k]!) / 2))
    return positions.length / 3 - 1
  }
  const triangles: Array<number> = []
  for (let i = 0; i < mesh.triangles.length; i += 3) {
    const [a, b, c] = [mesh.triangles[i]!, mesh.triangles[i + 1]!, mesh.triangles[i + 2]!]
    const [ab, bc, ca] = [midpoint(a, b), midpoint(b, c), midpoint(c, a)]
    triangles.push(a, ab, ca, ab, b, bc, ca, bc, c, ab, bc, ca)
  }
  return { positions: Float64Array.from(positions), triangles: Uint32Array.from(triangles) }
}

const cdfOf = (mesh: Mesh) => distributionCdf(d2Distribution(mesh.positions, mesh.triangles))!
const emd = (a: Mesh, b: Mesh) => d2Distance(cdfOf(a), cdfOf(b))

const cube = box(10, 10, 10)

describe("D2 shape distribution", () => {
  it("is deterministic, stored by the analysis, and a distribution over the bins", () => {
    const first = analyseModelSync(binaryStl(cube), "cube.stl").shapeDistribution
    const again = analyseModelSync(binaryStl(cube), "cube.stl").shapeDistribution
    assert.deepStrictEqual(again, first)
    assert.deepStrictEqual(analyse(cube).shapeDistribution, d2Distribution(cube.positions, cube.triangles))
    assert.strictEqual(first.length, DISTRIBUTION_BINS)
    assert.approximately(first.reduce((sum, value) => sum + value, 0), 1, 1e-3)
    for (const value of first) assert.isTrue(value >= 0 && value <= 1)
    // A cube's points are rarely much nearer or farther than the mean: the mass is in the middle bins.
    assert.isBelow(first[0]! + first[DISTRIBUTION_BINS - 1]!, 0.05)
    // The same mesh from another format gives the same signature.
    assert.deepStrictEqual(analyseModelSync(new TextEncoder().encode(obj(cube)), "cube.obj").shapeDistribution, first)
  })

  it("does not change when the part is moved, scaled or turned", () => {
    const reference = d2Distribution(cube.positions, cube.triangles)
    for (
      const [what, copy] of [
        ["moved", box(10, 10, 10, 1234.5, -87.25, 3)],
        ["scaled ×3.7", mapped(cube, (x, y, z) => [3.7 * x, 3.7 * y, 3.7 * z])],
        ["turned", turned(cube, 30, 40)]
      ] as const
    ) {
      const distribution = d2Distribution(copy.positions, copy.triangles)
      const largest = Math.max(...distribution.map((value, bin) => Math.abs(value - reference[bin]!)))
      assert.isAtMost(largest, 2 / SAMPLE_PAIRS, `${what}: a bin differs by ${largest}`)
    }
  })

  it("is nearly the same for another triangulation of the shape, and tells shapes apart", () => {
    const noise = Math.max(emd(cube, subdivided(subdivided(cube))), emd(sphere(5, 64, 32), sphere(10, 48, 24)))
    assert.isBelow(noise, 0.015)
    for (
      const [what, other] of [
        ["2×3×4 box", box(8, 12, 16)],
        ["plate", box(40, 40, 2)],
        ["rod", box(60, 4, 4)],
        ["sphere", sphere(6, 64, 32)]
      ] as const
    ) assert.isAbove(emd(cube, other), noise, what)
    assert.isAbove(emd(cube, box(60, 4, 4)), 0.2)
  })
})

describe("similarity score", () => {
  const geometryOf = (mesh: Mesh): ShapeGeometry => analyse(mesh)
  const reference = geometryOf(cube)
  const score = (mesh: Mesh) => similarityScore(reference, geometryOf(mesh))

  it("ranks moved, scaled, turned and re-triangulated copies above every different shape of about the same size", () => {
    const copies = {
      moved: box(10, 10, 10, 500, 20, -30),
      "scaled ×2": box(20, 20, 20),
      "scaled ×0.5": box(5, 5, 5),
      turned: turned(cube, 30, 40),
      "re-triangulated": subdivided(subdivided(cube))
    }
    const others = {
      "2×3×4 box": box(8, 12, 16),
      cylinder: cylinder(5.6, 11.2),
      sphere: sphere(6.2, 64, 32),
      plate: box(20, 20, 2.5),
      rod: box(40, 5, 5)
    }
    const worstCopy = Math.min(...Object.values(copies).map(score))
    const bestOther = Math.max(...Object.values(others).map(score))
    for (const [what, mesh] of Object.entries(copies)) assert.isAbove(score(mesh), bestOther, what)
    for (const [what, mesh] of Object.entries(others)) assert.isBelow(score(mesh), worstCopy, what)
  })

  it("is 1 for the same shape at the same size, below 1 at another size, and falls with the size ratio", () => {
    assert.strictEqual(score(box(10, 10, 10, -3, 4, 5)), 1)
    const twice = score(box(20, 20, 20))
    const tenTimes = score(box(100, 100, 100))
    assert.isBelow(twice, 1)
    assert.isAbove(twice, 0.8)
    assert.isBelow(tenTimes, twice)
    // Scores are symmetric and in (0, 1].
    assert.strictEqual(similarityScore(geometryOf(box(20, 20, 20)), reference), twice)
    assert.isAbove(score(box(1000, 1, 1)), 0)
  })

  it("parts analysed before the distribution existed are compared on their measures", () => {
    const { shapeDistribution: _, ...measures } = analyse(box(40, 20, 10))
    const near = { volume: 42 * 21 * 10, surfaceArea: 2 * (42 * 21 + 21 * 10 + 42 * 10), boundingBox: { x: 42, y: 21, z: 10 } }
    const far = { volume: 400 * 100, surfaceArea: 2 * (4000 + 100 + 4000), boundingBox: { x: 400, y: 10, z: 10 } }
    assert.isAbove(similarityScore(measures, near), similarityScore(measures, far))
    assert.isAbove(similarityScore(geometryOf(box(40, 20, 10)), near), similarityScore(geometryOf(box(40, 20, 10)), far))
  })
})

describe("the shape index's ranking", () => {
  it("equals a full sort by score, then id, after inserts, updates and removals", () => {
    // 40 base shapes at a few sizes: the list of the best fills early and most parts are dropped on
    // their features alone; repeated geometries make equal scores.
    let state = 7
    const random = () => (state = (state * 1103515245 + 12345) % 2147483648) / 2147483648
    const bases = Array.from({ length: 40 }, (_, i) => analyse(i % 4 === 0 ? sphere(1, 16, 8) : box(1 + 9 * random(), 1 + 9 * random(), 1 + 9 * random())))
    const sized = (base: number, s: number) => {
      const g = bases[base]!
      return {
        ...g,
        volume: g.volume * s ** 3,
        surfaceArea: g.surfaceArea * s ** 2,
        boundingBox: { x: g.boundingBox.x * s, y: g.boundingBox.y * s, z: g.boundingBox.z * s }
      }
    }
    const shapes = new AppShapes()
    const stored = new Map<string, ShapeGeometry>()
    for (let i = 0; i < 3000; i++) {
      const id = `part-${String(Math.floor(random() * 2500)).padStart(4, "0")}`
      // Six sizes only: 240 distinct geometries among about 2,000 parts.
      const geometry = sized(Math.floor(random() * bases.length), Math.exp(Math.floor(6 * random()) / 2))
      stored.set(id, geometry)
      shapes.upsert(id, geometry)
      if (random() < 0.1) {
        const gone = [...stored.keys()][Math.floor(random() * stored.size)]!
        stored.delete(gone)
        shapes.remove(gone)
      }
    }
    assert.strictEqual(shapes.size, stored.size)
    for (const [queryId, limit] of [["part-0001", 10], ["part-0500", 1], ["part-2000", 100]] as const) {
      const query = stored.get(queryId) ?? sized(1, 1)
      const expected = [...stored.entries()]
        .filter(([id]) => id !== queryId)
        .map(([id, geometry]) => ({ ticketModelId: id, score: similarityScore(query, geometry) }))
        .sort((a, b) => b.score - a.score || (a.ticketModelId < b.ticketModelId ? -1 : 1))
        .slice(0, limit)
      assert.deepStrictEqual(shapes.rank(shapeSignature(query), queryId, limit), expected)
    }
  })
})
