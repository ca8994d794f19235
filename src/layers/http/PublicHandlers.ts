/** Handlers of the public API: one line per resource, derived from its definition. */
import { Effect, Layer } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { PublicApi } from "../../api/PublicApi.ts"
import { Customer } from "../../domain/Customer.ts"
import { crudHandlers } from "./ResourceHandlers.ts"

export const PublicHandlers = Layer.mergeAll(
  HttpApiBuilder.group(PublicApi, "customer", (handlers) =>
    Effect.map(crudHandlers(Customer), (crud) =>
      handlers
        .handle("list", crud.list)
        .handle("create", crud.create)
        .handle("get", crud.get)
        .handle("replace", crud.replace)))
)
