/**
 * How the engine says no. The gateway passes it to the client unchanged
 * (status, `{code, message, type}`), naming the engine as the source, or
 * the part of the engine that failed when `source` says (e.g. the model
 * fetcher, `model-fetcher`, for a model file that could not be downloaded).
 */
import { Schema } from "effect"

export class EngineError extends Schema.Error<EngineError>("EngineError")({
  status: Schema.Int,
  message: Schema.String,
  type: Schema.String,
  /** The source the gateway names (`x-error-source`); the engine's when absent. */
  source: Schema.optional(Schema.String)
}) {
  static notFound(resource: string, id: string) {
    return new EngineError({ status: 404, type: "NotFound", message: `${resource} ${id} not found` })
  }
  /** A field refers to a record that does not exist for the app. */
  static unknownReference(field: string, resource: string, id: string) {
    return new EngineError({ status: 422, type: "UnknownReference", message: `${field}: no ${resource} ${id}` })
  }
  static invalid(message: string) {
    return new EngineError({ status: 422, type: "ValidationError", message })
  }
  /** A workflow move the record's state does not allow; the message names the state. */
  static conflict(message: string) {
    return new EngineError({ status: 409, type: "Conflict", message })
  }
  static notImplemented(message: string) {
    return new EngineError({ status: 501, type: "NotImplemented", message })
  }
  static readonly storageUnavailable = () => new EngineError({ status: 503, type: "StorageUnavailable", message: "The engine's storage is unavailable" })
}
