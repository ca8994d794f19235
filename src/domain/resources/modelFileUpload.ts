/**
 * Uploaded model files (POST /v1/model-file, docs/integration.md): the file
 * as the request body, stored in the database once per app and content
 * (SHA-256), and readable again at its `url`, which parts and catalogue
 * models take as `modelEndpoint.url`.
 */
import { Schema } from "effect"
import { Int32 } from "../Integers.ts"
import { ModelUnit } from "./modelFiles.ts"

/** The media types an upload may have; `application/octet-stream` needs a file name saying the format. */
export const MODEL_MEDIA_TYPES = {
  stl: "model/stl",
  "3mf": "model/3mf",
  obj: "model/obj"
} as const
export const OCTET_STREAM = "application/octet-stream"
export const UPLOAD_MEDIA_TYPES = [...Object.values(MODEL_MEDIA_TYPES), OCTET_STREAM] as const

export const DEFAULT_MODEL_UPLOAD_MAX_BYTES = 100 * 1024 * 1024

/** A multipart upload: the file and a few small fields at most (anything else is refused by the parser). */
export const MULTIPART_MAX_PARTS = 8
export const MULTIPART_MAX_FIELD_BYTES = 4096

/** A model file name: no path, ending in a model format's extension. */
export const ModelFileName = Schema.String.check(
  Schema.isMaxLength(255),
  Schema.isPattern(/^[^/\\]+\.(stl|3mf|obj)$/iu, { message: "a file name ending in .stl, .3mf or .obj" })
).annotate({ description: "The model file's name, ending in .stl, .3mf or .obj", examples: ["bracket.stl"] })

/** The format a file name says (its extension, lower case), if a model format. */
export const formatOf = (fileName: string): keyof typeof MODEL_MEDIA_TYPES | undefined => {
  const extension = /\.(stl|3mf|obj)$/iu.exec(fileName)?.[1]?.toLowerCase()
  return extension as keyof typeof MODEL_MEDIA_TYPES | undefined
}

/** The path of an uploaded file's content under /v1, which its `url` ends in. */
export const modelFileContentPath = (id: string) => `/model-file/${encodeURIComponent(id)}/content`

/** The id of an uploaded file whose content `url` names (`…/v1/model-file/{id}/content`), if it names one. */
export const ownModelFileId = (url: string): string | undefined => {
  if (!URL.canParse(url)) return undefined
  const match = /^\/v1\/model-file\/([^/]+)\/content$/u.exec(new URL(url).pathname)
  if (match === null) return undefined
  try {
    return decodeURIComponent(match[1]!)
  } catch {
    return undefined
  }
}

export const ModelFileQuery = Schema.Struct({
  fileName: Schema.optional(ModelFileName.annotate({
    description: "The file's name: required with `application/octet-stream` unless `Content-Disposition` names it; " +
      "its extension must agree with a `model/*` content type"
  })),
  unit: Schema.optional(ModelUnit.annotate({
    description: "The unit the file's coordinates are in, for formats without units (STL, OBJ): mm unless stated; cm, m, in, ft or um. " +
      "Parts and catalogue models made from the file are read in it; one whose `modelEndpoint.unit` says otherwise is a 422 `ModelUnitConflict`, " +
      "as is a 3MF whose own unit is another. The same bytes in another unit are another file"
  }))
})

export const ModelFileRecord = Schema.Struct({
  id: Schema.String,
  fileName: ModelFileName,
  sha256: Schema.String.annotate({
    description: "SHA-256 of the file's bytes, lower-case hex",
    examples: ["9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"]
  }),
  size: Int32.annotate({ description: "The file's size in bytes" }),
  unit: Schema.optional(ModelUnit.annotate({ description: "The unit the upload stated the file is in; absent when it stated none" })),
  url: Schema.String.annotate({
    description: "Where the file's bytes are read (GET, with the app's secret): give it as `modelEndpoint.url` of a part or " +
      "catalogue model, with `modelEndpoint.fileName`",
    examples: ["https://api.example.com/v1/model-file/0190d6c4-2f4e-7a7b-9a59-6f1de3f1a2b3/content"]
  }),
  createdAt: Schema.String.annotate({ format: "date-time", description: "When the file was first uploaded (UTC)" })
}).annotate({ title: "Model file" })
export type ModelFileRecord = typeof ModelFileRecord.Type
