/**
 * The example model files of the docs' walkthroughs (examples/models): a
 * fixed list, so that `serve-fixtures` serves these files and nothing else,
 * each at `/models/<name>` with its registered media type.
 */
import * as Path from "node:path"

export interface ExampleModel {
  readonly name: string
  readonly contentType: string
  readonly description: string
}

export const EXAMPLE_MODELS_DIR = Path.resolve(import.meta.dirname, "../../examples/models")

export const EXAMPLE_MODELS: ReadonlyArray<ExampleModel> = [
  { name: "bracket.stl", contentType: "model/stl", description: "binary STL, a 40 × 20 × 10 mm block (8,000 mm³)" },
  { name: "housing.3mf", contentType: "model/3mf", description: "3MF, a 20 × 30 × 40 mm block (24,000 mm³)" }
]

export const exampleModelPath = (model: ExampleModel) => `/models/${model.name}`
