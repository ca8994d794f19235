/**
 * Items: extra lines of a ticket (a fee, a service) with a quantity and a
 * unit price in EUR, to the cent. Like parts, they change only while their
 * ticket is draft or quoted, and a change while quoted supersedes its open
 * quotes (ticketState.ts). Deleting an item is not implemented (the spec).
 */
import { Effect } from "effect"
import { Item } from "../../domain/resources/orders.ts"
import { recordHandlers, type RecordHooks } from "../crud.ts"
import { EngineError } from "../EngineError.ts"
import type { GroupHandlers, OperationContext } from "../Operation.ts"
import { BASE_CURRENCY, BASE_MINOR_UNITS, isWholeMinor } from "../pricing/money.ts"
import { type PrepareInput, type RecordOf } from "../typedRecords.ts"
import { checkOpenForChanges, ticketsChanged } from "./ticketState.ts"

type ItemRecord = RecordOf<typeof Item>

/** The tickets a write of an item changes: its own, and the one it leaves. */
const ticketsOf = (
  item: { readonly ticketId: string },
  previous: ItemRecord | undefined
) => [item.ticketId, ...(previous === undefined ? [] : [previous.ticketId])]

const prepareItem = Effect.fnUntraced(function*(context: OperationContext, input: PrepareInput<typeof Item>, previous: ItemRecord | undefined) {
  if (!isWholeMinor(input.unitPrice, BASE_MINOR_UNITS)) {
    return yield* EngineError.invalid(`unitPrice: ${input.unitPrice} is finer than a cent: item prices are in ${BASE_CURRENCY}, to the cent`)
  }
  yield* checkOpenForChanges(context, ticketsOf(input, previous))
  return input
})

const itemHooks: RecordHooks<typeof Item> = {
  prepare: prepareItem,
  written: (context, item, previous) => ticketsChanged(context, ticketsOf(item, previous))
}

const items = recordHandlers(Item, itemHooks)

export const itemHandlers: GroupHandlers<"item"> = {
  list: items.list,
  create: items.create,
  replace: items.replace,
  // The path parameter is `partItemId`, not `id`.
  get: (context, { params }) => items.get(context, { params: { id: params.partItemId } }),
  remove: () => Effect.fail(EngineError.notImplemented("Deleting an item is not implemented"))
}
