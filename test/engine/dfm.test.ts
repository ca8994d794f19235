/**
 * Manufacturability on shapes whose answers are known: written as real
 * files (writers.ts), analysed as the engine analyses them (model.ts, the
 * same code the analysis threads run), then judged per technology; each
 * check that warns or blocks located (a box and a few points, in the
 * part's coordinates) and saying what to change.
 */
import { assert, describe, it } from "@effect/vitest"
import type { DfmMeasurements } from "../../src/engine/geometry/dfm/measure.ts"
import { fitsIn, type MachineVolume, manufacturabilityVerdict } from "../../src/engine/geometry/dfm/verdict.ts"
import type { Mesh } from "../../src/engine/geometry/mesh.ts"
import { analyseModelSync } from "../../src/engine/geometry/model.ts"
import { binaryStl, box, obj, withDegenerateTriangles } from "../../src/engine/geometry/writers.ts"
import { MANUFACTURABILITY_LIMITS } from "../../src/engine/referenceData.ts"
import { cubeWithCavity, hollowBox, merge, openBox, tee } from "./dfmShapes.ts"

const analysed = (mesh: Mesh) => analyseModelSync(binaryStl(mesh), "part.stl")
const measured = (mesh: Mesh): DfmMeasurements => analysed(mesh).dfm!
const verdict = (mesh: Mesh, technologyId: string, machines: ReadonlyArray<MachineVolume> = []) =>
  manufacturabilityVerdict(technologyId, analysed(mesh), MANUFACTURABILITY_LIMITS[technologyId], machines)
const check = (mesh: Mesh, technologyId: string, id: string, machines: ReadonlyArray<MachineVolume> = []) => {
  const found = verdict(mesh, technologyId, machines).checks.find((candidate) => candidate.id === id)
  assert.isDefined(found, id)
  return found!
}
const HEALTHY = { openEdges: 0, nonManifoldEdges: 0, inconsistentEdges: 0 }

describe("manufacturability measurements", () => {
  it("a 10 mm cube: closed, one shell, no overhang, 10 mm walls, nothing unreachable", () => {
    const m = measured(box(10, 10, 10))
    assert.deepInclude(m, { ...HEALTHY, shells: 1, cavities: 0, overhangArea: 0, undercutArea: 0, samples: 2048 })
    assert.deepStrictEqual(m.wallThickness, { min: 10, p5: 10, measured: 2048 })
  })

  it("a hollow box with a 1 mm wall: two shells, one cavity of 18³ mm³, walls of 1 mm, the void's ceiling an overhang", () => {
    const m = measured(hollowBox())
    assert.deepInclude(m, { ...HEALTHY, shells: 2, cavities: 1, cavityVolume: 18 ** 3, overhangArea: 18 * 18 })
    assert.strictEqual(m.wallThickness?.min, 1)
    // The void's surface (6 × 18² of 6 × 20² + 6 × 18²) is unreachable: estimated from 2048 points.
    assert.approximately(m.undercutArea, 6 * 18 * 18, 0.1 * 6 * 18 * 18)
  })

  it("a thin plate of 0.3 mm measures 0.3 mm", () => {
    assert.strictEqual(measured(box(20, 20, 0.3)).wallThickness?.min, 0.3)
  })

  it("a cube with a closed internal cavity: one cavity of 64 mm³", () => {
    assert.deepInclude(measured(cubeWithCavity()), { ...HEALTHY, shells: 2, cavities: 1, cavityVolume: 64 })
  })

  it("a T: one closed shell, 200 mm² overhanging at 90°, 5 mm thinnest wall (the bar), reachable from the axes", () => {
    const m = measured(tee())
    assert.deepInclude(m, { ...HEALTHY, shells: 1, cavities: 0, overhangArea: 200, undercutArea: 0 })
    assert.strictEqual(m.wallThickness?.min, 5)
  })

  it("an open box: four open edges, and not watertight", () => {
    const geometry = analysed(openBox())
    assert.isFalse(geometry.watertight)
    assert.deepInclude(geometry.dfm!, { openEdges: 4, nonManifoldEdges: 0, inconsistentEdges: 0, shells: 1 })
  })

  it("a triangle facing the wrong way, and an edge of three triangles, are counted", () => {
    const cube = box(10, 10, 10)
    const flipped = Uint32Array.from(cube.triangles)
    ;[flipped[1], flipped[2]] = [flipped[2]!, flipped[1]!]
    assert.deepInclude(measured({ positions: cube.positions, triangles: flipped }), { openEdges: 0, inconsistentEdges: 3 })
    // A fin on the top edge from (0,0,10) to (10,0,10): that edge then has three triangles.
    const positions = Float64Array.from([...cube.positions, 5, -5, 15])
    const fin = Uint32Array.from([...cube.triangles, 4, 5, 8])
    assert.deepInclude(measured({ positions, triangles: fin }), { nonManifoldEdges: 1 })
  })

  it("the same mesh in another format measures the same", () => {
    assert.deepStrictEqual(analyseModelSync(new TextEncoder().encode(obj(tee())), "tee.obj").dfm, measured(tee()))
  })
})

describe("manufacturability verdicts per technology", () => {
  it("a cube is ok for every technology", () => {
    for (const technologyId of Object.keys(MANUFACTURABILITY_LIMITS)) {
      assert.strictEqual(verdict(box(10, 10, 10), technologyId).status, "ok", technologyId)
    }
  })

  it("a 0.3 mm plate: blocked for FDM (below 0.4 mm), a warning for SLA (below 0.5 mm)", () => {
    const plate = box(20, 20, 0.3)
    assert.deepInclude(check(plate, "fdm", "wall-thickness"), { status: "blocked", value: 0.3, limit: 0.4, unit: "mm" })
    assert.strictEqual(verdict(plate, "fdm").status, "blocked")
    assert.deepInclude(check(plate, "sla", "wall-thickness"), { status: "warning", value: 0.3, limit: 0.5 })
  })

  it("a 1 mm hollow box: walls fine for FDM; a trapped-powder warning for SLS and MJF; unreachable surface for CNC", () => {
    assert.deepInclude(check(hollowBox(), "fdm", "wall-thickness"), { status: "ok", value: 1 })
    assert.deepInclude(check(hollowBox(), "fdm", "mesh-shells"), { status: "ok", value: 2 })
    for (const technologyId of ["sls", "mjf"]) {
      assert.deepInclude(check(hollowBox(), technologyId, "enclosed-cavities"), { status: "warning", value: 1 }, technologyId)
    }
    assert.strictEqual(check(hollowBox(), "cnc-milling", "cnc-undercuts").status, "warning")
    assert.deepInclude(check(box(10, 10, 10), "cnc-milling", "cnc-stock-size"), { status: "ok", value: 14 })
  })

  it("a cube with an internal cavity: SLS and MJF warn of it; FDM has no such check", () => {
    assert.include(check(cubeWithCavity(), "sls", "enclosed-cavities").message, "64 mm³")
    assert.isUndefined(verdict(cubeWithCavity(), "fdm").checks.find((c) => c.id === "enclosed-cavities"))
  })

  it("a T needs support for FDM and SLA (200 mm²); SLS has no overhang check", () => {
    assert.deepInclude(check(tee(), "fdm", "overhang"), { status: "warning", value: 200, limit: 0, unit: "mm²" })
    assert.deepInclude(check(tee(), "sla", "overhang"), { status: "warning", value: 200 })
    assert.isUndefined(verdict(tee(), "sls").checks.find((c) => c.id === "overhang"))
    assert.strictEqual(verdict(tee(), "cnc-milling").status, "ok")
  })

  it("an open box warns of its open edges", () => {
    assert.deepInclude(check(openBox(), "fdm", "mesh-open-edges"), { status: "warning", value: 4 })
  })

  it("a 400 mm bar: no FDM machine holds it (blocked), the machines that do are named", () => {
    const bar = box(400, 20, 20)
    assert.deepInclude(check(bar, "fdm", "build-volume"), { status: "blocked", value: 400, limit: 250 })
    const machines: ReadonlyArray<MachineVolume> = [
      { id: "m1", name: "Prusa", buildVolume: { x: 250, y: 210, z: 220 } },
      { id: "m2", name: "Long bed", buildVolume: { x: 30, y: 450, z: 30 } },
      { id: "m3", name: "Unnamed volume" }
    ]
    const fit = check(bar, "fdm", "build-volume", machines)
    assert.deepInclude(fit, { status: "ok", machineIds: ["m2"] })
    assert.include(fit.message, "fits 1 of 3 fdm machines: Long bed")
    const none = check(bar, "fdm", "build-volume", [machines[0]!])
    assert.strictEqual(none.status, "blocked")
    assert.include(none.message, "Prusa: 250 × 210 × 220 mm")
    assert.strictEqual(check(bar, "sls", "build-volume").status, "ok")
  })

  it("fits in any axis-aligned orientation", () => {
    assert.isTrue(fitsIn({ x: 300, y: 10, z: 10 }, { x: 20, y: 20, z: 310 }))
    assert.isFalse(fitsIn({ x: 300, y: 30, z: 10 }, { x: 20, y: 20, z: 310 }))
  })

  it("geometry without measurements (analysed before them) gets the build volume and the closed-mesh checks", () => {
    const v = manufacturabilityVerdict("fdm", { boundingBox: { x: 400, y: 1, z: 1 }, watertight: false }, MANUFACTURABILITY_LIMITS.fdm, [])
    assert.deepStrictEqual(v.checks.map((c) => [c.id, c.status]), [["mesh-open-edges", "warning"], ["build-volume", "blocked"]])
    assert.strictEqual(v.status, "blocked")
  })
})

const at = (x: number, y: number, z: number) => ({ x, y, z })
const inside = (point: { x: number; y: number; z: number }, min: { x: number; y: number; z: number }, max: { x: number; y: number; z: number }) =>
  point.x >= min.x && point.x <= max.x && point.y >= min.y && point.y <= max.y && point.z >= min.z && point.z <= max.z

describe("located findings: where, in the part's coordinates, and what to change", () => {
  it("a check that is ok says neither where nor what to change", () => {
    for (const check of verdict(box(10, 10, 10), "fdm").checks) {
      assert.isUndefined(check.location, check.id)
      assert.isUndefined(check.suggestion, check.id)
    }
  })

  it("degenerate triangles: their own warning with the count, where they are; the edge checks stay ok", () => {
    const cube = withDegenerateTriangles(box(10, 10, 10, 5, 5, 5))
    const degenerate = check(cube, "fdm", "mesh-degenerate-triangles")
    assert.deepInclude(degenerate, { status: "warning", value: 12, limit: 0, unit: "triangles" })
    assert.include(degenerate.message, "12 triangles have no area")
    assert.deepStrictEqual(degenerate.location!.boundingBox, { min: at(5, 5, 5), max: at(15, 15, 15) })
    assert.lengthOf(degenerate.location!.points, 5)
    assert.strictEqual(degenerate.suggestion, "Remove the zero-area triangles (merge their vertices) when exporting or repairing the mesh.")
    for (const id of ["mesh-open-edges", "mesh-non-manifold-edges", "mesh-inconsistent-normals"]) assert.strictEqual(check(cube, "fdm", id).status, "ok", id)
    assert.strictEqual(check(box(10, 10, 10), "fdm", "mesh-degenerate-triangles").message, "no degenerate triangles")
  })

  it("open, non-manifold and inconsistent edges: the box of the edges, their midpoints", () => {
    const open = check(openBox(), "fdm", "mesh-open-edges")
    assert.deepStrictEqual(open.location!.boundingBox, { min: at(0, 0, 10), max: at(10, 10, 10) })
    assert.sameDeepMembers([...open.location!.points], [at(5, 0, 10), at(10, 5, 10), at(5, 10, 10), at(0, 5, 10)])
    assert.include(open.suggestion!, "watertight")
    const cube = box(10, 10, 10)
    const fin = { positions: Float64Array.from([...cube.positions, 5, -5, 15]), triangles: Uint32Array.from([...cube.triangles, 4, 5, 8]) }
    const nonManifold = check(fin, "fdm", "mesh-non-manifold-edges")
    assert.deepStrictEqual(nonManifold.location, { boundingBox: { min: at(0, 0, 10), max: at(10, 0, 10) }, points: [at(5, 0, 10)] })
    const flipped = Uint32Array.from(cube.triangles)
    ;[flipped[1], flipped[2]] = [flipped[2]!, flipped[1]!]
    // Triangle 0 is (0, 3, 2) of the bottom face (z = 0): its three edges.
    const inconsistent = check({ positions: cube.positions, triangles: flipped }, "fdm", "mesh-inconsistent-normals")
    assert.deepStrictEqual(inconsistent.location!.boundingBox, { min: at(0, 0, 0), max: at(10, 10, 0) })
    assert.include(inconsistent.suggestion!, "Flip the triangles")
  })

  it("a second body: the box of the smaller one, a point on it", () => {
    const shells = check(merge(box(10, 10, 10), box(5, 5, 5, 20, 0, 0)), "fdm", "mesh-shells")
    assert.strictEqual(shells.status, "warning")
    assert.deepStrictEqual(shells.location!.boundingBox, { min: at(20, 0, 0), max: at(25, 5, 5) })
    assert.lengthOf(shells.location!.points, 1)
    assert.isTrue(inside(shells.location!.points[0]!, at(20, 0, 0), at(25, 5, 5)))
  })

  it("a 400 mm bar: the whole part's box, and to scale it or split it to the largest build volume", () => {
    const fit = check(box(400, 20, 20, -200, 0, 0), "fdm", "build-volume")
    assert.deepStrictEqual(fit.location, { boundingBox: { min: at(-200, 0, 0), max: at(200, 20, 20) }, points: [] })
    assert.strictEqual(
      fit.suggestion,
      "Scale the part down or split it into pieces that fit 250 × 210 × 220 mm in some orientation, or add a fdm machine whose build volume holds 400 × 20 × 20 mm."
    )
  })

  it("a 0.3 mm plate: the thinnest sampled walls, on the plate, and to thicken it to the technology's warning limit", () => {
    const wall = check(box(20, 20, 0.3), "fdm", "wall-thickness")
    assert.strictEqual(wall.status, "blocked")
    assert.strictEqual(wall.suggestion, "Thicken the wall to 0.8 mm at least.")
    const { boundingBox, points } = wall.location!
    assert.lengthOf(points, 5)
    for (const point of [...points, boundingBox.min, boundingBox.max]) assert.isTrue(inside(point, at(0, 0, 0), at(20, 20, 0.3)), JSON.stringify(point))
    assert.strictEqual(check(box(20, 20, 0.3), "sla", "wall-thickness").suggestion, "Thicken the wall to 0.5 mm at least.")
    // Walls of 1 mm are not below CNC's 1 mm: ok, and so without a location.
    assert.isUndefined(check(hollowBox(), "cnc-milling", "wall-thickness").location)
  })

  it("overhang: the box of the faces that need support, the largest first; cavities and undercuts: the void's box", () => {
    const overhang = check(tee(), "fdm", "overhang")
    assert.deepStrictEqual(overhang.location!.boundingBox, { min: at(0, 0, 20), max: at(30, 10, 20) })
    for (const point of overhang.location!.points) assert.strictEqual(point.z, 20)
    assert.strictEqual(overhang.suggestion, "Add supports under these faces, or rotate the part so that they face up or rest on the build plate.")
    const cavity = check(hollowBox(), "sls", "enclosed-cavities")
    assert.deepStrictEqual(cavity.location!.boundingBox, { min: at(1, 1, 1), max: at(19, 19, 19) })
    assert.lengthOf(cavity.location!.points, 1)
    assert.include(cavity.suggestion!, "escape holes")
    const undercut = check(hollowBox(), "cnc-milling", "cnc-undercuts")
    const { boundingBox, points } = undercut.location!
    assert.lengthOf(points, 5)
    for (const point of [...points, boundingBox.min, boundingBox.max]) assert.isTrue(inside(point, at(1, 1, 1), at(19, 19, 19)), JSON.stringify(point))
  })
})
