/** Every operation the engine runs: the record operations of each resource, and the workflows. */
import { Customer } from "../domain/Customer.ts"
import { crudOperations } from "./crud.ts"
import type { Operations } from "./Operation.ts"

export const engineOperations: Operations = {
  ...crudOperations(Customer)
}
