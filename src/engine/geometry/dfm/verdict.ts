/**
 * A part's manufacturability for its technology (docs/geometry.md,
 * "Manufacturability"): the stored measurements (measure.ts) held to the
 * technology's limits (MANUFACTURABILITY_LIMITS, src/engine/referenceData.ts)
 * and to the build volumes of the app's machines. Pure and cheap: no mesh,
 * no ray; the part's writes and the quote call it.
 */
import type { ManufacturabilityLimits } from "../../referenceData.ts"
import type { DfmMeasurements } from "./measure.ts"

export type CheckStatus = "ok" | "warning" | "blocked"

export interface Check {
  readonly id: string
  readonly status: CheckStatus
  readonly value: number | null
  readonly limit: number | null
  readonly unit: string
  readonly message: string
  readonly machineIds?: ReadonlyArray<string>
}

export interface Verdict {
  readonly status: CheckStatus
  readonly checks: ReadonlyArray<Check>
}

type Size = { readonly x: number; readonly y: number; readonly z: number }

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

const count = (id: string, value: number, unit: string, problem: string): Check => ({
  id,
  status: value > 0 ? "warning" : "ok",
  value,
  limit: 0,
  unit,
  message: value > 0 ? problem : `no ${unit === "edges" ? id.replace("mesh-", "").replaceAll("-", " ") : unit}`
})

const meshChecks = (m: DfmMeasurements): ReadonlyArray<Check> => {
  const bodies = m.shells - m.cavities
  return [
    count("mesh-open-edges", m.openEdges, "edges", `${m.openEdges} open edges: the mesh is not closed, so its volume, price and wall thickness are estimates`),
    count("mesh-non-manifold-edges", m.nonManifoldEdges, "edges", `${m.nonManifoldEdges} edges are shared by more than two triangles`),
    count(
      "mesh-inconsistent-normals",
      m.inconsistentEdges,
      "edges",
      `${m.inconsistentEdges} edges join triangles facing opposite ways: some triangles face inwards`
    ),
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
    }
  ]
}

const buildVolumeCheck = (technologyId: string, box: Size, limits: ManufacturabilityLimits, machines: ReadonlyArray<MachineVolume>): Check => {
  const longest = Math.max(box.x, box.y, box.z)
  if (machines.length === 0) {
    const volume = limits.defaultBuildVolume
    const fits = fitsIn(box, volume)
    return {
      id: "build-volume",
      status: fits ? "ok" : "blocked",
      value: longest,
      limit: Math.max(volume.x, volume.y, volume.z),
      unit: "mm",
      message: `the app has no ${technologyId} machine: the part (${dims(box)}) ${fits ? "fits" : "does not fit"} the ${technologyId} default build volume ` +
        `(${dims(volume)})`,
      machineIds: []
    }
  }
  const volumes = machines.map((machine) => ({ machine, volume: machine.buildVolume ?? limits.defaultBuildVolume }))
  const fitting = volumes.filter(({ volume }) => fitsIn(box, volume))
  const largest = Math.max(...volumes.map(({ volume }) => Math.max(volume.x, volume.y, volume.z)))
  return {
    id: "build-volume",
    status: fitting.length > 0 ? "ok" : "blocked",
    value: longest,
    limit: largest,
    unit: "mm",
    message: fitting.length > 0
      ? `the part (${dims(box)}) fits ${fitting.length} of ${machines.length} ${technologyId} machines: ${
        fitting.map(({ machine }) => machine.name).join(", ")
      }`
      : `the part (${dims(box)}) fits none of the app's ${machines.length} ${technologyId} machines (` +
        `${volumes.map(({ machine, volume }) => `${machine.name}: ${dims(volume)}`).join("; ")})`,
    machineIds: fitting.map(({ machine }) => machine.id)
  }
}

const wallCheck = (m: DfmMeasurements, limits: ManufacturabilityLimits): Check => {
  const wall = m.wallThickness
  if (wall === null) {
    return {
      id: "wall-thickness",
      status: "warning",
      value: null,
      limit: limits.wallWarning,
      unit: "mm",
      message: "no wall could be measured: the surface encloses no material (an open sheet, or triangles facing inwards)"
    }
  }
  const status: CheckStatus = wall.min < limits.wallBlocked ? "blocked" : wall.min < limits.wallWarning ? "warning" : "ok"
  const limit = status === "blocked" ? limits.wallBlocked : limits.wallWarning
  return {
    id: "wall-thickness",
    status,
    value: wall.min,
    limit,
    unit: "mm",
    message: status === "ok"
      ? `the thinnest wall measured is ${mm(wall.min)} mm (at least ${mm(limits.wallWarning)} mm)`
      : `the thinnest wall measured is ${mm(wall.min)} mm, below ${mm(limit)} mm` +
        (status === "blocked" ? ": too thin to be made" : ": fragile, may not come out as drawn")
  }
}

const technologyChecks = (m: DfmMeasurements, box: Size, limits: ManufacturabilityLimits): ReadonlyArray<Check> => [
  ...(limits.overhang
    ? [{
      id: "overhang",
      status: m.overhangArea > 0 ? "warning" as const : "ok" as const,
      value: m.overhangArea,
      limit: 0,
      unit: "mm²",
      message: m.overhangArea > 0
        ? `${mm(m.overhangArea)} mm² face down more steeply than 45° (as oriented in the file): they need support`
        : "no face needs support (as oriented in the file)"
    }]
    : []),
  ...(limits.enclosedCavities
    ? [{
      id: "enclosed-cavities",
      status: m.cavities > 0 ? "warning" as const : "ok" as const,
      value: m.cavities,
      limit: 0,
      unit: "cavities",
      message: (m.cavities > 0
        ? `${m.cavities} closed void${m.cavities === 1 ? "" : "s"} (${mm(m.cavityVolume)} mm³) would trap unfused powder: add escape holes`
        : "no closed void") + (m.shellsChecked < m.shells ? ` (${m.shellsChecked} of ${m.shells} shells checked)` : "")
    }]
    : []),
  ...(limits.stockAllowance !== undefined ? cncChecks(m, box, limits.stockAllowance) : [])
]

const cncChecks = (m: DfmMeasurements, box: Size, allowance: number): ReadonlyArray<Check> => {
  const stock = { x: box.x + 2 * allowance, y: box.y + 2 * allowance, z: box.z + 2 * allowance }
  return [
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
    checks.push({ id: "mesh-open-edges", status: "warning", value: null, limit: 0, unit: "edges", message: "the mesh is not closed (not watertight)" })
  }
  if (limits !== undefined) {
    checks.push(buildVolumeCheck(technologyId, box, limits, machines))
    if (m !== undefined) checks.push(wallCheck(m, limits), ...technologyChecks(m, box, limits))
  }
  const status = checks.reduce<CheckStatus>((worst, check) => RANK[check.status] > RANK[worst] ? check.status : worst, "ok")
  return { status, checks }
}
