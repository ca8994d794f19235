/**
 * The engine's operations on uploaded model files (src/contract/groups/modelFiles.ts):
 * store one, read its record, stream its bytes. A record's `url` is the
 * content's path under /v1; the gateway, which knows the host it was called
 * on, makes it absolute.
 */
import { Effect, Stream } from "effect"
import type { Multipart } from "effect/http"
import { formatOf, modelFileContentPath, type ModelFileRecord } from "../../domain/resources/modelFileUpload.ts"
import { EngineError } from "../EngineError.ts"
import type { GroupHandlers } from "../Operation.ts"
import { findModelFile, modelFileContent, type StoredModelFile, storeModelFile } from "./ModelFileRepository.ts"

const asRecord = (file: StoredModelFile): ModelFileRecord => ({
  id: file.id,
  fileName: file.fileName,
  sha256: file.sha256,
  size: file.size,
  ...(file.unit === undefined ? {} : { unit: file.unit }),
  url: `/v1${modelFileContentPath(file.id)}`,
  createdAt: file.createdAt
})

const interrupted = EngineError.modelFile({ status: 400, type: "UploadInterrupted", message: "The model file's body did not arrive whole" })

/**
 * The file's bytes. The gateway always sends them as they are: it takes a
 * form apart itself (src/gateway/rest/ModelFileHandlers.ts). A form's parts
 * sent to the engine's own API end the upload as a body that did not
 * arrive as bytes.
 */
const fileBytes = (payload: Stream.Stream<Uint8Array, unknown> | Stream.Stream<Multipart.Part, unknown>): Stream.Stream<Uint8Array, unknown> =>
  (payload as Stream.Stream<Uint8Array | Multipart.Part, unknown>).pipe(
    Stream.mapEffect((chunk) => chunk instanceof Uint8Array ? Effect.succeed(chunk) : Effect.fail(interrupted))
  )

export const modelFileHandlers: GroupHandlers<"modelFile"> = {
  upload: Effect.fnUntraced(function*(context, { payload, query }) {
    const fileName = query.fileName
    if (fileName === undefined || formatOf(fileName) === undefined) {
      return yield* EngineError.invalid("fileName: a file name ending in .stl, .3mf or .obj is required")
    }
    const { file } = yield* storeModelFile(context.appId, fileName, query.unit, fileBytes(payload)).pipe(
      Effect.catchTags({
        UploadInterrupted: () => Effect.fail(interrupted),
        EmptyUpload: () => Effect.fail(EngineError.invalid("The model file is empty"))
      })
    )
    return asRecord(file)
  }),
  get: (context, { params }) => Effect.map(findModelFile(context.appId, params.id), (file) => file === undefined ? null : asRecord(file)),
  content: Effect.fnUntraced(function*(context, { params }) {
    const file = yield* findModelFile(context.appId, params.id)
    if (file === undefined) return yield* EngineError.notFound("model file", params.id)
    return (yield* modelFileContent(file.id)) as Stream.Stream<Uint8Array, unknown>
  })
}
