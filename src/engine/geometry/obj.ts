/**
 * Wavefront OBJ: `v x y z [w]` vertices and `f` faces (`i`, `i/t`, `i//n`,
 * `i/t/n`; negative indices count back from the last vertex read). Faces
 * of more than three corners are split into a fan. Everything else
 * (normals, texture coordinates, groups, materials, lines) is ignored.
 * Units are not in the file: millimetres.
 */
import { type Mesh, ModelError, weld } from "./mesh.ts"

export const parseObj = (source: string): Mesh => {
  const positions: Array<number> = []
  const triangles: Array<number> = []
  const lines = source.split(/\r?\n/)
  for (let n = 0; n < lines.length; n++) {
    const line = lines[n]!.trim()
    if (line === "" || line.startsWith("#")) continue
    const parts = line.split(/\s+/)
    const keyword = parts[0]
    if (keyword === "v") {
      if (parts.length < 4) throw new ModelError({ reason: `OBJ line ${n + 1}: a vertex needs x, y and z` })
      const w = parts.length > 4 ? Number(parts[4]) : 1
      for (let k = 1; k <= 3; k++) {
        const value = Number(parts[k])
        if (!Number.isFinite(value) || !Number.isFinite(w) || w === 0) {
          throw new ModelError({ reason: `OBJ line ${n + 1}: "${parts[k]}" is not a coordinate` })
        }
        positions.push(value / w)
      }
    } else if (keyword === "f") {
      const vertexCount = positions.length / 3
      const corners = parts.slice(1).map((corner) => {
        const index = Number(corner.split("/")[0])
        if (!Number.isInteger(index) || index === 0) throw new ModelError({ reason: `OBJ line ${n + 1}: "${corner}" is not a vertex reference` })
        const resolved = index > 0 ? index - 1 : vertexCount + index
        if (resolved < 0 || resolved >= vertexCount) {
          throw new ModelError({ reason: `OBJ line ${n + 1}: vertex ${index} does not exist (${vertexCount} vertices so far)` })
        }
        return resolved
      })
      if (corners.length < 3) throw new ModelError({ reason: `OBJ line ${n + 1}: a face needs 3 vertices at least` })
      for (let k = 1; k + 1 < corners.length; k++) triangles.push(corners[0]!, corners[k]!, corners[k + 1]!)
    }
  }
  if (triangles.length === 0) throw new ModelError({ reason: "the OBJ file has no faces" })
  return weld(positions, Uint32Array.from(triangles))
}
