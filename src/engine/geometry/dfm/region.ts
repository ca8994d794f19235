/**
 * Where a manufacturability finding is (docs/geometry.md, "Located
 * findings"): the bounding box of everything it concerns and a few points
 * of it, in the part's coordinates (millimetres, the file's axes after its
 * unit and 3MF transforms), measured with the rest in the analysis thread
 * and stored with the measurements, so a verdict can say where without the
 * mesh.
 */

export type Point = readonly [number, number, number]

/** The box of everything a finding concerns, and at most MAX_POINTS points of it. */
export interface Region {
  readonly min: Point
  readonly max: Point
  readonly points: ReadonlyArray<Point>
}

/** Points a region keeps: enough to show where, few enough to read. */
export const MAX_POINTS = 5

/** Stored figures are rounded to this many decimals (1e-6 mm), as the other measurements. */
const DECIMALS = 6
export const round = (value: number) => Math.round(value * 10 ** DECIMALS) / 10 ** DECIMALS
const rounded = (x: number, y: number, z: number): Point => [round(x), round(y), round(z)]

/**
 * A region grown one place at a time: `include` widens the box; `point`
 * widens it and keeps the point while fewer than MAX_POINTS are kept;
 * `candidate` keeps the MAX_POINTS of the largest weight (the largest
 * overhanging faces, say) rather than the first.
 */
export class RegionBuilder {
  private minX = Infinity
  private minY = Infinity
  private minZ = Infinity
  private maxX = -Infinity
  private maxY = -Infinity
  private maxZ = -Infinity
  private readonly kept: Array<{ readonly point: Point; readonly weight: number }> = []

  include(x: number, y: number, z: number): void {
    if (x < this.minX) this.minX = x
    if (x > this.maxX) this.maxX = x
    if (y < this.minY) this.minY = y
    if (y > this.maxY) this.maxY = y
    if (z < this.minZ) this.minZ = z
    if (z > this.maxZ) this.maxZ = z
  }

  point(x: number, y: number, z: number): void {
    this.include(x, y, z)
    if (this.kept.length < MAX_POINTS) this.kept.push({ point: rounded(x, y, z), weight: 0 })
  }

  candidate(x: number, y: number, z: number, weight: number): void {
    this.include(x, y, z)
    const kept = this.kept
    if (kept.length === MAX_POINTS && weight <= kept[MAX_POINTS - 1]!.weight) return
    let at = Math.min(kept.length, MAX_POINTS - 1)
    while (at > 0 && kept[at - 1]!.weight < weight) at--
    kept.splice(at, 0, { point: rounded(x, y, z), weight })
    if (kept.length > MAX_POINTS) kept.pop()
  }

  /** The region, or undefined when nothing was included. */
  region(): Region | undefined {
    if (this.minX > this.maxX) return undefined
    return {
      min: rounded(this.minX, this.minY, this.minZ),
      max: rounded(this.maxX, this.maxY, this.maxZ),
      points: this.kept.map(({ point }) => point)
    }
  }
}
