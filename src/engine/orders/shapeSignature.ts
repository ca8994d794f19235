/**
 * What makes two parts alike (docs/geometry.md, "Similarity"): a part's
 * shape signature from its stored geometry, and the distance between two
 * signatures. The one place the weights live.
 *
 * A signature is SIGNATURE_LENGTH numbers, packed so the index can keep
 * 100,000 of them in one typed array:
 *
 * | slot | feature | changes with |
 * |---|---|---|
 * | 0 | size: ln √(surface area), a length scale | size only |
 * | 1, 2 | proportions: the bounding box edges sorted, the middle and shortest over the longest | shape (and orientation: the box is in the file's axes) |
 * | 3 | compactness: the isoperimetric quotient 36π·V²/A³ (1 for a sphere, 0.52 a cube, 0.67 a cylinder as tall as wide), clamped to [0, 1] | shape |
 * | 4 | 1 when the D2 distribution is known, else 0 | — |
 * | 5 … 36 | the D2 distribution as a CDF (src/engine/geometry/shapeDistribution.ts) | shape only |
 */
import type { Geometry } from "../../domain/resources/modelFiles.ts"
import { DISTRIBUTION_BINS, DISTRIBUTION_RANGE, writeCdf } from "../geometry/shapeDistribution.ts"

const SIZE = 0
const PROPORTIONS = 1
const COMPACTNESS = 3
const HAS_DISTRIBUTION = 4
const DISTRIBUTION = 5
export const SIGNATURE_LENGTH = DISTRIBUTION + DISTRIBUTION_BINS

/**
 * The weights, chosen on analytic shapes (test/engine/similarity.test.ts):
 *
 * - size: a copy twice as large is 0.25 · ln 2 ≈ 0.17 away (score 0.85):
 *   close, not identical, and nearer than a cylinder of the same size
 *   (≈ 0.35 from a cube).
 * - proportions: 0.5 per unit of each ratio; a cube turned 30° and 40° in
 *   its file is ≈ 0.11 away (its box grows), less than any other shape.
 * - compactness: 2 per unit; what tells a cube (0.52) from a cylinder (0.67)
 *   or a sphere (1), which D2 barely does.
 * - D2: 10 per mean distance of earth mover's distance; another
 *   triangulation of the same shape is ≈ 0.01 (0.1) away, a cube from a
 *   2×3×4 box 0.04 (0.4), from a plate 0.12 (1.2), from a rod 0.3 (3).
 */
export const WEIGHTS = { size: 0.25, proportions: 0.5, compactness: 2, distribution: 10 } as const

const BIN_WIDTH = DISTRIBUTION_RANGE / DISTRIBUTION_BINS
const distributionWeight = WEIGHTS.distribution * BIN_WIDTH

/**
 * What a signature reads of a part's stored geometry: the API's measures, and
 * the D2 distribution the analysis stores beside them (not part of the API's
 * `geometry`, and absent from parts analysed before it existed; `writeCdf`
 * checks it is a histogram).
 */
export type ShapeGeometry = Pick<typeof Geometry.Type, "volume" | "surfaceArea" | "boundingBox"> & {
  readonly shapeDistribution?: ReadonlyArray<number> | undefined
}

/**
 * The signature of a stored geometry, into `target` at `offset` (a fresh
 * array when not given). Written for the index's first build (100,000 in a
 * fraction of a second): no intermediate arrays.
 */
export const shapeSignature = (
  geometry: ShapeGeometry,
  target: Float32Array = new Float32Array(SIGNATURE_LENGTH),
  offset = 0
): Float32Array => {
  const { surfaceArea: area, volume } = geometry
  // The three edges sorted, longest first.
  let { x: a, y: b, z: c } = geometry.boundingBox
  if (a < b) [a, b] = [b, a]
  if (b < c) [b, c] = [c, b]
  if (a < b) [a, b] = [b, a]
  const longest = a > 0 ? a : 1
  target[offset + SIZE] = area > 0 ? Math.log(Math.sqrt(area)) : 0
  target[offset + PROPORTIONS] = b / longest
  target[offset + PROPORTIONS + 1] = c / longest
  target[offset + COMPACTNESS] = area > 0 ? Math.min((36 * Math.PI * volume * volume) / (area * area * area), 1) : 0
  const known = writeCdf(geometry.shapeDistribution, target, offset + DISTRIBUTION)
  target[offset + HAS_DISTRIBUTION] = known ? 1 : 0
  if (!known) target.fill(0, offset + DISTRIBUTION, offset + SIGNATURE_LENGTH)
  return target
}

/**
 * The distance between the signatures at `a[aOffset]` and `b[bOffset]`: the
 * weighted sum of the features' differences and the earth mover's distance
 * of the D2 distributions (left out when either part has none: parts
 * analysed before the distribution existed are compared on their measures).
 * When the features alone are already beyond `bound`, that partial sum is
 * returned (the ranking needs no more to drop the part).
 */
export const signatureDistance = (a: Float32Array, aOffset: number, b: Float32Array, bOffset: number, bound = Infinity): number => {
  let distance = WEIGHTS.size * Math.abs(a[aOffset + SIZE]! - b[bOffset + SIZE]!)
    + WEIGHTS.proportions * (Math.abs(a[aOffset + PROPORTIONS]! - b[bOffset + PROPORTIONS]!)
        + Math.abs(a[aOffset + PROPORTIONS + 1]! - b[bOffset + PROPORTIONS + 1]!))
    + WEIGHTS.compactness * Math.abs(a[aOffset + COMPACTNESS]! - b[bOffset + COMPACTNESS]!)
  if (distance > bound) return distance
  if (a[aOffset + HAS_DISTRIBUTION] === 1 && b[bOffset + HAS_DISTRIBUTION] === 1) {
    let area = 0
    for (let bin = 0; bin < DISTRIBUTION_BINS; bin++) area += Math.abs(a[aOffset + DISTRIBUTION + bin]! - b[bOffset + DISTRIBUTION + bin]!)
    distance += distributionWeight * area
  }
  return distance
}

/** A distance as the API's score: 1 for the same shape, towards 0 as shapes differ. */
export const scoreOf = (distance: number) => 1 / (1 + distance)

/** The score of two stored geometries. */
export const similarityScore = (a: ShapeGeometry, b: ShapeGeometry): number => scoreOf(signatureDistance(shapeSignature(a), 0, shapeSignature(b), 0))
