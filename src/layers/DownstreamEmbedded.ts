/**
 * Downstream, embedded: the engine of src/engine in this process, over the
 * same storage. It fails exactly as a remote engine would, with a
 * DownstreamError whose source is `engine`, so the passthrough path is one.
 */
import { Effect, Layer } from "effect"
import type { SqlError } from "effect/sql/SqlError"
import { DownstreamError } from "../domain/Errors.ts"
import { RecordRepository } from "../engine/RecordRepository.ts"
import { type CallScope, Downstream } from "../services/Downstream.ts"
import { isOutage } from "./storage/StorageErrors.ts"

export const ENGINE_SOURCE = "engine"

const engineError = (scope: CallScope, status: number, type: string, message: string) =>
  new DownstreamError({ status, code: status, message, type, source: ENGINE_SOURCE, requestId: scope.requestId })

const fromStorage = (scope: CallScope) => (error: SqlError) =>
  isOutage(error)
    ? Effect.fail(engineError(scope, 503, "StorageUnavailable", "The engine's storage is unavailable"))
    : Effect.die(error)

export const DownstreamEmbedded = Layer.effect(
  Downstream,
  Effect.gen(function*() {
    const records = yield* RecordRepository
    return Downstream.of({
      list: (resource, scope, filter) =>
        records.list(resource, scope.appId, filter).pipe(Effect.catchTag("SqlError", fromStorage(scope))),
      get: (resource, scope, id) =>
        records.find(resource, scope.appId, id).pipe(Effect.catchTag("SqlError", fromStorage(scope))),
      create: (resource, scope, input) =>
        records.insert(resource, scope.appId, input).pipe(Effect.catchTag("SqlError", fromStorage(scope))),
      replace: (resource, scope, id, input) =>
        records.replace(resource, scope.appId, id, input).pipe(
          Effect.catchTag("SqlError", fromStorage(scope)),
          Effect.flatMap((record) =>
            record === undefined
              ? Effect.fail(engineError(scope, 404, "NotFound", `${resource} ${id} not found`))
              : Effect.succeed(record)
          )
        )
    })
  })
).pipe(Layer.provide(RecordRepository.layer))
