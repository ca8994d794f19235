/**
 * The units a model file may be read in (docs/geometry.md, "Units"), with
 * no imports: the analysis worker threads load them, and the API's schemas
 * (src/domain/resources/modelFiles.ts) list the same names.
 *
 * STL and OBJ carry no unit: a part, a catalogue model or an upload states
 * one (`mm` unless stated). A 3MF states its own (its `unit` attribute,
 * millimetres by default), which wins; a stated unit that contradicts it is
 * refused.
 */
export const MODEL_UNITS = ["mm", "cm", "m", "in", "ft", "um"] as const

export type ModelUnit = (typeof MODEL_UNITS)[number]

/** The unit a file is read in when neither it nor its caller states one. */
export const DEFAULT_MODEL_UNIT: ModelUnit = "mm"

/** Millimetres in one of each unit (an inch is 25.4 mm exactly, a foot 12 inches). */
export const MILLIMETRES_PER_UNIT: Readonly<Record<ModelUnit, number>> = {
  um: 0.001,
  mm: 1,
  cm: 10,
  m: 1000,
  in: 25.4,
  ft: 304.8
}

/** The units of a 3MF's `unit` attribute (3MF core specification 3.4, ST_Unit), by the names above. */
export const THREE_MF_UNITS: Readonly<Record<string, ModelUnit>> = {
  micron: "um",
  millimeter: "mm",
  centimeter: "cm",
  meter: "m",
  inch: "in",
  foot: "ft"
}
