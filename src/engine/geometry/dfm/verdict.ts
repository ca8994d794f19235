/**
 * A part's manufacturability for its technology (docs/geometry.md,
 * "Manufacturability"): the stored measurements (measure.ts) held to the
 * technology's limits (MANUFACTURABILITY_LIMITS, src/engine/referenceData.ts)
 * and to the build volumes of the app's machines. Pure and cheap: no mesh,
 * no ray; the part's writes and the quote call it.
 *
 * A check that warns or blocks says where (`location`: the box and a few
 * points of what it concerns, in the part's coordinates, from the stored
 * regions) and what to change (`suggestion`, one sentence), when the
 * measurements located it (geometry measured before they did has neither).
 */
import type { ManufacturabilityLimits } from "../../referenceData.ts"
import type { DfmMeasurements, RegionKind } from "./measure.ts"
import { MAX_POINTS, type Point, type Region } from "./region.ts"

export type CheckStatus = "ok" | "warning" | "blocked"

type Size = { readonly x: number; readonly y: number; readonly z: number }

/** Where a finding is, in the part's coordinates (mm). */
export interface Location {
  readonly boundingBox: { readonly min: Size; readonly max: Size }
  readonly points: ReadonlyArray<Size>
}

export interface Check {
  readonly id: string
  readonly status: CheckStatus
  readonly value: number | null
  readonly limit: number | null
  readonly unit: string
  readonly message: string
  readonly machineIds?: ReadonlyArray<string>
  readonly location?: Location
  readonly suggestion?: string
}

export interface Verdict {
  readonly status: CheckStatus
  readonly checks: ReadonlyArray<Check>
}

/** What the verdict reads of the geometry: its extents and watertightness, and the measurements when it has them. */
export interface MeasuredGeometry {
  readonly boundingBox: Size
  readonly watertight: boolean
  readonly dfm?: DfmMeasurements | undefined
}

export interface MachineVolume {
  readonly id: string
  readonly name: string
  readonly buildVolume?: Size | undefined
}

const RANK: Record<CheckStatus, number> = { ok: 0, warning: 1, blocked: 2 }

const sorted = ({ x, y, z }: Size) => [x, y, z].sort((a, b) => a - b)

/** Whether a box fits in a volume, in any of its axis-aligned orientations (the sorted edges pairwise). */
export const fitsIn = (part: Size, volume: Size) => {
  const p = sorted(part), v = sorted(volume)
  return p[0]! <= v[0]! && p[1]! <= v[1]! && p[2]! <= v[2]!
}

const mm = (value: number) => `${Number(value.toFixed(3))}`
const dims = ({ x, y, z }: Size) => `${mm(x)} × ${mm(y)} × ${mm(z)} mm`

const xyz = ([x, y, z]: Point): Size => ({ x, y, z })

/** A stored region as the API's location. */
const locationOf = (region: Region | undefined): Location | undefined =>
  region === undefined ? undefined : { boundingBox: { min: xyz(region.min), max: xyz(region.max) }, points: region.points.map(xyz) }

/** The location and suggestion of a check that warns or blocks, when its region is known. */
const located = (check: Check, location: Location | undefined, suggestion: string): Check =>
  check.status === "ok" ? check : { ...check, ...(location === undefined ? {} : { location }), suggestion }

const regionOf = (m: DfmMeasurements, kind: RegionKind) => locationOf(m.regions?.[kind])

/** The whole part: what the build volume (and an unmeasurable wall) concern. */
const partLocation = (m: DfmMeasurements | undefined): Location | undefined => m?.bounds === undefined ? undefined : locationOf({ ...m.bounds, points: [] })

const count = (id: string, value: number, unit: string, problem: string): Check => ({
  id,
  status: value > 0 ? "warning" : "ok",
  value,
  limit: 0,
  unit,
  message: value > 0 ? problem : `no ${unit === "edges" || unit === "triangles" ? id.replace("mesh-", "").replaceAll("-", " ") : unit}`
})

const meshChecks = (m: DfmMeasurements): ReadonlyArray<Check> => {
  const bodies = m.shells - m.cavities
  const degenerate = m.degenerateTriangles
  return [
    located(
      count(
        "mesh-open-edges",
        m.openEdges,
        "edges",
        `${m.openEdges} open edges: the mesh is not closed, so its volume, price and wall thickness are estimates`
      ),
      regionOf(m, "openEdges"),
      "Close the holes along these edges (fill them in the CAD model, or repair the mesh) so that the surface is watertight."
    ),
    located(
      count("mesh-non-manifold-edges", m.nonManifoldEdges, "edges", `${m.nonManifoldEdges} edges are shared by more than two triangles`),
      regionOf(m, "nonManifoldEdges"),
      "Repair the mesh here so that each edge joins exactly two triangles (remove duplicate or internal faces, or separate touching bodies)."
    ),
    located(
      count(
        "mesh-inconsistent-normals",
        m.inconsistentEdges,
        "edges",
        `${m.inconsistentEdges} edges join triangles facing opposite ways: some triangles face inwards`
      ),
      regionOf(m, "inconsistentEdges"),
      "Flip the triangles here that face inwards so that every face points out of the part (a mesh repair does this)."
    ),
    ...(degenerate === undefined ? [] : [
      located(
        count(
          "mesh-degenerate-triangles",
          degenerate,
          "triangles",
          `${degenerate} triangle${degenerate === 1 ? " has" : "s have"} no area (a repeated vertex, or three in a line): ` +
            "left out of the edge checks, they add nothing to the part"
        ),
        regionOf(m, "degenerateTriangles"),
        "Remove the zero-area triangles (merge their vertices) when exporting or repairing the mesh."
      )
    ]),
    located(
      {
        id: "mesh-shells",
        status: bodies > 1 ? "warning" : "ok",
        value: m.shells,
        limit: 1,
        unit: "shells",
        message: bodies > 1
          ? `${bodies} separate bodies (${m.shells} shells): they are made as one part, or should be separate parts`
          : m.shells === 1
          ? "one shell"
          : `${m.shells} shells: one body and ${m.cavities} closed void${m.cavities === 1 ? "" : "s"} in it`
      },
      regionOf(m, "extraBodies"),
      "Join the bodies into one solid, or make each body a part of its own."
    )
  ]
}

const buildVolumeCheck = (
  technologyId: string,
  box: Size,
  limits: ManufacturabilityLimits,
  machines: ReadonlyArray<MachineVolume>,
  where: Location | undefined
): Check => {
  const longest = Math.max(box.x, box.y, box.z)
  const volumes = machines.length === 0
    ? [limits.defaultBuildVolume]
    : machines.map((machine) => machine.buildVolume ?? limits.defaultBuildVolume)
  const largest = volumes.reduce((best, volume) => Math.max(...sorted(volume)) > Math.max(...sorted(best)) ? volume : best)
  const suggestion = `Scale the part down or split it into pieces that fit ${dims(largest)} in some orientation, ` +
    `or add a ${technologyId} machine whose build volume holds ${dims(box)}.`
  if (machines.length === 0) {
    const volume = limits.defaultBuildVolume
    const fits = fitsIn(box, volume)
    return located(
      {
        id: "build-volume",
        status: fits ? "ok" : "blocked",
        value: longest,
        limit: Math.max(volume.x, volume.y, volume.z),
        unit: "mm",
        message: `the app has no ${technologyId} machine: the part (${dims(box)}) ${fits ? "fits" : "does not fit"} the ${technologyId} default build volume ` +
          `(${dims(volume)})`,
        machineIds: []
      },
      where,
      suggestion
    )
  }
  const fitting = machines.filter((machine) => fitsIn(box, machine.buildVolume ?? limits.defaultBuildVolume))
  return located(
    {
      id: "build-volume",
      status: fitting.length > 0 ? "ok" : "blocked",
      value: longest,
      limit: Math.max(...volumes.map((volume) => Math.max(volume.x, volume.y, volume.z))),
      unit: "mm",
      message: fitting.length > 0
        ? `the part (${dims(box)}) fits ${fitting.length} of ${machines.length} ${technologyId} machines: ${fitting.map((machine) => machine.name).join(", ")}`
        : `the part (${dims(box)}) fits none of the app's ${machines.length} ${technologyId} machines (` +
          `${machines.map((machine) => `${machine.name}: ${dims(machine.buildVolume ?? limits.defaultBuildVolume)}`).join("; ")})`,
      machineIds: fitting.map((machine) => machine.id)
    },
    where,
    suggestion
  )
}

/** The thinnest sampled walls below `limit`: their box, and the thinnest few. */
const thinWalls = (m: DfmMeasurements, limit: number): Location | undefined => {
  const below = (m.thinnestWalls ?? []).filter(([, , , thickness]) => thickness < limit)
  if (below.length === 0) return undefined
  const axis = (k: 0 | 1 | 2, pick: (...values: Array<number>) => number) => pick(...below.map((wall) => wall[k]))
  const corner = (pick: (...values: Array<number>) => number) => ({ x: axis(0, pick), y: axis(1, pick), z: axis(2, pick) })
  return {
    boundingBox: { min: corner(Math.min), max: corner(Math.max) },
    points: below.slice(0, MAX_POINTS).map(([x, y, z]) => ({ x, y, z }))
  }
}

const wallCheck = (m: DfmMeasurements, limits: ManufacturabilityLimits): Check => {
  const wall = m.wallThickness
  if (wall === null) {
    return located(
      {
        id: "wall-thickness",
        status: "warning",
        value: null,
        limit: limits.wallWarning,
        unit: "mm",
        message: "no wall could be measured: the surface encloses no material (an open sheet, or triangles facing inwards)"
      },
      partLocation(m),
      "Close the mesh and make its triangles face outwards, so that it encloses the material to be made."
    )
  }
  const status: CheckStatus = wall.min < limits.wallBlocked ? "blocked" : wall.min < limits.wallWarning ? "warning" : "ok"
  const limit = status === "blocked" ? limits.wallBlocked : limits.wallWarning
  return located(
    {
      id: "wall-thickness",
      status,
      value: wall.min,
      limit,
      unit: "mm",
      message: status === "ok"
        ? `the thinnest wall measured is ${mm(wall.min)} mm (at least ${mm(limits.wallWarning)} mm)`
        : `the thinnest wall measured is ${mm(wall.min)} mm, below ${mm(limit)} mm` +
          (status === "blocked" ? ": too thin to be made" : ": fragile, may not come out as drawn")
    },
    thinWalls(m, limit),
    `Thicken the wall to ${mm(limits.wallWarning)} mm at least.`
  )
}

const technologyChecks = (m: DfmMeasurements, box: Size, limits: ManufacturabilityLimits): ReadonlyArray<Check> => [
  ...(limits.overhang
    ? [located(
      {
        id: "overhang",
        status: m.overhangArea > 0 ? "warning" as const : "ok" as const,
        value: m.overhangArea,
        limit: 0,
        unit: "mm²",
        message: m.overhangArea > 0
          ? `${mm(m.overhangArea)} mm² face down more steeply than 45° (as oriented in the file): they need support`
          : "no face needs support (as oriented in the file)"
      },
      regionOf(m, "overhang"),
      "Add supports under these faces, or rotate the part so that they face up or rest on the build plate."
    )]
    : []),
  ...(limits.enclosedCavities
    ? [located(
      {
        id: "enclosed-cavities",
        status: m.cavities > 0 ? "warning" as const : "ok" as const,
        value: m.cavities,
        limit: 0,
        unit: "cavities",
        message: (m.cavities > 0
          ? `${m.cavities} closed void${m.cavities === 1 ? "" : "s"} (${mm(m.cavityVolume)} mm³) would trap unfused powder: add escape holes`
          : "no closed void") + (m.shellsChecked < m.shells ? ` (${m.shellsChecked} of ${m.shells} shells checked)` : "")
      },
      regionOf(m, "cavities"),
      "Add two escape holes or more to each void so that the unfused powder can be removed, or fill the void."
    )]
    : []),
  ...(limits.stockAllowance !== undefined ? cncChecks(m, box, limits.stockAllowance) : [])
]

const cncChecks = (m: DfmMeasurements, box: Size, allowance: number): ReadonlyArray<Check> => {
  const stock = { x: box.x + 2 * allowance, y: box.y + 2 * allowance, z: box.z + 2 * allowance }
  return [
    located(
      {
        id: "cnc-undercuts",
        status: m.undercutArea > 0 ? "warning" : "ok",
        value: m.undercutArea,
        limit: 0,
        unit: "mm²",
        message: m.undercutArea > 0
          ? `about ${mm(m.undercutArea)} mm² of the surface cannot be reached from any of the six axis directions: undercuts or closed voids`
          : "every sampled point of the surface is reachable from one of the six axis directions"
      },
      regionOf(m, "undercuts"),
      "Open these surfaces to one of the six axis directions (remove the undercut or the closed void), or split the part into pieces that can be."
    ),
    {
      id: "cnc-stock-size",
      status: "ok",
      value: Math.max(stock.x, stock.y, stock.z),
      limit: null,
      unit: "mm",
      message: `stock of ${dims(stock)} (the bounding box plus ${mm(allowance)} mm a side)`
    }
  ]
}

/**
 * The verdict of a geometry for a technology. Geometry measured before the
 * manufacturability measurements existed (no `dfm`) gets the checks its
 * measures allow: the build volume, and whether the mesh is closed.
 */
export const manufacturabilityVerdict = (
  technologyId: string,
  geometry: MeasuredGeometry,
  limits: ManufacturabilityLimits | undefined,
  machines: ReadonlyArray<MachineVolume>
): Verdict => {
  const m = geometry.dfm
  const box = geometry.boundingBox
  const checks: Array<Check> = []
  if (m !== undefined) checks.push(...meshChecks(m))
  else if (!geometry.watertight) {
    checks.push({
      id: "mesh-open-edges",
      status: "warning",
      value: null,
      limit: 0,
      unit: "edges",
      message: "the mesh is not closed (not watertight)",
      suggestion: "Close the holes in the mesh (fill them in the CAD model, or repair the mesh) so that the surface is watertight."
    })
  }
  if (limits !== undefined) {
    checks.push(buildVolumeCheck(technologyId, box, limits, machines, partLocation(m)))
    if (m !== undefined) checks.push(wallCheck(m, limits), ...technologyChecks(m, box, limits))
  }
  const status = checks.reduce<CheckStatus>((worst, check) => RANK[check.status] > RANK[worst] ? check.status : worst, "ok")
  return { status, checks }
}
