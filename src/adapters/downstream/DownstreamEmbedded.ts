/**
 * Downstream, embedded: the engine of src/engine in this process, over the
 * same storage. It fails exactly as a remote engine would, with a
 * DownstreamError whose source is `engine` (or the EngineError's own
 * source), so the passthrough path is one.
 */
import { Effect, Layer } from "effect"
import type { CallScope } from "../../contract/EngineCall.ts"
import { DownstreamError } from "../../domain/Errors.ts"
import { Engine } from "../../engine/Engine.ts"
import type { EngineError } from "../../engine/EngineError.ts"
import { Downstream } from "../../services/Downstream.ts"

export const ENGINE_SOURCE = "engine"

/** An engine failure as the gateway passes it on. */
export const fromEngineError = (error: EngineError, scope: CallScope) =>
  new DownstreamError({
    status: error.status,
    code: error.status,
    message: error.message,
    type: error.type,
    source: error.source ?? ENGINE_SOURCE,
    requestId: scope.requestId
  })

export const DownstreamEmbedded = Layer.effect(
  Downstream,
  Effect.gen(function*() {
    const engine = yield* Engine
    return Downstream.of({
      call: (endpoint) => (input, scope) => Effect.mapError(engine.run(endpoint, scope, input), (error) => fromEngineError(error, scope)),
      emptyTestData: (appId, requestId) => Effect.mapError(engine.emptyTestData(appId), (error) => fromEngineError(error, { appId, requestId }))
    })
  })
).pipe(Layer.provide(Engine.layer))
