/**
 * Sampling a mesh's surface, the same way every time for the same mesh (its
 * shape signature, its manufacturability rays): a seeded generator, and the
 * triangle an area-weighted draw falls on.
 */

/** mulberry32: a small, fast, seeded 32-bit generator; plenty for tens of thousands of draws. */
export const seededRandom = (seed: number): () => number => {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** The first triangle whose running area sum exceeds `target` (zero-area triangles are never chosen). */
export const triangleAt = (cumulative: Float64Array, target: number): number => {
  let low = 0, high = cumulative.length - 1
  while (low < high) {
    const middle = (low + high) >>> 1
    if (cumulative[middle]! > target) high = middle
    else low = middle + 1
  }
  return low
}
