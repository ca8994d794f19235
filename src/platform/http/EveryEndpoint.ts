/**
 * One handler for every endpoint of every group of an API: how the gateway's
 * API and the engine's are served, by walking the API's definition rather
 * than listing the 113 endpoints by hand.
 */
import { Effect, Layer } from "effect"
import { type HttpApi, HttpApiBuilder, type HttpApiGroup } from "effect/http-api"
import { groupsOf } from "../../contract/Operations.ts"

/** The builder's handlers of one group, as far as registering an endpoint by its identifier goes. */
interface Registry {
  readonly handle: (identifier: string, handler: unknown) => Registry
}

export const handleEveryEndpoint = <Id extends string, Groups extends HttpApiGroup.Constraint, Handler, R>(
  api: HttpApi.HttpApi<Id, Groups>,
  handler: Effect.Effect<Handler, never, R>
): Layer.Layer<HttpApiGroup.ToService<Id, Groups>, never, R> => {
  const top = api as unknown as HttpApi.Top
  const [first, ...rest] = groupsOf(api).map((group) =>
    HttpApiBuilder.group(top, group.identifier, (handlers) =>
      Effect.map(handler, (handle) => {
        let registry = handlers as unknown as Registry
        for (const endpoint of Object.values(group.endpoints)) registry = registry.handle(endpoint.identifier, handle)
        // Every endpoint of the group is handled: what the builder's types check one group at a time.
        return registry as unknown as typeof handlers
      }) as never)
  )
  return Layer.mergeAll(first!, ...rest) as unknown as Layer.Layer<HttpApiGroup.ToService<Id, Groups>, never, R>
}
