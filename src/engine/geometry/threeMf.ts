/**
 * 3MF: a ZIP whose model part (named by `_rels/.rels`, else
 * `3D/3dmodel.model`) lists objects (meshes, or components: other objects
 * with a transform) and a build (items: objects with a transform). The
 * geometry is that of every build item, placed by its transform, in the
 * model's `unit` (converted to millimetres). Objects of type `support`,
 * `surface` and `other` are not part of the solid and are left out.
 * Components and items may name another model part of the archive
 * (`p:path`, production extension).
 */
import { type Mesh, ModelError, weld } from "./mesh.ts"
import { entryBytes, readZip, type ZipEntry } from "./zip.ts"

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
const MAX_DEPTH = 32
/** What the archive's parts may unpack to, in all. */
const UNPACKED_LIMIT = 1024 * 1024 * 1024

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

const determinant = (m: Matrix) =>
  m[0]! * (m[4]! * m[8]! - m[5]! * m[7]!) - m[1]! * (m[3]! * m[8]! - m[5]! * m[6]!) + m[2]! * (m[3]! * m[7]! - m[4]! * m[6]!)

interface Reference {
  readonly objectId: string
  readonly transform: Matrix
  readonly path: string | undefined
}

interface ObjectDef {
  readonly type: string
  readonly vertices: Array<number>
  readonly triangles: Array<number>
  readonly components: Array<Reference>
}

interface ModelPart {
  readonly unit: number
  readonly objects: Map<string, ObjectDef>
  readonly items: Array<Reference>
}

const ATTRIBUTE = /([\w.:-]+)\s*=\s*(?:"([^"]*)"|'([^']*)')/g
const TAG = /<(\/?)([A-Za-z_][\w.:-]*)((?:[^>"']|"[^"]*"|'[^']*')*?)(\/?)>/g

const localName = (name: string) => name.slice(name.indexOf(":") + 1)

const decodeEntities = (value: string) =>
  value.replace(/&(lt|gt|amp|quot|apos|#\d+|#x[0-9a-fA-F]+);/g, (_, entity: string) => {
    if (entity === "lt") return "<"
    if (entity === "gt") return ">"
    if (entity === "amp") return "&"
    if (entity === "quot") return "\""
    if (entity === "apos") return "'"
    return String.fromCodePoint(entity.startsWith("#x") ? parseInt(entity.slice(2), 16) : parseInt(entity.slice(1), 10))
  })

/** Attributes by local name. */
const attributes = (text: string): Record<string, string> => {
  const out: Record<string, string> = {}
  ATTRIBUTE.lastIndex = 0
  for (let match = ATTRIBUTE.exec(text); match !== null; match = ATTRIBUTE.exec(text)) {
    out[localName(match[1]!)] = decodeEntities(match[2] ?? match[3] ?? "")
  }
  return out
}

const number = (where: string, name: string, value: string | undefined): number => {
  const parsed = value === undefined ? NaN : Number(value)
  if (value === undefined || value.trim() === "" || !Number.isFinite(parsed)) {
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

const parseModelPart = (xml: string, partName: string): ModelPart => {
  const objects = new Map<string, ObjectDef>()
  const items: Array<Reference> = []
  let unit = 1
  let current: ObjectDef | undefined
  let currentId = ""
  let sawModel = false
  const body = xml.replace(/<!--[\s\S]*?-->/g, "").replace(/<!\[CDATA\[[\s\S]*?\]\]>/g, "")
  TAG.lastIndex = 0
  for (let match = TAG.exec(body); match !== null; match = TAG.exec(body)) {
    const closing = match[1] === "/"
    const name = localName(match[2]!)
    if (closing) {
      if (name === "object") current = undefined
      continue
    }
    switch (name) {
      case "model": {
        sawModel = true
        const declared = attributes(match[3]!).unit ?? "millimeter"
        const scale = UNITS[declared]
        if (scale === undefined) {
          throw new ModelError({ reason: `3MF unit "${declared}" is unknown (expected one of ${Object.keys(UNITS).join(", ")})` })
        }
        unit = scale
        break
      }
      case "object": {
        const attrs = attributes(match[3]!)
        currentId = attrs.id ?? ""
        if (currentId === "") throw new ModelError({ reason: `3MF ${partName}: an object has no id` })
        current = { type: attrs.type ?? "model", vertices: [], triangles: [], components: [] }
        objects.set(currentId, current)
        if (match[4] === "/") current = undefined
        break
      }
      case "vertex": {
        if (current === undefined) break
        const attrs = attributes(match[3]!)
        const where = `object ${currentId}, vertex ${current.vertices.length / 3 + 1}`
        current.vertices.push(number(where, "x", attrs.x), number(where, "y", attrs.y), number(where, "z", attrs.z))
        break
      }
      case "triangle": {
        if (current === undefined) break
        const attrs = attributes(match[3]!)
        const where = `object ${currentId}, triangle ${current.triangles.length / 3 + 1}`
        for (const key of ["v1", "v2", "v3"]) {
          const index = number(where, key, attrs[key])
          if (!Number.isInteger(index) || index < 0) throw new ModelError({ reason: `3MF ${where}: ${key} "${attrs[key]}" is not a vertex index` })
          current.triangles.push(index)
        }
        break
      }
      case "component": {
        if (current === undefined) break
        const attrs = attributes(match[3]!)
        const where = `object ${currentId}, component ${current.components.length + 1}`
        if (attrs.objectid === undefined) throw new ModelError({ reason: `3MF ${where}: objectid is missing` })
        current.components.push({ objectId: attrs.objectid, transform: matrix(where, attrs.transform), path: attrs.path })
        break
      }
      case "item": {
        const attrs = attributes(match[3]!)
        const where = `build item ${items.length + 1}`
        if (attrs.objectid === undefined) throw new ModelError({ reason: `3MF ${where}: objectid is missing` })
        items.push({ objectId: attrs.objectid, transform: matrix(where, attrs.transform), path: attrs.path })
        break
      }
    }
  }
  if (!sawModel) throw new ModelError({ reason: `3MF ${partName} has no <model> element` })
  return { unit, objects, items }
}

/** The model part `_rels/.rels` names, else the usual one. */
const rootPart = (bytes: Uint8Array, entries: ReadonlyMap<string, ZipEntry>): string => {
  const rels = entries.get("_rels/.rels")
  if (rels !== undefined) {
    const xml = new TextDecoder().decode(entryBytes(bytes, rels, UNPACKED_LIMIT))
    TAG.lastIndex = 0
    for (let match = TAG.exec(xml); match !== null; match = TAG.exec(xml)) {
      if (localName(match[2]!) !== "Relationship") continue
      const attrs = attributes(match[3]!)
      if (attrs.Type === MODEL_TYPE && attrs.Target !== undefined) return attrs.Target.replace(/^\//, "")
    }
  }
  return DEFAULT_MODEL
}

export const parse3mf = (bytes: Uint8Array): Mesh => {
  const entries = readZip(bytes)
  let unpacked = 0
  const parts = new Map<string, ModelPart>()
  const partNamed = (name: string): ModelPart => {
    const known = parts.get(name)
    if (known !== undefined) return known
    const entry = entries.get(name)
    if (entry === undefined) throw new ModelError({ reason: `the 3MF archive has no model part ${name}` })
    unpacked += entry.size
    const content = entryBytes(bytes, entry, UNPACKED_LIMIT - unpacked + entry.size)
    const part = parseModelPart(new TextDecoder().decode(content), name)
    parts.set(name, part)
    return part
  }
  const root = rootPart(bytes, entries)
  const model = partNamed(root)
  if (model.items.length === 0) throw new ModelError({ reason: "the 3MF build has no items" })

  const positions: Array<number> = []
  const triangles: Array<number> = []
  const place = (reference: Reference, inPart: string, transform: Matrix, depth: number) => {
    if (depth > MAX_DEPTH) throw new ModelError({ reason: `3MF components nest deeper than ${MAX_DEPTH} (a cycle?)` })
    const partName = reference.path?.replace(/^\//, "") ?? inPart
    const object = partNamed(partName).objects.get(reference.objectId)
    if (object === undefined) throw new ModelError({ reason: `3MF ${partName}: no object ${reference.objectId}` })
    if (object.type === "support" || object.type === "surface" || object.type === "other") return
    const at = compose(reference.transform, transform)
    for (const component of object.components) place(component, partName, at, depth + 1)
    const vertexCount = object.vertices.length / 3
    if (object.triangles.length === 0) return
    const base = positions.length / 3
    const v = object.vertices
    for (let i = 0; i < vertexCount; i++) {
      const x = v[3 * i]!, y = v[3 * i + 1]!, z = v[3 * i + 2]!
      positions.push(
        x * at[0]! + y * at[3]! + z * at[6]! + at[9]!,
        x * at[1]! + y * at[4]! + z * at[7]! + at[10]!,
        x * at[2]! + y * at[5]! + z * at[8]! + at[11]!
      )
    }
    // A mirroring transform turns the triangles inside out: keep them facing outwards.
    const mirrored = determinant(at) < 0
    const t = object.triangles
    for (let i = 0; i < t.length; i += 3) {
      for (let k = 0; k < 3; k++) {
        if (t[i + k]! >= vertexCount) {
          throw new ModelError({ reason: `3MF object ${reference.objectId}, triangle ${i / 3 + 1}: vertex ${t[i + k]} does not exist (${vertexCount} vertices)` })
        }
      }
      if (mirrored) triangles.push(base + t[i]!, base + t[i + 2]!, base + t[i + 1]!)
      else triangles.push(base + t[i]!, base + t[i + 1]!, base + t[i + 2]!)
    }
  }
  for (const item of model.items) place(item, root, IDENTITY, 0)
  if (triangles.length === 0) throw new ModelError({ reason: "the 3MF build has no mesh triangles" })
  const scale = model.unit
  for (let i = 0; i < positions.length; i++) positions[i] = positions[i]! * scale
  return weld(positions, Uint32Array.from(triangles))
}
