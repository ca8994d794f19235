/**
 * Model files: where the engine downloads one (a part's or a catalogue
 * model's `modelEndpoint`) and the geometry it reads from it
 * (docs/geometry.md).
 */
import { Schema } from "effect"
import { Int32 } from "../Integers.ts"
import { MODEL_UNITS } from "../ModelUnits.ts"
import { NonNegative } from "./fields.ts"

/** The unit a model file's coordinates are in (src/domain/ModelUnits.ts). */
export const ModelUnit = Schema.Literals(MODEL_UNITS).annotate({
  description: "The unit the model file's coordinates are in, for formats without units (STL, OBJ): mm (the default), cm, m, in, ft or um. " +
    "A 3MF states its own unit, which wins: a unit given here that contradicts it is a 422 `ModelUnitConflict`",
  examples: ["in"]
})

export const ModelEndpoint = Schema.Struct({
  url: Schema.String.check(
    Schema.isPattern(/^https?:\/\/\S+$/u, { message: "an http(s) URL the engine can download" }),
    Schema.isMaxLength(4000)
  ).annotate({ description: "An http(s) URL the engine can download", examples: ["https://files.example.com/models/bracket.stl"] }),
  fileName: Schema.optional(
    Schema.String.check(
      Schema.isPattern(/^[^/\\]+\.(stl|STL|3mf|3MF|obj|OBJ)$/u, { message: "a file name ending in .stl, .3mf or .obj" })
    ).annotate({ description: "Required when the URL does not end in the file name", examples: ["bracket.stl"] })
  ),
  unit: Schema.optional(ModelUnit)
}).annotate({ description: "Where the engine downloads the model file (STL, 3MF or OBJ): a public http(s) URL; the unit it is in when not millimetres" })

/**
 * The one-model-source rule: a part takes its model file from exactly one of
 * these fields (the part's `validate`, src/domain/resources/orders.ts); the
 * OpenAPI document states it as a `oneOf` of the request bodies that carry
 * both, titled as here.
 */
export const MODEL_SOURCES = {
  modelEndpoint: "From a model file URL",
  catalogueModelConfigurationId: "From a catalogue model configuration"
} as const

/**
 * What else each source requires: a part from a model file says how it is
 * made; a catalogue configuration says it itself.
 */
export const MODEL_SOURCE_REQUIRES: { readonly [K in keyof typeof MODEL_SOURCES]: ReadonlyArray<"technologyId" | "materialId"> } = {
  modelEndpoint: ["technologyId", "materialId"],
  catalogueModelConfigurationId: []
}

/**
 * The one-model-source rule in JSON Schema: one branch per source, each
 * requiring its field (and what the source requires besides). A body with
 * both matches two branches and one with neither none, so either is
 * refused, as the rule refuses it; a field sent as `null` is not given (JSON
 * decoding reads it as left out), so it satisfies no branch.
 */
export const MODEL_SOURCE_ONE_OF = {
  oneOf: (Object.keys(MODEL_SOURCES) as ReadonlyArray<keyof typeof MODEL_SOURCES>).map((field) => ({
    title: MODEL_SOURCES[field],
    required: [field, ...MODEL_SOURCE_REQUIRES[field]],
    properties: { [field]: { not: { type: "null" } } }
  }))
}

export const Geometry = Schema.Struct({
  volume: NonNegative.annotate({ description: "mm³" }),
  surfaceArea: NonNegative.annotate({ description: "mm²" }),
  boundingBox: Schema.Struct({ x: NonNegative, y: NonNegative, z: NonNegative }).annotate({ description: "mm" }),
  triangleCount: Int32,
  watertight: Schema.Boolean,
  // Absent on geometry analysed before units were read (millimetres then, or a 3MF's own unit).
  unit: Schema.optional(ModelUnit.annotate({
    description: "The unit the file's coordinates were read in: the figures above are always millimetres"
  }))
})
