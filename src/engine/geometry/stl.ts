/**
 * STL, binary and ASCII. Units are not in the file: the caller's (modelFile.ts
 * converts the coordinates to millimetres). Facet normals are ignored (the
 * vertex order says which side is out); vertices with equal coordinates are
 * welded, so watertightness can be checked.
 */
import { type AnalysisLimits, DEFAULT_LIMITS, tooManyTriangles } from "./limits.ts"
import { GrowableFloats, type Mesh, ModelError, VertexWelder } from "./mesh.ts"

const HEADER = 80
const RECORD = 50

/** Whether the bytes are a binary STL: the triangle count of its header matches the size exactly. */
export const isBinaryStl = (bytes: Uint8Array) =>
  bytes.length >= HEADER + 4 && HEADER + 4 + RECORD * new DataView(bytes.buffer, bytes.byteOffset, bytes.length).getUint32(HEADER, true) === bytes.length

const startsWithSolid = (bytes: Uint8Array) => {
  let i = 0
  while (i < bytes.length && (bytes[i] === 0x20 || bytes[i] === 0x09 || bytes[i] === 0x0a || bytes[i] === 0x0d)) i++
  return new TextDecoder().decode(bytes.subarray(i, i + 5)).toLowerCase() === "solid"
}

/** The mesh of an STL file, binary or ASCII; over `limits.maxTriangles` it is refused before the mesh is built. */
export const parseStl = (bytes: Uint8Array, limits: AnalysisLimits = DEFAULT_LIMITS): Mesh => {
  if (isBinaryStl(bytes)) return parseBinaryStl(bytes, limits)
  if (startsWithSolid(bytes)) return parseAsciiStl(new TextDecoder().decode(bytes), limits)
  if (bytes.length < HEADER + 4) {
    throw new ModelError({ reason: `the STL file is ${bytes.length} bytes: too short for a binary STL (84 bytes at least) and not ASCII (no "solid")` })
  }
  const count = new DataView(bytes.buffer, bytes.byteOffset, bytes.length).getUint32(HEADER, true)
  throw new ModelError({
    reason: `the binary STL header says ${count} triangles (${
      HEADER + 4 + RECORD * count
    } bytes) but the file has ${bytes.length} bytes (truncated or not an STL)`
  })
}

export const parseBinaryStl = (bytes: Uint8Array, limits: AnalysisLimits = DEFAULT_LIMITS): Mesh => {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length)
  const count = view.getUint32(HEADER, true)
  // The header's count, checked before anything is allocated for it.
  if (count > limits.maxTriangles) throw tooManyTriangles(limits, `the binary STL header says ${count}`)
  const welder = new VertexWelder(count * 3)
  const triangles = new Uint32Array(count * 3)
  for (let t = 0; t < count; t++) {
    // 12 bytes of normal, then three vertices of three float32.
    let offset = HEADER + 4 + RECORD * t + 12
    for (let k = 0; k < 3; k++, offset += 12) {
      const x = view.getFloat32(offset, true)
      const y = view.getFloat32(offset + 4, true)
      const z = view.getFloat32(offset + 8, true)
      if (!Number.isFinite(x) || !Number.isFinite(y) || !Number.isFinite(z)) {
        throw new ModelError({ reason: `binary STL triangle ${t + 1} has a coordinate that is not a finite number` })
      }
      triangles[3 * t + k] = welder.add(x, y, z)
    }
  }
  return { positions: welder.positions(), triangles }
}

const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/

export const parseAsciiStl = (source: string, limits: AnalysisLimits = DEFAULT_LIMITS): Mesh => {
  // Token by token (no array of every token: a 100 MB file has tens of millions).
  const TOKEN = /\S+/g
  const next = () => TOKEN.exec(source)?.[0]
  const corners = new GrowableFloats(4096)
  // Corners of the triangles the budget allows (vertices outside a facet count too).
  const maxCorners = 9 * limits.maxTriangles
  let facet = 0
  let inLoop = 0
  for (let token = next(); token !== undefined; token = next()) {
    const word = token.toLowerCase()
    if (word === "outer") {
      facet++
      if (facet > limits.maxTriangles) throw tooManyTriangles(limits, "the ASCII STL has more facets")
      inLoop = 0
    } else if (word === "vertex") {
      if (corners.length >= maxCorners) throw tooManyTriangles(limits, "the ASCII STL has more vertices than that many facets have")
      for (let k = 0; k < 3; k++) {
        const value = next()
        if (value === undefined || !NUMBER.test(value)) {
          throw new ModelError({ reason: `ASCII STL facet ${facet}: "vertex" must be followed by three numbers, got "${value ?? "end of file"}"` })
        }
        corners.push(Number(value))
      }
      inLoop++
    } else if (word === "endloop") {
      if (inLoop !== 3) throw new ModelError({ reason: `ASCII STL facet ${facet} has ${inLoop} vertices; a facet has 3` })
    }
  }
  if (corners.length === 0) throw new ModelError({ reason: "the ASCII STL file has no facets" })
  if (corners.length % 9 !== 0) throw new ModelError({ reason: "the ASCII STL file ends inside a facet" })
  const c = corners.values()
  const welder = new VertexWelder(c.length / 3)
  const triangles = new Uint32Array(c.length / 3)
  for (let v = 0; v < triangles.length; v++) triangles[v] = welder.add(c[3 * v]!, c[3 * v + 1]!, c[3 * v + 2]!)
  return { positions: welder.positions(), triangles }
}
