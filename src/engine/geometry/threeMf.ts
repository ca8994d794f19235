/**
 * 3MF: a ZIP whose model part (named by `_rels/.rels`, else
 * `3D/3dmodel.model`) lists objects (meshes, or components: other objects
 * with a transform) and a build (items: objects with a transform). The
 * geometry is that of every build item, placed by its transform, in the
 * model's `unit` (converted to millimetres). Objects of type `support`,
 * `surface` and `other` are not part of the solid and are left out.
 * Components and items may name another model part of the archive
 * (`p:path`, production extension).
 *
 * The XML is read by a streaming SAX parser (saxes: a state machine, linear
 * in the input, no regular expressions over the document), fed chunk by
 * chunk as the ZIP entry inflates (zip.ts, which charges the unpacked
 * budget on the bytes produced). Every budget is checked before the memory
 * it guards is taken:
 *
 * - the triangles and vertices the parts define, as they are read;
 * - the triangles and vertices the build places, counted through the
 *   component instancing (each object's count is its own plus its
 *   components', memoised, with the depth and cycle check) before anything
 *   is placed: a few hundred bytes of nested components cannot fan out to
 *   millions of copies;
 * - no token (a comment, an attribute, a tag) may run longer than
 *   MAX_TOKEN characters: the parser accumulates them whole.
 */
import { SaxesParser, type SaxesTagPlain } from "saxes"
import { type AnalysisLimits, DEFAULT_LIMITS, maxVertices, tooManyTriangles, tooManyVertices } from "./limits.ts"
import { GrowableFloats, GrowableIndices, type Mesh, ModelError, weld } from "./mesh.ts"
import { readZip, streamEntry, type UnpackBudget, unpackBudget, type ZipEntry } from "./zip.ts"

/** Millimetres per model unit. */
export const UNITS: Readonly<Record<string, number>> = {
  micron: 0.001,
  millimeter: 1,
  centimeter: 10,
  inch: 25.4,
  foot: 304.8,
  meter: 1000
}

const MODEL_TYPE = "http://schemas.microsoft.com/3dmanufacturing/2013/01/3dmodel"
const DEFAULT_MODEL = "3D/3dmodel.model"
export const MAX_DEPTH = 32
/** The longest run of characters without a tag starting or ending (a comment, an attribute value, a tag). */
export const MAX_TOKEN = 16 * 1024 * 1024
const WRITE_SLICE = 1024 * 1024

/** A 3MF transform: m00 m01 m02 m10 m11 m12 m20 m21 m22 m30 m31 m32 (row vectors: p' = p·M). */
type Matrix = ReadonlyArray<number>
const IDENTITY: Matrix = [1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0]

/** `a` then `b`. */
const compose = (a: Matrix, b: Matrix): Matrix => {
  const out: Array<number> = []
  for (let r = 0; r < 4; r++) {
    for (let c = 0; c < 3; c++) {
      let sum = r === 3 ? b[9 + c]! : 0
      for (let k = 0; k < 3; k++) sum += a[r * 3 + k]! * b[k * 3 + c]!
      out.push(sum)
    }
  }
  return out
}

const determinant = (m: Matrix) => m[0]! * (m[4]! * m[8]! - m[5]! * m[7]!) - m[1]! * (m[3]! * m[8]! - m[5]! * m[6]!) + m[2]! * (m[3]! * m[7]! - m[4]! * m[6]!)

interface Reference {
  readonly objectId: string
  readonly transform: Matrix
  readonly path: string | undefined
}

interface ObjectDef {
  readonly type: string
  readonly vertices: GrowableFloats
  readonly triangles: GrowableIndices
  readonly components: Array<Reference>
}

interface ModelPart {
  readonly unit: number
  readonly objects: Map<string, ObjectDef>
  readonly items: Array<Reference>
}

/** What the parts read so far define, against the budgets. */
interface Defined {
  triangles: number
  vertices: number
}

const localName = (name: string) => name.slice(name.indexOf(":") + 1)

const XYZ = ["x", "y", "z"] as const
const CORNERS = ["v1", "v2", "v3"] as const

/**
 * An attribute by its local name (saxes decodes the entities): `x`, else a
 * prefixed `p:x`.
 */
const attribute = (tag: SaxesTagPlain, name: string): string | undefined => {
  const attributes = tag.attributes
  const plain = attributes[name]
  if (plain !== undefined) return plain
  let found: string | undefined
  for (const key in attributes) {
    if (key.length > name.length && key.endsWith(name) && localName(key) === name) found = attributes[key]
  }
  return found
}

const number = (where: string, name: string, value: string | undefined): number => {
  const parsed = value === undefined ? NaN : Number(value)
  // Number("") and Number("  ") are 0: an empty value is not a number.
  if (value === undefined || !Number.isFinite(parsed) || (parsed === 0 && value.trim() === "")) {
    throw new ModelError({ reason: `3MF ${where}: ${name} ${value === undefined ? "is missing" : `"${value}" is not a number`}` })
  }
  return parsed
}

const matrix = (where: string, value: string | undefined): Matrix => {
  if (value === undefined) return IDENTITY
  const values = value.trim().split(/\s+/).map(Number)
  if (values.length !== 12 || values.some((v) => !Number.isFinite(v))) {
    throw new ModelError({ reason: `3MF ${where}: transform "${value}" is not 12 numbers` })
  }
  return values
}

/**
 * Reads the XML of one ZIP entry with saxes, streamed: `onOpen` and
 * `onClose` get every element (a self-closing one both). A malformed
 * document is a ModelError naming the part.
 */
const readXml = (
  bytes: Uint8Array,
  entry: ZipEntry,
  budget: UnpackBudget,
  onOpen: (tag: SaxesTagPlain) => void,
  onClose: (name: string) => void
): void => {
  const parser = new SaxesParser<{ xmlns: false; position: false }>({ xmlns: false, position: false })
  const decoder = new TextDecoder()
  // Characters written so far, and the length of the chunk being written (where an error is, about).
  let fed = 0
  let writing = 0
  let lastEvent = 0
  let sawEvent = false
  parser.on("error", (error) => {
    const where = writing === 0 ? "at its end" : `within characters ${fed + 1}–${fed + writing}`
    throw new ModelError({ reason: `3MF ${entry.name} is not well-formed XML (${where}): ${error.message}` })
  })
  parser.on("opentag", (tag) => {
    sawEvent = true
    onOpen(tag)
  })
  parser.on("closetag", (tag) => {
    sawEvent = true
    onClose(tag.name)
  })
  // In slices of at most WRITE_SLICE characters (an inflated chunk can be megabytes), so the run without an event is measured closely.
  const write = (text: string) => {
    for (let at = 0; at < text.length; at += WRITE_SLICE) {
      const slice = at === 0 && text.length <= WRITE_SLICE ? text : text.slice(at, at + WRITE_SLICE)
      writing = slice.length
      parser.write(slice)
      fed += slice.length
      if (sawEvent) {
        lastEvent = fed
        sawEvent = false
      } else if (fed - lastEvent > MAX_TOKEN) {
        throw new ModelError({
          reason: `3MF ${entry.name}: more than ${MAX_TOKEN} characters without a tag (a comment, text or attribute that long is not a model)`
        })
      }
    }
  }
  streamEntry(bytes, entry, budget, (chunk) => write(decoder.decode(chunk, { stream: true })))
  write(decoder.decode())
  writing = 0
  parser.close()
}

const parseModelPart = (bytes: Uint8Array, entry: ZipEntry, budget: UnpackBudget, defined: Defined): ModelPart => {
  const limits = budget.limits
  const partName = entry.name
  const objects = new Map<string, ObjectDef>()
  const items: Array<Reference> = []
  let unit = 1
  let current: ObjectDef | undefined
  let currentId = ""
  let sawModel = false
  readXml(bytes, entry, budget, (tag) => {
    const name = localName(tag.name)
    switch (name) {
      case "model": {
        sawModel = true
        const declared = attribute(tag, "unit") ?? "millimeter"
        const scale = UNITS[declared]
        if (scale === undefined) {
          throw new ModelError({ reason: `3MF unit "${declared}" is unknown (expected one of ${Object.keys(UNITS).join(", ")})` })
        }
        unit = scale
        break
      }
      case "object": {
        currentId = attribute(tag, "id") ?? ""
        if (currentId === "") throw new ModelError({ reason: `3MF ${partName}: an object has no id` })
        current = { type: attribute(tag, "type") ?? "model", vertices: new GrowableFloats(), triangles: new GrowableIndices(), components: [] }
        objects.set(currentId, current)
        break
      }
      case "vertex": {
        if (current === undefined) break
        if (++defined.vertices > maxVertices(limits)) throw tooManyVertices(limits, `the 3MF ${partName} defines more`)
        for (const key of XYZ) {
          const value = attribute(tag, key)
          const parsed = Number(value)
          // The common case without building the message; `number` says what is wrong otherwise.
          if (value !== undefined && Number.isFinite(parsed) && (parsed !== 0 || value.trim() !== "")) current.vertices.push(parsed)
          else number(`object ${currentId}, vertex ${current.vertices.length / 3 + 1}`, key, value)
        }
        break
      }
      case "triangle": {
        if (current === undefined) break
        if (++defined.triangles > limits.maxTriangles) throw tooManyTriangles(limits, `the 3MF ${partName} defines more`)
        const first = current.triangles.length
        for (const key of CORNERS) {
          const value = attribute(tag, key)
          const index = Number(value)
          if (value !== undefined && Number.isInteger(index) && index >= 0 && (index !== 0 || value.trim() !== "")) {
            current.triangles.push(index)
            continue
          }
          const where = `object ${currentId}, triangle ${first / 3 + 1}`
          number(where, key, value)
          throw new ModelError({ reason: `3MF ${where}: ${key} "${value}" is not a vertex index` })
        }
        break
      }
      case "component": {
        if (current === undefined) break
        const where = `object ${currentId}, component ${current.components.length + 1}`
        const objectId = attribute(tag, "objectid")
        if (objectId === undefined) throw new ModelError({ reason: `3MF ${where}: objectid is missing` })
        current.components.push({ objectId, transform: matrix(where, attribute(tag, "transform")), path: attribute(tag, "path") })
        break
      }
      case "item": {
        const where = `build item ${items.length + 1}`
        const objectId = attribute(tag, "objectid")
        if (objectId === undefined) throw new ModelError({ reason: `3MF ${where}: objectid is missing` })
        items.push({ objectId, transform: matrix(where, attribute(tag, "transform")), path: attribute(tag, "path") })
        break
      }
    }
  }, (name) => {
    if (localName(name) === "object") current = undefined
  })
  if (!sawModel) throw new ModelError({ reason: `3MF ${partName} has no <model> element` })
  return { unit, objects, items }
}

/** The model part `_rels/.rels` names, else the usual one. */
const rootPart = (bytes: Uint8Array, entries: ReadonlyMap<string, ZipEntry>, budget: UnpackBudget): string => {
  const rels = entries.get("_rels/.rels")
  if (rels === undefined) return DEFAULT_MODEL
  let target: string | undefined
  readXml(bytes, rels, budget, (tag) => {
    if (target !== undefined || localName(tag.name) !== "Relationship") return
    const type = attribute(tag, "Type")
    const relTarget = attribute(tag, "Target")
    if (type === MODEL_TYPE && relTarget !== undefined) target = relTarget.replace(/^\//, "")
  }, () => {})
  return target ?? DEFAULT_MODEL
}

/** What an object places, through its components: triangles, vertices, and how deep its components nest. */
interface Placed {
  readonly triangles: number
  readonly vertices: number
  readonly height: number
}

const NOTHING: Placed = { triangles: 0, vertices: 0, height: 0 }

const nestTooDeep = () => new ModelError({ reason: `3MF components nest deeper than ${MAX_DEPTH} (a cycle?)` })

export const parse3mf = (bytes: Uint8Array, limits: AnalysisLimits = DEFAULT_LIMITS): Mesh => {
  const entries = readZip(bytes)
  const budget = unpackBudget(limits)
  const defined: Defined = { triangles: 0, vertices: 0 }
  const parts = new Map<string, ModelPart>()
  const partNamed = (name: string): ModelPart => {
    const known = parts.get(name)
    if (known !== undefined) return known
    const entry = entries.get(name)
    if (entry === undefined) throw new ModelError({ reason: `the 3MF archive has no model part ${name}` })
    const part = parseModelPart(bytes, entry, budget, defined)
    parts.set(name, part)
    return part
  }
  const root = rootPart(bytes, entries, budget)
  const model = partNamed(root)
  if (model.items.length === 0) throw new ModelError({ reason: "the 3MF build has no items" })

  const objectOf = (reference: Reference, inPart: string) => {
    const partName = reference.path?.replace(/^\//, "") ?? inPart
    const object = partNamed(partName).objects.get(reference.objectId)
    if (object === undefined) throw new ModelError({ reason: `3MF ${partName}: no object ${reference.objectId}` })
    return { partName, object }
  }

  // Count first: what each object places, memoised by part and id; `null` while being counted (a cycle).
  const counted = new Map<string, Placed | null>()
  const count = (reference: Reference, inPart: string, depth: number): Placed => {
    if (depth > MAX_DEPTH) throw nestTooDeep()
    const { object, partName } = objectOf(reference, inPart)
    if (object.type === "support" || object.type === "surface" || object.type === "other") return NOTHING
    const key = `${partName}\n${reference.objectId}`
    const known = counted.get(key)
    if (known === null) throw nestTooDeep()
    if (known !== undefined) {
      if (depth + known.height > MAX_DEPTH) throw nestTooDeep()
      return known
    }
    counted.set(key, null)
    const own = object.triangles.length > 0
    let triangles = object.triangles.length / 3
    let vertices = own ? object.vertices.length / 3 : 0
    let height = 0
    for (const component of object.components) {
      const placed = count(component, partName, depth + 1)
      triangles += placed.triangles
      vertices += placed.vertices
      height = Math.max(height, placed.height + 1)
    }
    const placed = { triangles, vertices, height }
    counted.set(key, placed)
    return placed
  }
  let totalTriangles = 0
  let totalVertices = 0
  for (const item of model.items) {
    const placed = count(item, root, 0)
    totalTriangles += placed.triangles
    totalVertices += placed.vertices
  }
  if (totalTriangles > limits.maxTriangles) throw tooManyTriangles(limits, `the 3MF build places ${totalTriangles}`)
  if (totalVertices > maxVertices(limits)) throw tooManyVertices(limits, `the 3MF build places ${totalVertices}`)
  if (totalTriangles === 0) throw new ModelError({ reason: "the 3MF build has no mesh triangles" })

  // Then place, into arrays of exactly the counted size.
  const positions = new Float64Array(3 * totalVertices)
  const triangles = new Uint32Array(3 * totalTriangles)
  let vertexAt = 0
  let triangleAt = 0
  const place = (reference: Reference, inPart: string, transform: Matrix) => {
    const { object, partName } = objectOf(reference, inPart)
    if (object.type === "support" || object.type === "surface" || object.type === "other") return
    const at = compose(reference.transform, transform)
    for (const component of object.components) place(component, partName, at)
    const vertexCount = object.vertices.length / 3
    if (object.triangles.length === 0) return
    const base = vertexAt
    const v = object.vertices.data
    for (let i = 0; i < vertexCount; i++) {
      const x = v[3 * i]!, y = v[3 * i + 1]!, z = v[3 * i + 2]!
      positions[3 * vertexAt] = x * at[0]! + y * at[3]! + z * at[6]! + at[9]!
      positions[3 * vertexAt + 1] = x * at[1]! + y * at[4]! + z * at[7]! + at[10]!
      positions[3 * vertexAt + 2] = x * at[2]! + y * at[5]! + z * at[8]! + at[11]!
      vertexAt++
    }
    // A mirroring transform turns the triangles inside out: keep them facing outwards.
    const mirrored = determinant(at) < 0
    const t = object.triangles.data
    const length = object.triangles.length
    for (let i = 0; i < length; i += 3) {
      for (let k = 0; k < 3; k++) {
        if (t[i + k]! >= vertexCount) {
          throw new ModelError({
            reason: `3MF object ${reference.objectId}, triangle ${i / 3 + 1}: vertex ${t[i + k]} does not exist (${vertexCount} vertices)`
          })
        }
      }
      const o = 3 * triangleAt++
      triangles[o] = base + t[i]!
      triangles[o + 1] = base + t[mirrored ? i + 2 : i + 1]!
      triangles[o + 2] = base + t[mirrored ? i + 1 : i + 2]!
    }
  }
  for (const item of model.items) place(item, root, IDENTITY)
  const scale = model.unit
  for (let i = 0; i < positions.length; i++) positions[i] = positions[i]! * scale
  return weld(positions, triangles)
}
