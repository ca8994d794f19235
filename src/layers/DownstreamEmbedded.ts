/**
 * Downstream, embedded: the engine of src/engine in this process, over the
 * same storage. It fails exactly as a remote engine would, with a
 * DownstreamError whose source is `engine` (or the EngineError's own
 * source), so the passthrough path is one.
 */
import { Effect, Layer } from "effect"
import { DownstreamError } from "../domain/Errors.ts"
import { Engine } from "../engine/Engine.ts"
import { Downstream } from "../services/Downstream.ts"

export const ENGINE_SOURCE = "engine"

export const DownstreamEmbedded = Layer.effect(
  Downstream,
  Effect.gen(function*() {
    const engine = yield* Engine
    return Downstream.of({
      invoke: (operation, scope, request) =>
        engine.invoke(operation, scope, request).pipe(
          Effect.mapError((error) =>
            new DownstreamError({
              status: error.status,
              code: error.status,
              message: error.message,
              type: error.type,
              source: error.source ?? ENGINE_SOURCE,
              requestId: scope.requestId
            })
          )
        )
    })
  })
).pipe(Layer.provide(Engine.layer))
