/**
 * Handlers of the public API: every endpoint of every group forwards to the
 * engine with the one PublicOperationHandler (ForwardHandlers.ts), so the groups are
 * registered by walking the API's definition rather than listed by hand.
 */
import { Effect, Layer } from "effect"
import { HttpApiBuilder, type HttpApiGroup } from "effect/http-api"
import { groupsOf } from "../../api/Operations.ts"
import { PublicApi } from "../../api/PublicApi.ts"
import { PublicOperationHandler } from "./ForwardHandlers.ts"

type PublicGroup = (typeof PublicApi)["groups"][keyof (typeof PublicApi)["groups"]]

/** The builder's handlers of one group, as far as registering an endpoint by its identifier goes. */
interface Registry {
  readonly handle: (identifier: string, handler: unknown) => Registry
}

/** One group, each of its endpoints forwarded. */
const forwardGroup = (group: HttpApiGroup.Top) =>
  HttpApiBuilder.group(PublicApi, group.identifier as PublicGroup["identifier"], (handlers) =>
    Effect.map(PublicOperationHandler, (forward) => {
      let registry = handlers as unknown as Registry
      for (const endpoint of Object.values(group.endpoints)) registry = registry.handle(endpoint.identifier, forward)
      // Every endpoint of the group is handled: what the builder's type checks one group at a time.
      return registry as unknown as typeof handlers
    }))

const [first, ...rest] = groupsOf(PublicApi).map(forwardGroup)

/** Every group's handlers: what `HttpApiBuilder.layer(PublicApi)` needs. */
export const PublicHandlers = Layer.mergeAll(first!, ...rest) as unknown as Layer.Layer<
  HttpApiGroup.ToService<"public-v1", PublicGroup>,
  never,
  PublicOperationHandler
>
