/**
 * The engine: runs a public operation for one app. The same service answers
 * in-process (Downstream embedded) and over its own HTTP API (engine mode).
 */
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import type { EngineRequest } from "../api/EngineCall.ts"
import { traced } from "../domain/Span.ts"
import { isOutage } from "../domain/StorageOutage.ts"
import { EngineError } from "./EngineError.ts"
import { ModelAnalyser } from "./geometry/ModelAnalyser.ts"
import { ModelFetcher } from "./geometry/ModelFetcher.ts"
import type { OperationContext, Operations } from "./Operation.ts"
import { engineOperations } from "./operations.ts"
import { RecordRepository } from "./RecordRepository.ts"
import { writeReferenceData } from "./referenceData.ts"

export class Engine extends Context.Service<Engine, {
  readonly invoke: (operation: string, context: OperationContext, request: EngineRequest) => Effect.Effect<unknown, EngineError>
  readonly operations: ReadonlyArray<string>
}>()("mfg/engine/Engine") {
  /** An engine running `operations` over the SqlClient in context. */
  static readonly make = (operations: Operations) =>
    Layer.effect(
      Engine,
      Effect.gen(function*() {
        // Without its reference data the engine cannot answer: failing to write it stops the start.
        yield* Effect.orDie(writeReferenceData)
        // What operations use, provided one by one: merging a whole context into the caller's would copy
        // the caller's context on every call.
        const repository = yield* RecordRepository
        const sql = yield* SqlClient.SqlClient
        const fetcher = yield* ModelFetcher
        const analyser = yield* ModelAnalyser
        return Engine.of({
          operations: Object.keys(operations).sort(),
          invoke: (operation, context, request) => {
            const run = operations[operation]
            if (run === undefined) return Effect.fail(EngineError.notImplemented(`The engine has no operation ${operation}`))
            return run(context, request).pipe(
              Effect.catchTag("SqlError", (error) => isOutage(error) ? Effect.fail(EngineError.storageUnavailable()) : Effect.die(error)),
              Effect.provideService(RecordRepository, repository),
              Effect.provideService(SqlClient.SqlClient, sql),
              Effect.provideService(ModelFetcher, fetcher),
              Effect.provideService(ModelAnalyser, analyser),
              traced(`engine ${operation}`, { attributes: { "app.id": context.appId } })
            )
          }
        })
      })
    ).pipe(Layer.provide(RecordRepository.layer))

  static readonly layer = Engine.make(engineOperations)
}
