/**
 * A list that must hold at least one item and at most `maxItems`: the
 * schema of every such input (parts from the catalogue, a secret's IP
 * ranges, the jobs of a merge…). Its JSON Schema is what generators and
 * validators read as a list (`type: array, minItems: 1, maxItems, items`),
 * not a tuple (`prefixItems`) that some turn into a fixed-length type; an
 * empty one is refused saying it "must have at least one item", naming the
 * list rather than its missing first element.
 */
import { Schema } from "effect"

export const AT_LEAST_ONE_ITEM = "must have at least one item"

export const NonEmptyList = <Item extends Schema.Top>(item: Item, maxItems: number) =>
  Schema.Array(item).check(
    Schema.isMinLength(1, { message: AT_LEAST_ONE_ITEM }),
    Schema.isMaxLength(maxItems, { message: `must have at most ${maxItems} items` })
  )
