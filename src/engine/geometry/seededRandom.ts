/**
 * mulberry32: a small, fast, seeded 32-bit generator, so that sampling a mesh
 * (its shape signature, its manufacturability rays) gives the same answer
 * for the same mesh every time. Plenty for tens of thousands of draws.
 */
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
