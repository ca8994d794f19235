/**
 * 3MF (docs/geometry.md, "3MF: the rules read and enforced"): a ZIP
 * (zip.ts) whose model part (named by `_rels/.rels`, else
 * `3D/3dmodel.model`) lists objects (meshes, or components: other objects
 * with a transform) and a build (items: objects with a transform). The
 * geometry is that of every build item, placed by its transform, in the
 * model's `unit` (converted to millimetres). Mesh objects of type `support`,
 * `solidsupport`, `surface` and `other` are not part of the part and are
 * left out; an object with components is placed whatever its type (the core
 * specification ignores it: its components' types count). Components and
 * items may name another model part of the archive (`p:path`, production
 * extension).
 *
 * Elements and attributes count only in the namespaces read: the core's
 * (or none, for a model that declares no namespace), and the production
 * extension's `path`; what other namespaces hold is ignored, as the core
 * specification requires (2.3.3.1). A model part whose
 * `requiredextensions` names an extension this reader does not implement
 * is refused, naming it (2.3.1: a consumer must not misread it); the
 * extensions whose content is not geometry (materials and properties,
 * triangle sets) and the production extension are read. Object ids must be
 * unique within a part (3.4.2).
 *
 * The XML is read as the ZIP entry inflates (xmlPart.ts; zip.ts charges
 * the unpacked budget on the bytes produced). Every budget is checked
 * before the memory it guards is taken:
 *
 * - the triangles and vertices the parts define, as they are read;
 * - the triangles and vertices the build places, counted through the
 *   component instancing (each object's count is its own plus its
 *   components', memoised, with the depth and cycle check) before anything
 *   is placed: a few hundred bytes of nested components cannot fan out to
 *   millions of copies.
 */
import { MILLIMETRES_PER_UNIT, type ModelUnit, THREE_MF_UNITS } from "../../domain/ModelUnits.ts"
import { type AnalysisLimits, DEFAULT_LIMITS, maxVertices, tooManyTriangles, tooManyVertices } from "./limits.ts"
import { GrowableFloats, GrowableIndices, type Mesh, ModelError, weld } from "./mesh.ts"
import { attribute, type Element, namespaceOf, prefixedAttribute, readXml } from "./xmlPart.ts"
import { readZip, type UnpackBudget, unpackBudget, type ZipEntry } from "./zip.ts"

const START_PART = "http://schemas.microsoft.com/3dmanufacturing/2013/01/3dmodel"
const DEFAULT_MODEL = "3D/3dmodel.model"
export const MAX_DEPTH = 32

/** The core namespace (3MF core specification, appendix C.3). */
export const CORE_NAMESPACE = "http://schemas.microsoft.com/3dmanufacturing/core/2015/02"
export const PRODUCTION_NAMESPACE = "http://schemas.microsoft.com/3dmanufacturing/production/2015/06"

/**
 * The extensions a model part may require: those this reader implements
 * (production: `p:path`), and those whose content the geometry does not
 * depend on, which the reader ignores as it ignores any namespace.
 */
export const READ_EXTENSIONS: Readonly<Record<string, string>> = {
  [CORE_NAMESPACE]: "core",
  [PRODUCTION_NAMESPACE]: "production (components and items in other model parts, by p:path; UUIDs are not geometry)",
  "http://schemas.microsoft.com/3dmanufacturing/material/2015/02": "materials and properties (colours, textures, composites: not geometry)",
  "http://schemas.microsoft.com/3dmanufacturing/trianglesets/2021/07": "triangle sets (named groups of triangles: not geometry)"
}

/** The mesh of a 3MF, in millimetres, and the unit the model states. */
export interface ThreeMfModel {
  readonly mesh: Mesh
  readonly unit: ModelUnit
}

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
  readonly unit: ModelUnit
  readonly objects: Map<string, ObjectDef>
  readonly items: Array<Reference>
}

/** What the parts read so far define, against the budgets. */
interface Defined {
  triangles: number
  vertices: number
}

const XYZ = ["x", "y", "z"] as const
const CORNERS = ["v1", "v2", "v3"] as const

/** Mesh objects of these types are not the part (supports, open surfaces, other). */
const NOT_THE_PART = new Set(["support", "solidsupport", "surface", "other"])

/** Whether an element is the core's: in its namespace, or in none (a model that declares no namespace). */
const isCore = (element: Element) => element.namespace === CORE_NAMESPACE || element.namespace === undefined

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
 * The `requiredextensions` of a `<model>` (namespace prefixes declared on
 * it), each one this reader reads; otherwise the refusal naming it.
 */
const checkRequiredExtensions = (partName: string, model: Element) => {
  const required = attribute(model, "requiredextensions", model.namespace)?.trim()
  if (required === undefined || required === "") return
  for (const prefix of required.split(/\s+/)) {
    const namespace = namespaceOf(model.scope, `${prefix}:x`)
    if (namespace === undefined) {
      throw new ModelError({
        reason: `3MF ${partName}: requiredextensions names the prefix "${prefix}", which the model does not declare (3MF core specification 2.3.1)`
      })
    }
    if (READ_EXTENSIONS[namespace] === undefined) {
      throw new ModelError({
        type: "UnsupportedModelExtension",
        reason: `3MF ${partName} requires the extension "${prefix}" (${namespace}), which this reader does not implement ` +
          "(3MF core specification 2.3.1: a consumer must not read a model whose required extensions it does not support)"
      })
    }
  }
}

const parseModelPart = (bytes: Uint8Array, entry: ZipEntry, budget: UnpackBudget, defined: Defined): ModelPart => {
  const limits = budget.limits
  const partName = entry.name
  const objects = new Map<string, ObjectDef>()
  const items: Array<Reference> = []
  let unit: ModelUnit = "mm"
  let current: ObjectDef | undefined
  let currentId = ""
  let sawModel = false
  readXml(bytes, entry, budget, (element) => {
    if (!isCore(element)) return
    const namespace = element.namespace
    switch (element.name) {
      case "model": {
        sawModel = true
        checkRequiredExtensions(partName, element)
        const declared = attribute(element, "unit", namespace) ?? "millimeter"
        const read = THREE_MF_UNITS[declared]
        if (read === undefined) {
          throw new ModelError({ reason: `3MF unit "${declared}" is unknown (expected one of ${Object.keys(THREE_MF_UNITS).join(", ")})` })
        }
        unit = read
        break
      }
      case "object": {
        currentId = attribute(element, "id", namespace) ?? ""
        if (currentId === "") throw new ModelError({ reason: `3MF ${partName}: an object has no id` })
        if (objects.has(currentId)) {
          throw new ModelError({
            reason: `3MF ${partName}: object id ${currentId} is defined twice (3MF core specification 3.4.2: resource ids must be unique)`
          })
        }
        current = {
          type: attribute(element, "type", namespace) ?? "model",
          vertices: new GrowableFloats(),
          triangles: new GrowableIndices(),
          components: []
        }
        objects.set(currentId, current)
        break
      }
      case "vertex": {
        if (current === undefined) break
        if (++defined.vertices > maxVertices(limits)) throw tooManyVertices(limits, `the 3MF ${partName} defines more`)
        const attributes = element.attributes
        for (const key of XYZ) {
          const value = attributes[key] ?? attribute(element, key, namespace)
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
        const attributes = element.attributes
        for (const key of CORNERS) {
          const value = attributes[key] ?? attribute(element, key, namespace)
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
        const objectId = attribute(element, "objectid", namespace)
        if (objectId === undefined) throw new ModelError({ reason: `3MF ${where}: objectid is missing` })
        current.components.push({
          objectId,
          transform: matrix(where, attribute(element, "transform", namespace)),
          path: prefixedAttribute(element, "path", PRODUCTION_NAMESPACE)
        })
        break
      }
      case "item": {
        const where = `build item ${items.length + 1}`
        const objectId = attribute(element, "objectid", namespace)
        if (objectId === undefined) throw new ModelError({ reason: `3MF ${where}: objectid is missing` })
        items.push({
          objectId,
          transform: matrix(where, attribute(element, "transform", namespace)),
          path: prefixedAttribute(element, "path", PRODUCTION_NAMESPACE)
        })
        break
      }
    }
  }, (name) => {
    if (name === "object") current = undefined
  })
  if (!sawModel) throw new ModelError({ reason: `3MF ${partName} has no <model> element (in the 3MF core namespace)` })
  return { unit, objects, items }
}

/** The model part `_rels/.rels` names (its StartPart relationship), else the usual one. */
const rootPart = (bytes: Uint8Array, entries: ReadonlyMap<string, ZipEntry>, budget: UnpackBudget): string => {
  const rels = entries.get("_rels/.rels")
  if (rels === undefined) return DEFAULT_MODEL
  let target: string | undefined
  readXml(bytes, rels, budget, (element) => {
    if (target !== undefined || element.name !== "Relationship") return
    const type = attribute(element, "Type", element.namespace)
    const relTarget = attribute(element, "Target", element.namespace)
    if (type === START_PART && relTarget !== undefined) target = relTarget.replace(/^\//, "")
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

/** A mesh object that is not the part: left out (an object with components is placed whatever its type). */
const leftOut = (object: ObjectDef) => object.components.length === 0 && NOT_THE_PART.has(object.type)

export const parse3mf = (bytes: Uint8Array, limits: AnalysisLimits = DEFAULT_LIMITS): ThreeMfModel => {
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
    if (leftOut(object)) return NOTHING
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
    if (leftOut(object)) return
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
    // A mirroring transform turns the triangles inside out: keep them facing outwards (3.3: the volume keeps its sign).
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
  const scale = MILLIMETRES_PER_UNIT[model.unit]
  if (scale !== 1) { for (let i = 0; i < positions.length; i++) positions[i] = positions[i]! * scale }
  return { mesh: weld(positions, triangles), unit: model.unit }
}
