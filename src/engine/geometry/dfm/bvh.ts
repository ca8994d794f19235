/**
 * A bounding volume hierarchy over a mesh's triangles, for the ray queries
 * of the wall thickness, reachability and cavity checks. Built top-down:
 * each node's triangles are split at the middle of their centroids' extent
 * along its longest axis (in half by count when that leaves a side empty),
 * down to leaves of at most LEAF_SIZE triangles; so the build is
 * O(n log n) with no sort, and a ray visits O(log n) nodes on an ordinary
 * mesh. The boxes are Float32, widened by a relative margin so that
 * rounding never loses a hit.
 */

const LEAF_SIZE = 4

export interface Bvh {
  readonly positions: Float64Array
  readonly triangles: Uint32Array
  /** Triangle ids, in the order the leaves refer to. */
  readonly order: Uint32Array
  /** Per node: min x, y, z, max x, y, z. */
  readonly bounds: Float32Array
  /** Per node: [left child, right child] for an inner node; [first, count | LEAF] for a leaf (into `order`). */
  readonly links: Uint32Array
  readonly nodeCount: number
}

const LEAF = 0x8000_0000
const MAX_DEPTH = 8192

export const buildBvh = (positions: Float64Array, triangles: Uint32Array): Bvh => {
  const count = triangles.length / 3
  const centroids = new Float64Array(count * 3)
  const boxes = new Float64Array(count * 6)
  for (let t = 0; t < count; t++) {
    const i0 = 3 * triangles[3 * t]!, i1 = 3 * triangles[3 * t + 1]!, i2 = 3 * triangles[3 * t + 2]!
    for (let axis = 0; axis < 3; axis++) {
      const a = positions[i0 + axis]!, b = positions[i1 + axis]!, c = positions[i2 + axis]!
      const low = Math.min(a, b, c), high = Math.max(a, b, c)
      boxes[6 * t + axis] = low
      boxes[6 * t + 3 + axis] = high
      centroids[3 * t + axis] = (low + high) / 2
    }
  }
  const order = new Uint32Array(count)
  for (let t = 0; t < count; t++) order[t] = t
  // A binary tree of at most `count` leaves.
  const capacity = Math.max(1, 2 * count)
  const bounds = new Float32Array(capacity * 6)
  const links = new Uint32Array(capacity * 2)
  let nodeCount = 0
  const stack: Array<number> = []

  const makeNode = (first: number, n: number): number => {
    const node = nodeCount++
    let minX = Infinity, minY = Infinity, minZ = Infinity, maxX = -Infinity, maxY = -Infinity, maxZ = -Infinity
    for (let i = first; i < first + n; i++) {
      const b = 6 * order[i]!
      if (boxes[b]! < minX) minX = boxes[b]!
      if (boxes[b + 1]! < minY) minY = boxes[b + 1]!
      if (boxes[b + 2]! < minZ) minZ = boxes[b + 2]!
      if (boxes[b + 3]! > maxX) maxX = boxes[b + 3]!
      if (boxes[b + 4]! > maxY) maxY = boxes[b + 4]!
      if (boxes[b + 5]! > maxZ) maxZ = boxes[b + 5]!
    }
    // Float32 rounding may shrink a box: widen it by a relative margin.
    const margin = 1e-5 *
      Math.max(maxX - minX, maxY - minY, maxZ - minZ, Math.abs(minX), Math.abs(minY), Math.abs(minZ), Math.abs(maxX), Math.abs(maxY), Math.abs(maxZ))
    bounds[6 * node] = minX - margin
    bounds[6 * node + 1] = minY - margin
    bounds[6 * node + 2] = minZ - margin
    bounds[6 * node + 3] = maxX + margin
    bounds[6 * node + 4] = maxY + margin
    bounds[6 * node + 5] = maxZ + margin
    links[2 * node] = first
    links[2 * node + 1] = n
    if (n > LEAF_SIZE) stack.push(node)
    else links[2 * node + 1] = n | LEAF
    return node
  }

  if (count > 0) makeNode(0, count)
  while (stack.length > 0) {
    const node = stack.pop()!
    const first = links[2 * node]!, n = links[2 * node + 1]!
    let lowX = Infinity, lowY = Infinity, lowZ = Infinity, highX = -Infinity, highY = -Infinity, highZ = -Infinity
    for (let i = first; i < first + n; i++) {
      const c = 3 * order[i]!
      if (centroids[c]! < lowX) lowX = centroids[c]!
      if (centroids[c]! > highX) highX = centroids[c]!
      if (centroids[c + 1]! < lowY) lowY = centroids[c + 1]!
      if (centroids[c + 1]! > highY) highY = centroids[c + 1]!
      if (centroids[c + 2]! < lowZ) lowZ = centroids[c + 2]!
      if (centroids[c + 2]! > highZ) highZ = centroids[c + 2]!
    }
    const ex = highX - lowX, ey = highY - lowY, ez = highZ - lowZ
    const axis = ex >= ey && ex >= ez ? 0 : ey >= ez ? 1 : 2
    const middle = axis === 0 ? (lowX + highX) / 2 : axis === 1 ? (lowY + highY) / 2 : (lowZ + highZ) / 2
    // Partition order[first, first + n) by centroid < middle.
    let i = first, j = first + n - 1
    while (i <= j) {
      if (centroids[3 * order[i]! + axis]! < middle) i++
      else {
        const swap = order[i]!
        order[i] = order[j]!
        order[j] = swap
        j--
      }
    }
    let leftCount = i - first
    if (leftCount === 0 || leftCount === n) leftCount = n >>> 1
    const left = makeNode(first, leftCount)
    const right = makeNode(first + leftCount, n - leftCount)
    links[2 * node] = left
    links[2 * node + 1] = right
  }
  return { positions, triangles, order, bounds, links, nodeCount }
}

/** Where a ray enters the box of `node` (its distance), or Infinity when it misses it within [0, limit]. */
const entry = (bvh: Bvh, node: number, ox: number, oy: number, oz: number, ix: number, iy: number, iz: number, limit: number): number => {
  const b = bvh.bounds, k = 6 * node
  let t1 = (b[k]! - ox) * ix, t2 = (b[k + 3]! - ox) * ix
  let near = Math.min(t1, t2), far = Math.max(t1, t2)
  t1 = (b[k + 1]! - oy) * iy
  t2 = (b[k + 4]! - oy) * iy
  near = Math.max(near, Math.min(t1, t2))
  far = Math.min(far, Math.max(t1, t2))
  t1 = (b[k + 2]! - oz) * iz
  t2 = (b[k + 5]! - oz) * iz
  near = Math.max(near, Math.min(t1, t2))
  far = Math.min(far, Math.max(t1, t2))
  // NaN (a zero direction component on the box's face) compares false: such a ray counts as entering.
  return far >= Math.max(near, 0) && near <= limit ? Math.max(near, 0) : far !== far || near !== near ? 0 : Infinity
}

/**
 * The distance along the ray to triangle t (Möller–Trumbore), or Infinity
 * when it misses it; `sign` receives the sign of the triangle's normal
 * (vertex order) along the ray.
 */
const hitDistance = (bvh: Bvh, t: number, ox: number, oy: number, oz: number, dx: number, dy: number, dz: number): number => {
  const p = bvh.positions, tr = bvh.triangles
  const i0 = 3 * tr[3 * t]!, i1 = 3 * tr[3 * t + 1]!, i2 = 3 * tr[3 * t + 2]!
  const x0 = p[i0]!, y0 = p[i0 + 1]!, z0 = p[i0 + 2]!
  const e1x = p[i1]! - x0, e1y = p[i1 + 1]! - y0, e1z = p[i1 + 2]! - z0
  const e2x = p[i2]! - x0, e2y = p[i2 + 1]! - y0, e2z = p[i2 + 2]! - z0
  const px = dy * e2z - dz * e2y, py = dz * e2x - dx * e2z, pz = dx * e2y - dy * e2x
  const det = e1x * px + e1y * py + e1z * pz
  if (det === 0) return Infinity
  const inverse = 1 / det
  const sx = ox - x0, sy = oy - y0, sz = oz - z0
  const u = (sx * px + sy * py + sz * pz) * inverse
  if (u < 0 || u > 1) return Infinity
  const qx = sy * e1z - sz * e1y, qy = sz * e1x - sx * e1z, qz = sx * e1y - sy * e1x
  const v = (dx * qx + dy * qy + dz * qz) * inverse
  if (v < 0 || u + v > 1) return Infinity
  const distance = (e2x * qx + e2y * qy + e2z * qz) * inverse
  return distance >= 0 ? distance : Infinity
}

/** Whether triangle t's normal (vertex order) points along (dx, dy, dz). */
export const facesAlong = (bvh: Bvh, t: number, dx: number, dy: number, dz: number): boolean => {
  const p = bvh.positions, tr = bvh.triangles
  const i0 = 3 * tr[3 * t]!, i1 = 3 * tr[3 * t + 1]!, i2 = 3 * tr[3 * t + 2]!
  const e1x = p[i1]! - p[i0]!, e1y = p[i1 + 1]! - p[i0 + 1]!, e1z = p[i1 + 2]! - p[i0 + 2]!
  const e2x = p[i2]! - p[i0]!, e2y = p[i2 + 1]! - p[i0 + 1]!, e2z = p[i2 + 2]! - p[i0 + 2]!
  const nx = e1y * e2z - e1z * e2y, ny = e1z * e2x - e1x * e2z, nz = e1x * e2y - e1y * e2x
  return nx * dx + ny * dy + nz * dz > 0
}

/**
 * Visits every triangle whose node box the ray (origin o, unit direction d)
 * crosses within `limit()`, nearest boxes first; `visit` answers whether to
 * stop. `limit` is read again at each node, so a closest-hit search shrinks it.
 */
const traverse = (
  bvh: Bvh,
  ox: number,
  oy: number,
  oz: number,
  dx: number,
  dy: number,
  dz: number,
  limit: () => number,
  visit: (t: number) => boolean,
  stack: Uint32Array
): void => {
  if (bvh.nodeCount === 0) return
  const ix = 1 / dx, iy = 1 / dy, iz = 1 / dz
  let top = 0
  stack[top++] = 0
  while (top > 0) {
    const node = stack[--top]!
    if (entry(bvh, node, ox, oy, oz, ix, iy, iz, limit()) === Infinity) continue
    const a = bvh.links[2 * node]!, b = bvh.links[2 * node + 1]!
    if ((b & LEAF) !== 0) {
      const n = b & ~LEAF
      for (let i = a; i < a + n; i++) if (visit(bvh.order[i]!)) return
      continue
    }
    const ta = entry(bvh, a, ox, oy, oz, ix, iy, iz, limit()), tb = entry(bvh, b, ox, oy, oz, ix, iy, iz, limit())
    // The nearer child is popped first.
    if (ta <= tb) {
      if (tb !== Infinity) stack[top++] = b
      if (ta !== Infinity) stack[top++] = a
    } else {
      if (ta !== Infinity) stack[top++] = a
      stack[top++] = b
    }
  }
}

/** Ray queries on one BVH; not reentrant (one traversal stack). */
export class RayCaster {
  private readonly stack: Uint32Array
  readonly bvh: Bvh
  constructor(bvh: Bvh) {
    this.bvh = bvh
    // The stack holds at most the tree's depth plus one; midpoint splits of doubles go at most ~2,100 levels deep before the count halving.
    this.stack = new Uint32Array(MAX_DEPTH)
  }

  /** The nearest triangle hit beyond `minDistance`, other than `skip`: its id and distance (id −1 when none). */
  closest(
    ox: number,
    oy: number,
    oz: number,
    dx: number,
    dy: number,
    dz: number,
    skip: number,
    minDistance: number
  ): { readonly triangle: number; readonly distance: number } {
    let best = Infinity, bestTriangle = -1
    traverse(this.bvh, ox, oy, oz, dx, dy, dz, () => best, (t) => {
      if (t === skip) return false
      const d = hitDistance(this.bvh, t, ox, oy, oz, dx, dy, dz)
      if (d > minDistance && d < best) {
        best = d
        bestTriangle = t
      }
      return false
    }, this.stack)
    return { triangle: bestTriangle, distance: best }
  }

  /** Whether the ray hits any triangle but `skip`, beyond `minDistance`. */
  any(ox: number, oy: number, oz: number, dx: number, dy: number, dz: number, skip: number, minDistance: number): boolean {
    let found = false
    traverse(this.bvh, ox, oy, oz, dx, dy, dz, () => Infinity, (t) => {
      if (t === skip) return false
      const distance = hitDistance(this.bvh, t, ox, oy, oz, dx, dy, dz)
      found = distance > minDistance && distance !== Infinity
      return found
    }, this.stack)
    return found
  }

  /** Calls `hit` for every triangle the ray crosses (any distance ≥ 0). */
  all(ox: number, oy: number, oz: number, dx: number, dy: number, dz: number, hit: (t: number) => void): void {
    traverse(this.bvh, ox, oy, oz, dx, dy, dz, () => Infinity, (t) => {
      if (hitDistance(this.bvh, t, ox, oy, oz, dx, dy, dz) !== Infinity) hit(t)
      return false
    }, this.stack)
  }
}
