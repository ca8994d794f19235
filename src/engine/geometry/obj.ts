/**
 * Wavefront OBJ: `v` vertices and `f` faces (`i`, `i/t`, `i//n`, `i/t/n`;
 * negative indices count back from the last vertex read). Faces of more
 * than three corners are split into a fan. Everything else (normals,
 * texture coordinates, groups, materials, lines) is ignored. A line that
 * ends in a backslash continues on the next (the OBJ specification's line
 * continuation; a comment does not continue). Units are not in the file: the caller's (modelFile.ts).
 *
 * A vertex is `v x y z`, `v x y z w` (exactly four numbers: the homogeneous
 * weight, the position is x/w, y/w, z/w), or five or more numbers: a
 * position followed by a colour (`v x y z r g b`, as MeshLab, Meshmixer
 * and scanners write it, or x y z w r g b in some extensions), whose
 * position is x, y, z and whose other numbers are not read (a colour may be
 * `nan`; it is not the geometry's).
 *
 * Triangles are counted as the faces are read: past `limits.maxTriangles`
 * (or three vertices a triangle) the file is refused there.
 */
import { type AnalysisLimits, DEFAULT_LIMITS, maxVertices, tooManyTriangles, tooManyVertices } from "./limits.ts"
import { GrowableFloats, GrowableIndices, type Mesh, ModelError, weld } from "./mesh.ts"

export const parseObj = (source: string, limits: AnalysisLimits = DEFAULT_LIMITS): Mesh => {
  const positions = new GrowableFloats(4096)
  const triangles = new GrowableIndices(4096)
  const maxCoordinates = 3 * maxVertices(limits)
  const maxIndices = 3 * limits.maxTriangles
  // A statement continued over several lines (each ending in a backslash), and the line it started on.
  let continued = ""
  let firstLine = 0
  // Line by line, without an array of every line (a 100 MB file has millions).
  for (let start = 0, n = 0; start <= source.length; n++) {
    let end = source.indexOf("\n", start)
    if (end < 0) end = source.length
    let line = source.slice(start, end).trim()
    start = end + 1
    // A comment ends at its line, backslash or not (a Windows path in a comment ends in one).
    if (line.endsWith("\\") && !(continued === "" && line.startsWith("#"))) {
      if (continued === "") firstLine = n
      continued += `${line.slice(0, -1)} `
      if (start <= source.length) continue
      line = ""
    }
    const at = continued === "" ? n : firstLine
    if (continued !== "") {
      line = (continued + line).trim()
      continued = ""
    }
    if (line === "" || line.startsWith("#")) continue
    const parts = line.split(/\s+/)
    const keyword = parts[0]
    if (keyword === "v") {
      if (parts.length < 4) throw new ModelError({ reason: `OBJ line ${at + 1}: a vertex needs x, y and z` })
      if (positions.length >= maxCoordinates) throw tooManyVertices(limits, `OBJ line ${at + 1}`)
      // Only a vertex of exactly four numbers has a weight; more are a colour after the position.
      const weighted = parts.length === 5
      const w = weighted ? Number(parts[4]) : 1
      if (weighted && (!Number.isFinite(w) || w === 0)) {
        throw new ModelError({ reason: `OBJ line ${at + 1}: the weight "${parts[4]}" is not a non-zero number` })
      }
      for (let k = 1; k <= 3; k++) {
        const value = Number(parts[k])
        if (!Number.isFinite(value)) throw new ModelError({ reason: `OBJ line ${at + 1}: "${parts[k]}" is not a coordinate` })
        positions.push(weighted ? value / w : value)
      }
    } else if (keyword === "f") {
      const vertexCount = positions.length / 3
      const corners = parts.slice(1).map((corner) => {
        const index = Number(corner.split("/")[0])
        if (!Number.isInteger(index) || index === 0) throw new ModelError({ reason: `OBJ line ${at + 1}: "${corner}" is not a vertex reference` })
        const resolved = index > 0 ? index - 1 : vertexCount + index
        if (resolved < 0 || resolved >= vertexCount) {
          throw new ModelError({ reason: `OBJ line ${at + 1}: vertex ${index} does not exist (${vertexCount} vertices so far)` })
        }
        return resolved
      })
      if (corners.length < 3) throw new ModelError({ reason: `OBJ line ${at + 1}: a face needs 3 vertices at least` })
      if (triangles.length + 3 * (corners.length - 2) > maxIndices) throw tooManyTriangles(limits, `OBJ line ${at + 1}`)
      for (let k = 1; k + 1 < corners.length; k++) {
        triangles.push(corners[0]!)
        triangles.push(corners[k]!)
        triangles.push(corners[k + 1]!)
      }
    }
  }
  if (triangles.length === 0) throw new ModelError({ reason: "the OBJ file has no faces" })
  return weld(positions.values(), triangles.values())
}
