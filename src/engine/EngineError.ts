/**
 * How the engine says no: one tagged, Schema-described error per kind of
 * refusal, each carrying the status the client sees, a message for a person
 * and a stable `type` for a program. The gateway passes it to the client
 * unchanged (status, `{code, message, type}`), naming the engine as the
 * source, or the part of the engine that failed when `source` says (the model
 * fetcher, `model-fetcher`, for a model file that could not be downloaded).
 */
import { Schema } from "effect"
import { insufficientScopeMessage, type Scope } from "../domain/Grants.ts"

const refusal = {
  status: Schema.Int,
  message: Schema.String,
  type: Schema.String,
  /** The source the gateway names (`x-error-source`); the engine's when absent. */
  source: Schema.optional(Schema.String)
}

/** A record the call names does not exist for the app: 404. */
export class RecordNotFound extends Schema.TaggedError<RecordNotFound>()("RecordNotFound", refusal) {}

/** A field refers to a record that does not exist for the app: 422. */
export class UnknownReference extends Schema.TaggedError<UnknownReference>()("UnknownReference", refusal) {}

/** Input the schemas accept but the engine's rules do not: 422 `ValidationError`. */
export class RuleViolation extends Schema.TaggedError<RuleViolation>()("RuleViolation", refusal) {}

/** A move the record's state does not allow; the message names the state: 409. */
export class StateConflict extends Schema.TaggedError<StateConflict>()("StateConflict", refusal) {}

/** A conditional write (If-Match) whose record changed since the client read it. */
export class PreconditionFailed extends Schema.TaggedError<PreconditionFailed>()("PreconditionFailed", refusal) {}

/** A model file that could not be fetched or analysed: its own status, type and source. */
export class ModelFileFailure extends Schema.TaggedError<ModelFileFailure>()("ModelFileFailure", refusal) {}

/** What the caller's secret does not allow, decided where the engine acts (accepting a quote): 403. */
export class Forbidden extends Schema.TaggedError<Forbidden>()("Forbidden", refusal) {}

/** An operation the engine does not offer yet: 501. */
export class NotImplemented extends Schema.TaggedError<NotImplemented>()("NotImplemented", refusal) {}

/** The engine's storage is unreachable: 503, the caller may retry. */
export class StorageUnavailable extends Schema.TaggedError<StorageUnavailable>()("StorageUnavailable", refusal) {}

/**
 * The storage connection was lost while a write was being committed: it may
 * or may not have been made. 503, distinct from StorageUnavailable (nothing
 * was changed); a retry with the same Idempotency-Key answers what happened.
 */
export class StorageOutcomeUnknown extends Schema.TaggedError<StorageOutcomeUnknown>()("StorageOutcomeUnknown", refusal) {}

/** An Idempotency-Key already used for another request of the app: 422. */
export class IdempotencyKeyReused extends Schema.TaggedError<IdempotencyKeyReused>()("IdempotencyKeyReused", refusal) {}

export type EngineError =
  | RecordNotFound
  | UnknownReference
  | RuleViolation
  | StateConflict
  | PreconditionFailed
  | ModelFileFailure
  | Forbidden
  | NotImplemented
  | StorageUnavailable
  | StorageOutcomeUnknown
  | IdempotencyKeyReused

/** Every engine error, as one Schema. */
export const EngineError = Object.assign(
  Schema.Union([
    RecordNotFound,
    UnknownReference,
    RuleViolation,
    StateConflict,
    PreconditionFailed,
    ModelFileFailure,
    Forbidden,
    NotImplemented,
    StorageUnavailable,
    StorageOutcomeUnknown,
    IdempotencyKeyReused
  ]),
  {
    notFound: (resource: string, id: string) => new RecordNotFound({ status: 404, type: "NotFound", message: `${resource} ${id} not found` }),
    unknownReference: (field: string, resource: string, id: string) =>
      new UnknownReference({ status: 422, type: "UnknownReference", message: `${field}: no ${resource} ${id}` }),
    invalid: (message: string) => new RuleViolation({ status: 422, type: "ValidationError", message }),
    conflict: (message: string) => new StateConflict({ status: 409, type: "Conflict", message }),
    preconditionFailed: (resource: string, id: string) =>
      new PreconditionFailed({
        status: 412,
        type: "PreconditionFailed",
        message: `${resource} ${id} changed since the version If-Match names: read it again, reapply the change and retry`
      }),
    modelFile: (failure: { readonly status: number; readonly type: string; readonly message: string; readonly source?: string | undefined }) =>
      new ModelFileFailure(failure),
    insufficientScope: (operation: string, scope: Scope) =>
      new Forbidden({ status: 403, type: "InsufficientScope", message: insufficientScopeMessage(operation, scope) }),
    spendLimitExceeded: (message: string) => new Forbidden({ status: 403, type: "SpendLimitExceeded", message }),
    notImplemented: (message: string) => new NotImplemented({ status: 501, type: "NotImplemented", message }),
    storageUnavailable: () => new StorageUnavailable({ status: 503, type: "StorageUnavailable", message: "The engine's storage is unavailable" }),
    outcomeUnknown: () =>
      new StorageOutcomeUnknown({
        status: 503,
        type: "StorageOutcomeUnknown",
        message: "The connection to the engine's storage was lost while the change was being committed: it may or may not have " +
          "been made. Retry with the same Idempotency-Key to get its answer (without one, read before you retry)"
      }),
    idempotencyKeyReused: (key: string) =>
      new IdempotencyKeyReused({
        status: 422,
        type: "IdempotencyKeyReused",
        message: `Idempotency-Key "${key}" was already used for a different request (another operation or body); use a new key for a new request`
      })
  }
)
