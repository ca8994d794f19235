import { HttpApiGroup } from "effect/http-api"
import { Customer } from "../../domain/resources/Customer.ts"
import { create, get, list, replace, tag } from "../endpoints.ts"

export const CustomerGroup = HttpApiGroup.make("customer")
  .add(list(Customer), create(Customer), get(Customer), replace(Customer))
  .annotateMerge(tag("Customer", "The companies or people that order parts (Customer 1–n Project)."))
