/**
 * The D2 shape distribution of a mesh (Osada, Funkhouser, Chazelle, Dobkin,
 * "Shape distributions", ACM TOG 2002): the distribution of the distance
 * between two random points on the surface. It does not change when the
 * part is moved or turned; dividing the distances by their mean makes it
 * independent of size too, so it describes the shape alone.
 *
 * The sample size is fixed (SAMPLE_PAIRS), whatever the triangle count:
 * choosing a triangle is a binary search in the cumulative areas, so a
 * 1,000,000-triangle mesh costs one pass to sum the areas (done by the
 * analysis, which measures them anyway) and 8,192 searches.
 *
 * The generator is seeded with a constant, so the same mesh always gives the
 * same signature, and a moved or scaled copy (same triangles, same areas up
 * to a factor) draws the same triangles and barycentric coordinates: its
 * histogram is the same up to rounding. Another triangulation of the same
 * shape draws other points and differs by the sampling noise only (about
 * 0.01 in the distance below).
 */
import { seededRandom, triangleAt } from "./sampling.ts"

/** Histogram bins over [0, DISTRIBUTION_RANGE) mean distances; the last bin also holds anything farther. */
export const DISTRIBUTION_BINS = 32
/** Distances are in units of the mean distance; 3 is a thin rod's longest (its mean is a third of its length). */
export const DISTRIBUTION_RANGE = 3
/** Pairs of points drawn per mesh. */
export const SAMPLE_PAIRS = 4096
const SEED = 0x2f6b_a3d1
/** Stored fractions are rounded to this many decimals (sampling noise is far larger). */
const DECIMALS = 5

/** Running sums of the triangles' doubled areas (`cumulative[t]` includes triangle t). */
export const cumulativeAreas = (positions: Float64Array, triangles: Uint32Array): Float64Array => {
  const count = triangles.length / 3
  const cumulative = new Float64Array(count)
  let sum = 0
  for (let t = 0; t < count; t++) {
    const i0 = 3 * triangles[3 * t]!, i1 = 3 * triangles[3 * t + 1]!, i2 = 3 * triangles[3 * t + 2]!
    const ax = positions[i1]! - positions[i0]!, ay = positions[i1 + 1]! - positions[i0 + 1]!, az = positions[i1 + 2]! - positions[i0 + 2]!
    const bx = positions[i2]! - positions[i0]!, by = positions[i2 + 1]! - positions[i0 + 1]!, bz = positions[i2 + 2]! - positions[i0 + 2]!
    const cx = ay * bz - az * by, cy = az * bx - ax * bz, cz = ax * by - ay * bx
    sum += Math.sqrt(cx * cx + cy * cy + cz * cz)
    cumulative[t] = sum
  }
  return cumulative
}

/**
 * The D2 histogram: DISTRIBUTION_BINS fractions (summing to 1, rounded to
 * 1e-5) of SAMPLE_PAIRS distances divided by their mean. Points are uniform
 * on the surface: a triangle by its area, then uniform barycentric
 * coordinates (the unit square folded onto the triangle). A mesh without
 * area has all its mass in the first bin. `cumulative` is the analysis's
 * running sum of areas, computed here when not given.
 */
export const d2Distribution = (
  positions: Float64Array,
  triangles: Uint32Array,
  cumulative: Float64Array = cumulativeAreas(positions, triangles)
): ReadonlyArray<number> => {
  const histogram = new Array<number>(DISTRIBUTION_BINS).fill(0)
  const total = cumulative.length === 0 ? 0 : cumulative[cumulative.length - 1]!
  if (!(total > 0) || !Number.isFinite(total)) {
    histogram[0] = 1
    return histogram
  }
  const random = seededRandom(SEED)
  const point = new Float64Array(3)
  const samplePoint = () => {
    const t = triangleAt(cumulative, random() * total)
    let u = random(), v = random()
    if (u + v > 1) {
      u = 1 - u
      v = 1 - v
    }
    const i0 = 3 * triangles[3 * t]!, i1 = 3 * triangles[3 * t + 1]!, i2 = 3 * triangles[3 * t + 2]!
    for (let k = 0; k < 3; k++) {
      const origin = positions[i0 + k]!
      point[k] = origin + u * (positions[i1 + k]! - origin) + v * (positions[i2 + k]! - origin)
    }
  }
  const distances = new Float64Array(SAMPLE_PAIRS)
  let sum = 0
  for (let pair = 0; pair < SAMPLE_PAIRS; pair++) {
    samplePoint()
    const x = point[0]!, y = point[1]!, z = point[2]!
    samplePoint()
    const dx = point[0]! - x, dy = point[1]! - y, dz = point[2]! - z
    const distance = Math.sqrt(dx * dx + dy * dy + dz * dz)
    distances[pair] = distance
    sum += distance
  }
  const mean = sum / SAMPLE_PAIRS
  const counts = new Uint32Array(DISTRIBUTION_BINS)
  const perBin = DISTRIBUTION_BINS / DISTRIBUTION_RANGE
  for (let pair = 0; pair < SAMPLE_PAIRS; pair++) {
    const bin = mean > 0 ? Math.floor((distances[pair]! / mean) * perBin) : 0
    counts[Math.min(bin, DISTRIBUTION_BINS - 1)]!++
  }
  const scale = 10 ** DECIMALS
  for (let bin = 0; bin < DISTRIBUTION_BINS; bin++) histogram[bin] = Math.round((counts[bin]! / SAMPLE_PAIRS) * scale) / scale
  return histogram
}

/**
 * The running sums of a stored histogram (its cumulative distribution),
 * normalised so the last is 1 (the stored fractions are rounded), written
 * into `target` at `offset`; false, with `target` partly written, when the
 * value is not such a histogram (a part analysed before the distribution
 * existed, or a hand-made geometry).
 */
export const writeCdf = (histogram: unknown, target: Float32Array | Float64Array, offset: number): boolean => {
  if (!Array.isArray(histogram) || histogram.length !== DISTRIBUTION_BINS) return false
  let sum = 0
  for (let bin = 0; bin < DISTRIBUTION_BINS; bin++) {
    const value: unknown = histogram[bin]
    if (typeof value !== "number" || !Number.isFinite(value) || value < 0) return false
    sum += value
    target[offset + bin] = sum
  }
  if (!(sum > 0)) return false
  for (let bin = 0; bin < DISTRIBUTION_BINS; bin++) target[offset + bin] = target[offset + bin]! / sum
  return true
}

/** The cumulative distribution of a stored histogram, or undefined when it is not one (see writeCdf). */
export const distributionCdf = (histogram: unknown): Float64Array | undefined => {
  const cdf = new Float64Array(DISTRIBUTION_BINS)
  return writeCdf(histogram, cdf, 0) ? cdf : undefined
}

/**
 * The earth mover's distance between two D2 distributions given as CDFs, in
 * mean distances: how far, on average, the mass of one must move to become
 * the other (in one dimension, the area between the CDFs).
 */
export const d2Distance = (cdfA: ArrayLike<number>, cdfB: ArrayLike<number>): number => {
  let area = 0
  for (let bin = 0; bin < DISTRIBUTION_BINS; bin++) area += Math.abs(cdfA[bin]! - cdfB[bin]!)
  return area * (DISTRIBUTION_RANGE / DISTRIBUTION_BINS)
}
