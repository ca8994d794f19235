/**
 * Machining strategies: how one service of a part is machined. One per part
 * and service, stored as records of their own (id
 * `<ticketModelId>:<serviceId>`) with the fields the API answers. The
 * service is one the part has, as `productionTimes.services[].serviceId`
 * shows it; a strategy goes when its service or its part does.
 */
import { Effect } from "effect"
import { defineResource } from "../../domain/Resource.ts"
import { MachiningStrategy, TicketModel } from "../../domain/resources/orders.ts"
import { EngineError } from "../EngineError.ts"
import type { GroupHandlers, OperationContext } from "../Operation.ts"
import { RecordRepository } from "../RecordRepository.ts"
import { asRecord, findRecord, getRecord, listRecords, type RecordOf } from "../typedRecords.ts"
import { insertLocked, replaceLocked } from "../writes.ts"
import { servicesOf } from "./eligibility.ts"

const MachiningStrategies = defineResource({
  name: "machiningStrategy",
  path: "/ticket-model/machining-strategy",
  title: "Machining strategy",
  fields: MachiningStrategy.fields,
  filters: ["ticketModelId"]
})

type PartHandlers = GroupHandlers<"ticketModel">
type Part = RecordOf<typeof TicketModel>

/** A stored strategy as the API answers it: without the record's id and timestamps. */
const strategyOf = ({ createdAt: _createdAt, id: _id, updatedAt: _updatedAt, ...strategy }: RecordOf<typeof MachiningStrategies>) => strategy

const strategyId = (ticketModelId: string, serviceId: string) => `${ticketModelId}:${serviceId}`

export const getMachiningStrategy: PartHandlers["getMachiningStrategy"] = (context, { params: { serviceId, ticketModelId } }) =>
  Effect.map(findRecord(MachiningStrategies, context.appId, strategyId(ticketModelId, serviceId)), (found) => found === undefined ? null : strategyOf(found))

export const setMachiningStrategy: PartHandlers["setMachiningStrategy"] = Effect.fnUntraced(
  function*(context, { params: { serviceId, ticketModelId }, payload }) {
    const part = yield* getRecord(TicketModel, context.appId, ticketModelId)
    const services = servicesOf(part)
    if (!services.includes(serviceId)) {
      return yield* EngineError.invalid(
        `serviceId: part ${part.name ?? part.id} has no service ${serviceId}; its services are ${services.join(", ")} (productionTimes.services)`
      )
    }
    const id = strategyId(ticketModelId, serviceId)
    const data: typeof MachiningStrategy.Type = { ...payload, ticketModelId, serviceId }
    const existing = yield* findRecord(MachiningStrategies, context.appId, id)
    const stored = existing === undefined
      ? yield* insertLocked(MachiningStrategies.name, context.appId, data, { id })
      : yield* replaceLocked(MachiningStrategies.name, context.appId, id, data)
    return stored === undefined ? data : strategyOf(asRecord(MachiningStrategies, stored))
  }
)

/** Removes the part's strategies for services it no longer has (all of them when `part` is gone). */
export const pruneStrategies = Effect.fnUntraced(function*(context: OperationContext, part: Part, gone = false) {
  const records = yield* RecordRepository
  const kept = gone ? [] : servicesOf(part)
  for (const strategy of yield* listRecords(MachiningStrategies, context.appId, { ticketModelId: part.id })) {
    if (!kept.includes(strategy.serviceId)) yield* records.remove(MachiningStrategies.name, context.appId, strategy.id)
  }
})
