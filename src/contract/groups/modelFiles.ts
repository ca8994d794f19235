/** Uploaded model files: a part's or catalogue model's file without a public URL. */
import { Predicate, Schema } from "effect"
import { Multipart } from "effect/http"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { NotFound } from "../../domain/Errors.ts"
import {
  MODEL_UPLOAD_MAX_BYTES_CEILING,
  ModelFileQuery,
  ModelFileRecord,
  MULTIPART_MAX_FIELD_BYTES,
  MULTIPART_MAX_PARTS,
  UPLOAD_MEDIA_TYPES
} from "../../domain/resources/modelFileUpload.ts"
import { COMMON_ERRORS, get, IdParam, MissingRecord, recordOf, tag } from "../endpoints.ts"
import { emptyOk } from "../openapi.ts"

const ModelFile = { name: "modelFile", path: "/model-file", title: "model file", record: ModelFileRecord } as const

/** The file's bytes, in either direction: read as they arrive, never whole before they are stored. */
const FileBytes = HttpApiSchema.StreamUint8Array({ contentType: UPLOAD_MEDIA_TYPES })

/**
 * The file as a form's `file` field (`multipart/form-data`, as `curl -F` and
 * browsers send it): its parts read as they arrive, the file's bytes passed
 * on as those of a raw upload; a form holds the file and at most a few small
 * fields.
 */
const FileForm = Schema.Struct({
  file: Multipart.SingleFileSchema.annotate({ description: "The model file (STL, 3MF or OBJ); its `filename` names it unless `fileName` does" })
}).pipe(HttpApiSchema.asMultipartStream({ maxParts: MULTIPART_MAX_PARTS, maxFieldSize: MULTIPART_MAX_FIELD_BYTES }))

type Json = Record<string, unknown>

/**
 * Endpoint transform: the file's bytes in each of the upload's media types
 * (the raw body, the form's `file`) bounded as the handler bounds them: never
 * more than MODEL_UPLOAD_MAX_BYTES can be set to (a 413 past the configured
 * limit). A stream's schema has no annotation for it.
 */
const boundedFile = (operation: Json): Json => {
  const body = operation.requestBody
  const content = Predicate.isObject(body) && Predicate.isObject(body.content) ? Object.values(body.content) : []
  for (const media of content) {
    const schema = Predicate.isObject(media) ? media.schema : undefined
    const properties = Predicate.isObject(schema) && Predicate.isObject(schema.properties) ? schema.properties : {}
    for (const file of [schema, properties.file]) {
      if (Predicate.isObject(file) && file.type === "string" && file.format === "binary") file.maxLength = MODEL_UPLOAD_MAX_BYTES_CEILING
    }
  }
  return operation
}

export const ModelFileGroup = HttpApiGroup.make("modelFile")
  .add(
    HttpApiEndpoint.post("upload", "/model-file", {
      query: ModelFileQuery,
      payload: [FileBytes, FileForm],
      success: recordOf(ModelFile),
      error: [...COMMON_ERRORS, NotFound]
    }).annotate(OpenApi.Summary, "Upload a model file").annotate(
      OpenApi.Description,
      "The body is the file itself (STL, 3MF or OBJ), sent as `model/stl`, `model/3mf`, `model/obj` or `application/octet-stream`; " +
        "or as the `file` field of a `multipart/form-data` form (`curl -F file=@bracket.stl`); " +
        "the file name is `fileName`, else the `filename` of `Content-Disposition` (or of the form's file), else `model.<format>` of a `model/*` type " +
        "(`application/octet-stream` without a name is a 400). Another content type is a 415. A body over MODEL_UPLOAD_MAX_BYTES " +
        "(100 MiB unless configured, at most 1 GiB) is a 413, at once when `Content-Length` says so, else when the bytes read pass it. " +
        "`unit` says what unit an STL or OBJ is in (mm unless stated; a 3MF states its own). " +
        "Files are stored once per app, content and unit: uploading the same bytes again answers the first upload's record, 200 both " +
        "times (its `createdAt` tells). Give the answer's `url` and `fileName` as a part's `modelEndpoint`: the engine reads the " +
        "file from its own storage (analysed once per file), never over the network, in the upload's unit."
    ).annotate(OpenApi.Transform, boundedFile),
    get(ModelFile),
    HttpApiEndpoint.get("content", "/model-file/:id/content", {
      params: IdParam,
      success: [FileBytes, MissingRecord],
      error: COMMON_ERRORS
    }).annotate(OpenApi.Summary, "Read a model file's bytes").annotate(
      OpenApi.Description,
      "The bytes as uploaded, with the content type of the file's format and its `Content-Length`. A missing id (or another app's) " +
        "reads as 200 with an empty body, as every read: an empty `text/plain`, never the file's type."
    ).annotate(OpenApi.Transform, emptyOk)
  )
  .annotateMerge(tag("Model file", "Model files uploaded to the service, for parts and catalogue models whose file has no public URL."))
