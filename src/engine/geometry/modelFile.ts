/**
 * A model file's geometry, synchronously: the format from the file name's
 * extension (else from the content), checks that the content is that
 * format, the mesh in millimetres (STL and OBJ in the unit the caller
 * states, millimetres unless stated; a 3MF in its own, which a stated unit
 * must not contradict), and its measures and shape distribution, within the
 * budgets of `limits` (limits.ts).
 *
 * No Effect here: this is what the analysis workers load (analysisWorker.ts),
 * and they start faster without it. model.ts wraps it for the engine.
 */
import { DEFAULT_MODEL_UNIT, MILLIMETRES_PER_UNIT, type ModelUnit } from "../../domain/ModelUnits.ts"
import { type AnalysisLimits, DEFAULT_LIMITS } from "./limits.ts"
import { type AnalysedGeometry, analyseWithDfm, type Mesh, ModelError } from "./mesh.ts"
import { parseObj } from "./obj.ts"
import { isBinaryStl, parseStl } from "./stl.ts"
import { parse3mf } from "./threeMf.ts"
import { isZip } from "./zip.ts"

export type ModelFormat = "stl" | "3mf" | "obj"

const FORMATS: ReadonlyArray<ModelFormat> = ["stl", "3mf", "obj"]

const extensionOf = (fileName: string | null | undefined): string | undefined => {
  const match = /\.([A-Za-z0-9]+)$/.exec(fileName ?? "")
  return match?.[1]?.toLowerCase()
}

const head = (bytes: Uint8Array) => new TextDecoder().decode(bytes.subarray(0, 512)).replace(/^\uFEFF/, "").trimStart()

/** The format of the bytes by their content alone, if it is clear. */
const sniff = (bytes: Uint8Array): ModelFormat | undefined => {
  if (isZip(bytes)) return "3mf"
  if (isBinaryStl(bytes)) return "stl"
  const text = head(bytes)
  if (/^solid\b/i.test(text)) return "stl"
  if (/^(v|vn|vt|f|o|g|mtllib|usemtl|s)\s/m.test(text)) return "obj"
  return undefined
}

/** Content that is plainly not a model: what a misconfigured file host answers. */
const notAModel = (bytes: Uint8Array): string | undefined => {
  if (bytes.length === 0) return "the file is empty"
  const text = head(bytes).toLowerCase()
  if (text.startsWith("<!doctype html") || text.startsWith("<html")) return "the file is an HTML page, not a model"
  if (text.startsWith("{") || text.startsWith("[")) {
    try {
      JSON.parse(new TextDecoder().decode(bytes))
      return "the file is JSON, not a model"
    } catch {
      return undefined
    }
  }
  return undefined
}

/** A model file as read: its mesh, in millimetres, and the unit its coordinates were read in. */
export interface ReadModel {
  readonly mesh: Mesh
  readonly unit: ModelUnit
}

/** The coordinates in millimetres: multiplied in place (the readers' own arrays). */
const inMillimetres = (mesh: Mesh, unit: ModelUnit): Mesh => {
  const scale = MILLIMETRES_PER_UNIT[unit]
  if (scale === 1) return mesh
  const positions = mesh.positions
  for (let i = 0; i < positions.length; i++) positions[i] = positions[i]! * scale
  return mesh
}

/** The 3MF's own unit, which a stated one may repeat and must not contradict. */
const ownUnit = (unit: ModelUnit, stated: ModelUnit | undefined): ModelUnit => {
  if (stated !== undefined && stated !== unit) {
    throw new ModelError({
      type: "ModelUnitConflict",
      reason: `"${stated}" contradicts the 3MF's own unit, "${unit}" (its model's unit attribute, which wins): state "${unit}" or leave the unit out`
    })
  }
  return unit
}

/**
 * The mesh of a model file in millimetres, and the unit it was read in;
 * fails with what is wrong when it cannot be read. `stated` is the unit the
 * caller says the file is in (STL and OBJ have none of their own).
 */
export const parseModel = (
  bytes: Uint8Array,
  fileName: string | null | undefined,
  limits: AnalysisLimits = DEFAULT_LIMITS,
  stated?: ModelUnit
): ReadModel => {
  const junk = notAModel(bytes)
  if (junk !== undefined) throw new ModelError({ reason: junk })
  const extension = extensionOf(fileName)
  const named = FORMATS.find((format) => format === extension)
  const format = named ?? sniff(bytes)
  if (format === undefined) {
    throw new ModelError({
      reason: `the format of ${fileName ?? "the file"} is not recognised: expected an STL (binary or ASCII), 3MF or OBJ file`
    })
  }
  const zip = isZip(bytes)
  if (format === "3mf" && !zip) throw new ModelError({ reason: "the file is not a ZIP archive, as a 3MF file is" })
  if (format !== "3mf" && zip) throw new ModelError({ reason: `the file is a ZIP archive, not ${format === "stl" ? "an STL" : "an OBJ"} file` })
  const unit = stated ?? DEFAULT_MODEL_UNIT
  switch (format) {
    case "stl":
      return { mesh: inMillimetres(parseStl(bytes, limits), unit), unit }
    case "3mf": {
      const model = parse3mf(bytes, limits)
      return { mesh: model.mesh, unit: ownUnit(model.unit, stated) }
    }
    case "obj":
      return { mesh: inMillimetres(parseObj(new TextDecoder().decode(bytes), limits), unit), unit }
  }
}

/**
 * The geometry of a model file with its manufacturability measurements and
 * the unit it was read in, synchronously (throws ModelError): what the
 * analysis threads answer (analysisWorker.ts), and model.ts in this thread.
 */
export const analyseModelFile = (
  bytes: Uint8Array,
  fileName: string | null | undefined,
  limits: AnalysisLimits = DEFAULT_LIMITS,
  stated?: ModelUnit
): AnalysedGeometry => {
  const { mesh, unit } = parseModel(bytes, fileName, limits, stated)
  return { ...analyseWithDfm(mesh), unit }
}

/** A thrown value as a ModelError: itself, or what could not be read. */
export const asModelError = (error: unknown): ModelError =>
  error instanceof ModelError
    ? error
    : new ModelError({ reason: `the file could not be read (${error instanceof Error ? error.message : String(error)})` })
