import { HttpApiGroup, OpenApi } from "effect/http-api"
import { Customer } from "../../domain/resources/Customer.ts"
import { IncomingSecretAuth } from "../Authorization.ts"
import { create, get, list, replace } from "../endpoints.ts"

export const CustomerGroup = HttpApiGroup.make("customer")
  .add(list(Customer), create(Customer), get(Customer), replace(Customer))
  .middleware(IncomingSecretAuth)
  .annotate(OpenApi.Title, Customer.title)
