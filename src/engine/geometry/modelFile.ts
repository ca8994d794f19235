/**
 * A model file's geometry, synchronously: the format from the file name's
 * extension (else from the content), checks that the content is that
 * format, the mesh, and its measures and shape distribution, within the
 * budgets of `limits` (limits.ts).
 *
 * No Effect here: this is what the analysis workers load (analysisWorker.ts),
 * and they start faster without it. model.ts wraps it for the engine.
 */
import { type AnalysisLimits, DEFAULT_LIMITS } from "./limits.ts"
import { analyse, type AnalysedGeometry, type Mesh, ModelError } from "./mesh.ts"
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

/** The mesh of a model file; fails with what is wrong when it cannot be read. */
export const parseModel = (bytes: Uint8Array, fileName: string | null | undefined, limits: AnalysisLimits = DEFAULT_LIMITS): Mesh => {
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
  switch (format) {
    case "stl":
      return parseStl(bytes, limits)
    case "3mf":
      return parse3mf(bytes, limits)
    case "obj":
      return parseObj(new TextDecoder().decode(bytes), limits)
  }
}

/** The geometry of a model file, synchronously (throws ModelError), in this thread: for trusted files (the seed, tests, benchmarks). */
export const analyseModelSync = (
  bytes: Uint8Array,
  fileName: string | null | undefined,
  limits: AnalysisLimits = DEFAULT_LIMITS
): AnalysedGeometry => analyse(parseModel(bytes, fileName, limits))

/** A thrown value as a ModelError: itself, or what could not be read. */
export const asModelError = (error: unknown): ModelError =>
  error instanceof ModelError
    ? error
    : new ModelError({ reason: `the file could not be read (${error instanceof Error ? error.message : String(error)})` })
