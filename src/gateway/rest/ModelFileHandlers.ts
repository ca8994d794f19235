/**
 * The gateway's side of uploaded model files (src/contract/groups/modelFiles.ts):
 *
 * - an upload's body is never read whole: its bytes stream to the engine,
 *   which stores them as they arrive, counted here against
 *   MODEL_UPLOAD_MAX_BYTES (MAX_BODY_BYTES does not apply: RequestLimits
 *   leaves this route's body alone). Over the limit is a 413, at once when
 *   `Content-Length` says so, else when the bytes read pass it; the
 *   connection is then closed and the engine, whose body failed, keeps nothing;
 * - the file is the body, or the first file of a `multipart/form-data` form
 *   (its parts read as they arrive, the file's bytes passed on the same way);
 * - the file name comes from `fileName`, else `Content-Disposition` (or the
 *   form's file's `filename`), else the `model/*` type; `unit`, if given,
 *   passes on with it;
 * - a record's `url` is made absolute with the host the request was sent to
 *   (`Host`, and `X-Forwarded-Proto` for the scheme, http by default);
 * - the content answers with the file format's type and its length.
 *
 * An upload takes no Idempotency-Key: storing the same bytes again answers
 * the same record, so a retry is safe as it is.
 */
import { Context, Effect, Layer, Pull, Schema, Stream } from "effect"
import { HttpServerResponse, Multipart } from "effect/http"
import type { HttpServerRequest } from "effect/http"
import type { HttpApiEndpoint } from "effect/http-api"
import { callScopeOf, CurrentCaller } from "../../contract/Authorization.ts"
import type { CallScope } from "../../contract/EngineCall.ts"
import { errorAnswer } from "../../contract/ErrorAnswer.ts"
import { operationOf } from "../../contract/Operations.ts"
import { PublicContract } from "../../contract/PublicApi.ts"
import { BadRequest, type DownstreamError, PayloadTooLarge } from "../../domain/Errors.ts"
import { formatOf, MODEL_MEDIA_TYPES, ModelFileName, type ModelFileRecord } from "../../domain/resources/modelFileUpload.ts"
import { AppConfig, type AppConfigShape } from "../../services/AppConfig.ts"
import { Downstream } from "../../services/Downstream.ts"
import { MISSING_RECORD } from "./AnswerHeaders.ts"
import { entityTag } from "./Conditional.ts"
import { unstorableInput } from "./InputChecks.ts"
import { undeclaredInput } from "./UndeclaredInput.ts"

const ENDPOINTS = PublicContract.groups.modelFile.endpoints

/** What the handler reads of a request the builder decoded (ForwardHandlers' ForwardedRequest). */
interface ForwardedRequest {
  readonly endpoint: HttpApiEndpoint.Top
  readonly request: HttpServerRequest.HttpServerRequest
  readonly params?: unknown
  readonly query?: unknown
  readonly payload?: unknown
}

/** MODEL_UPLOAD_MAX_BYTES, as the configuration read at start holds it (src/services/Settings.ts). */
export const modelUploadMaxBytes = (config: AppConfigShape): number => config.modelUploadMaxBytes

const tooLarge = (limit: number) =>
  HttpServerResponse.setHeaders(
    errorAnswer(
      new PayloadTooLarge({ code: 413, type: "PayloadTooLarge", message: `The model file is larger than ${limit} bytes (MODEL_UPLOAD_MAX_BYTES)` })
    ),
    { connection: "close" }
  )

const badRequest = (path: string, message: string) => errorAnswer(BadRequest.of(`${path}: ${message}`, "ValidationError", [{ path, message }]))

const isModelFileName = Schema.is(ModelFileName)

/** The `filename` of a Content-Disposition (`attachment; filename="bracket.stl"`), RFC 6266's `filename*` first. */
const dispositionFileName = (header: string | undefined): string | undefined => {
  if (header === undefined) return undefined
  const extended = /filename\*\s*=\s*(?:UTF-8|utf-8)''([^;]+)/u.exec(header)?.[1]
  if (extended !== undefined) {
    try {
      return decodeURIComponent(extended.trim())
    } catch {
      return extended.trim()
    }
  }
  const plain = /filename\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;\s]+))/u.exec(header)
  return plain === null ? undefined : (plain[1]?.replace(/\\(.)/gu, "$1") ?? plain[2])
}

const FORM_DATA = "multipart/form-data"

/** The request's media type, lower case, without parameters. */
const mediaTypeOf = (request: ForwardedRequest) => (request.request.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase()

/** The upload's file name, or the 400 saying why there is none. */
const uploadFileName = (request: ForwardedRequest): string | HttpServerResponse.HttpServerResponse => {
  const headers = request.request.headers
  const mediaType = mediaTypeOf(request)
  const typed = Object.entries(MODEL_MEDIA_TYPES).find(([, type]) => type === mediaType)?.[0]
  const fromQuery = (request.query as { readonly fileName?: string } | undefined)?.fileName
  const fromHeader = dispositionFileName(headers["content-disposition"])
  if (fromQuery === undefined && fromHeader !== undefined && !isModelFileName(fromHeader)) {
    return badRequest("Content-Disposition", "the filename must end in .stl, .3mf or .obj, without a path")
  }
  const fileName = fromQuery ?? fromHeader ?? (typed === undefined ? undefined : `model.${typed}`)
  if (fileName === undefined) {
    return badRequest("fileName", "required with application/octet-stream (or a Content-Disposition filename) to say the file's format")
  }
  if (typed !== undefined && formatOf(fileName) !== typed) {
    return badRequest("fileName", `${fileName} is not a ${mediaType} file name (.${typed})`)
  }
  return fileName
}

/** The origin the caller reached the service at: its record URLs start with it. */
const originOf = (request: ForwardedRequest) => {
  const headers = request.request.headers
  const proto = headers["x-forwarded-proto"]?.split(",")[0]?.trim().toLowerCase()
  return `${proto === "https" ? "https" : "http"}://${headers.host ?? "localhost"}`
}

const recordResponse = (request: ForwardedRequest, record: ModelFileRecord) => {
  const text = JSON.stringify({ ...record, url: `${originOf(request)}${record.url}` })
  return HttpServerResponse.text(text, { contentType: "application/json", headers: { etag: entityTag(text) } })
}

const CONTENT_TYPES: Readonly<Record<string, string>> = MODEL_MEDIA_TYPES

/** The handler of the model-file endpoints, given the Downstream and MODEL_UPLOAD_MAX_BYTES. */
export const makeModelFileHandler = (downstream: Downstream["Service"], maxBytes: number) => {
  /** The file's bytes stored under `fileName`, counted against the limit as they pass. */
  const store = Effect.fnUntraced(function*(request: ForwardedRequest, scope: CallScope, fileName: string, bytes: Stream.Stream<Uint8Array, unknown>) {
    let read = 0
    let overLimit = false
    const body = bytes.pipe(
      Stream.mapEffect((chunk) => {
        read += chunk.length
        if (read <= maxBytes) return Effect.succeed(chunk)
        overLimit = true
        return Effect.fail(PayloadTooLarge.over(maxBytes))
      })
    )
    const unit = (request.query as { readonly unit?: string } | undefined)?.unit
    const query = unit === undefined ? { fileName } : { fileName, unit }
    const answer = yield* downstream.call(ENDPOINTS.upload)({ query, payload: body } as never, scope).pipe(Effect.result)
    if (overLimit) return tooLarge(maxBytes)
    if (answer._tag === "Failure") return errorAnswer(answer.failure)
    return recordResponse(request, answer.success as ModelFileRecord)
  })

  /**
   * A form: its parts read up to the first file, whose bytes are stored as
   * a raw upload's, named by `fileName` or the file's own `filename`. The
   * parser's own refusals (too many parts, a field too large) are 400s naming
   * what was wrong.
   */
  const formUpload = (request: ForwardedRequest, scope: CallScope) =>
    Effect.gen(function*() {
      const pull = yield* Stream.toPull(request.payload as Stream.Stream<Multipart.Part, Multipart.MultipartError>)
      let file: Multipart.File | undefined
      while (file === undefined) {
        const parts = yield* Pull.catchDone(pull, () => Effect.succeed(undefined))
        if (parts === undefined) return badRequest("file", "the form has no file: send the model file as its `file` field")
        file = parts.find(Multipart.isFile)
      }
      const fromQuery = (request.query as { readonly fileName?: string } | undefined)?.fileName
      const fileName = fromQuery ?? file.name
      if (!isModelFileName(fileName)) return badRequest("file", "the file's filename must end in .stl, .3mf or .obj, without a path")
      return yield* store(request, scope, fileName, file.content)
    }).pipe(
      Effect.scoped,
      Effect.catchTag("MultipartError", (error) => Effect.succeed(badRequest("body", `the form could not be read (${error.reason._tag})`)))
    )

  const upload = Effect.fnUntraced(function*(request: ForwardedRequest, scope: CallScope) {
    if (Number(request.request.headers["content-length"]) > maxBytes) return tooLarge(maxBytes)
    if (mediaTypeOf(request) === FORM_DATA) return yield* formUpload(request, scope)
    const fileName = uploadFileName(request)
    if (typeof fileName !== "string") return fileName
    return yield* store(request, scope, fileName, request.payload as Stream.Stream<Uint8Array, unknown>)
  })

  const get = (request: ForwardedRequest, scope: CallScope) =>
    Effect.map(
      downstream.call(ENDPOINTS.get)({ params: request.params } as never, scope),
      (record) => record === null ? MISSING_RECORD : recordResponse(request, record as ModelFileRecord)
    )

  const content = Effect.fnUntraced(function*(request: ForwardedRequest, scope: CallScope) {
    const params = request.params as { readonly id: string }
    const record = (yield* downstream.call(ENDPOINTS.get)({ params } as never, scope)) as ModelFileRecord | null
    // A missing id (or another app's) reads as the spec's empty 200, as every read; an empty file is 0 bytes of its format.
    if (record === null) return MISSING_RECORD
    const bytes = (yield* downstream.call(ENDPOINTS.content)({ params } as never, scope)) as Stream.Stream<Uint8Array, unknown>
    return HttpServerResponse.stream(bytes, {
      contentType: CONTENT_TYPES[formatOf(record.fileName) ?? ""] ?? "application/octet-stream",
      contentLength: record.size,
      headers: { "content-disposition": `attachment; filename="${record.fileName.replace(/["\\]/gu, "_")}"` }
    })
  })

  return (request: ForwardedRequest, caller: CurrentCaller["Service"]): Effect.Effect<HttpServerResponse.HttpServerResponse> =>
    Effect.gen(function*() {
      const undeclared = yield* undeclaredInput(request.endpoint, request.request)
      if (undeclared !== undefined) return errorAnswer(undeclared)
      // The body is bytes, stored as such; the id and file name are text, which cannot hold NUL.
      const unstorable = unstorableInput({ params: request.params, query: request.query })
      if (unstorable !== undefined) return errorAnswer(unstorable)
      const scope = callScopeOf(caller)
      const operation = operationOf(request.endpoint)
      if (operation === "modelFile.upload") return yield* upload(request, scope)
      if (operation === "modelFile.content") return yield* content(request, scope)
      return yield* get(request, scope)
    }).pipe(Effect.catch((error: DownstreamError) => Effect.succeed(errorAnswer(error))))
}

/** The handler of the model-file endpoints (`modelFile.*`), over Downstream, with MODEL_UPLOAD_MAX_BYTES. */
export class ModelFileHandler extends Context.Service<
  ModelFileHandler,
  (request: ForwardedRequest) => Effect.Effect<HttpServerResponse.HttpServerResponse, never, CurrentCaller>
>()("mfg/http/ModelFileHandler") {
  static readonly layer = Layer.effect(
    ModelFileHandler,
    Effect.gen(function*() {
      const handle = makeModelFileHandler(yield* Downstream, modelUploadMaxBytes(yield* AppConfig))
      return (request: ForwardedRequest) => Effect.flatMap(CurrentCaller, (caller) => handle(request, caller))
    })
  )
}
