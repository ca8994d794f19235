/**
 * Handlers of the public API. Every endpoint forwards to the engine with the
 * same handler (ForwardHandlers.ts); a group lists its endpoints here.
 */
import { Effect, Layer } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { PublicApi } from "../../api/PublicApi.ts"
import { Forward } from "./ForwardHandlers.ts"

export const PublicHandlers = Layer.mergeAll(
  HttpApiBuilder.group(PublicApi, "customer", (handlers) =>
    Effect.map(Forward, (forward) => handlers.handleAll({ list: forward, create: forward, get: forward, replace: forward })))
)
