/**
 * Materials (defaults per technology) and material series, and what must
 * keep agreeing with them: a material is of its series' technology; its
 * technology is that of the parts and catalogue configurations made of it
 * and of the machines its loaded reels are on; its colours include those of
 * the parts and configurations made of it. A change that would break one of
 * these is a 422 naming the field and what uses the record.
 */
import { Effect } from "effect"
import { CatalogueModel } from "../../domain/resources/catalogue.ts"
import { TicketModel } from "../../domain/resources/orders.ts"
import { Machine, Reel } from "../../domain/resources/production.ts"
import { Material, MaterialSeries } from "../../domain/resources/reference.ts"
import { recordHandlers, type RecordHooks } from "../crud.ts"
import { EngineError } from "../EngineError.ts"
import { usedBy } from "../integrity.ts"
import type { GroupHandlers, OperationContext } from "../Operation.ts"
import { RecordRepository } from "../RecordRepository.ts"
import { asRecord, findRecord, listRecords, type PrepareInput, type RecordOf } from "../typedRecords.ts"
import { REEL_GROUP } from "./reelRules.ts"
import { listStored } from "./store.ts"

type MaterialRecord = RecordOf<typeof Material>

/** Density (g/cm³) and price per kg of a material when its record gives none. */
export const MATERIAL_DEFAULTS: Readonly<Record<string, { readonly density: number; readonly pricePerKg: number }>> = {
  fdm: { density: 1.24, pricePerKg: 25 },
  sla: { density: 1.15, pricePerKg: 120 },
  sls: { density: 1.01, pricePerKg: 70 },
  mjf: { density: 1.01, pricePerKg: 60 },
  "cnc-milling": { density: 2.7, pricePerKg: 8 }
}

/** A material that changes technology must leave no reel of it on a machine of the old one. */
const checkLoadedReels = Effect.fnUntraced(function*(context: OperationContext, material: MaterialRecord, technologyId: string) {
  for (const group of yield* listStored(REEL_GROUP, context.appId, { equals: { materialId: [material.id] } })) {
    for (const reel of yield* listRecords(Reel, context.appId, { reelGroupId: String(group.id) })) {
      if (typeof reel.machineId !== "string") continue
      const machine = yield* findRecord(Machine, context.appId, reel.machineId)
      if (machine !== undefined && machine.technologyId !== technologyId) {
        return yield* EngineError.invalid(
          `technologyId: reel ${reel.id} of material ${material.id} is loaded on machine ${machine.id} (${machine.technologyId})`
        )
      }
    }
  }
})

/** A material that changes technology must be used by no part or catalogue configuration: they are of the old one. */
const checkMadeOf = Effect.fnUntraced(function*(context: OperationContext, material: MaterialRecord, technologyId: string) {
  const users = yield* usedBy(Material.name, context.appId, material, [TicketModel.name, CatalogueModel.name])
  if (users !== undefined) {
    return yield* EngineError.invalid(
      `technologyId: material ${material.name} (${material.id}) is used by ${users} of ${material.technologyId}: ` +
        `its technology cannot change to ${technologyId}`
    )
  }
})

/** The app's catalogue models with a configuration of the material. */
const modelsOfMaterial = Effect.fnUntraced(function*(context: OperationContext, materialId: string) {
  const rows = yield* (yield* RecordRepository).listByConfigurationMaterial(CatalogueModel.name, context.appId, materialId)
  return rows.map((row) => asRecord(CatalogueModel, row))
})

/** A material's `colourIds`, when it lists them, must keep the colour of every part and configuration made of it. */
const checkColoursInUse = Effect.fnUntraced(function*(context: OperationContext, material: MaterialRecord, colourIds: ReadonlyArray<string> | undefined) {
  if (colourIds === undefined) return
  const left = (colourId: string | undefined): colourId is string => colourId !== undefined && !colourIds.includes(colourId)
  const part = (yield* listRecords(TicketModel, context.appId, { materialId: material.id })).find((candidate) => left(candidate.colourId))
  if (part !== undefined) {
    return yield* EngineError.invalid(`colourIds: part ${part.name ?? part.id} of material ${material.id} is ${part.colourId}, which the list leaves out`)
  }
  for (const model of yield* modelsOfMaterial(context, material.id)) {
    const configuration = model.configurations.find((candidate) => candidate.materialId === material.id && left(candidate.colourId))
    if (configuration !== undefined) {
      return yield* EngineError.invalid(
        `colourIds: configuration ${configuration.id ?? ""} of catalogue model ${model.name} (${model.id}) is ${configuration.colourId}, ` +
          "which the list leaves out"
      )
    }
  }
})

/** A material in a series is of the series' technology. */
const checkSeries = Effect.fnUntraced(function*(context: OperationContext, input: PrepareInput<typeof Material>) {
  if (input.materialSeriesId === undefined) return
  const series = yield* findRecord(MaterialSeries, context.appId, input.materialSeriesId)
  if (series !== undefined && series.technologyId !== input.technologyId) {
    return yield* EngineError.invalid(
      `materialSeriesId: material series ${series.name} (${series.id}) is ${series.technologyId}, the material is ${input.technologyId}`
    )
  }
})

const materialHooks: RecordHooks<typeof Material> = {
  prepare: Effect.fnUntraced(function*(context, input, previous) {
    yield* checkSeries(context, input)
    if (previous !== undefined && previous.technologyId !== input.technologyId) {
      yield* checkMadeOf(context, previous, input.technologyId)
      yield* checkLoadedReels(context, previous, input.technologyId)
    }
    if (previous !== undefined) yield* checkColoursInUse(context, previous, input.colourIds)
    const defaults = MATERIAL_DEFAULTS[input.technologyId]
    if (defaults === undefined) return input
    return {
      ...input,
      density: input.density ?? defaults.density,
      pricePerKg: input.pricePerKg ?? defaults.pricePerKg
    }
  })
}

export const materialHandlers: GroupHandlers<"material"> = recordHandlers(Material, materialHooks)

/** A series' technology is its materials': it changes only while no material is in the series. */
const materialSeriesHooks: RecordHooks<typeof MaterialSeries> = {
  prepare: Effect.fnUntraced(function*(context, input, previous) {
    if (previous === undefined || previous.technologyId === input.technologyId) return input
    const users = yield* usedBy(MaterialSeries.name, context.appId, previous, [Material.name])
    if (users !== undefined) {
      return yield* EngineError.invalid(
        `technologyId: material series ${previous.name} (${previous.id}) is used by ${users} of ${previous.technologyId}: ` +
          `its technology cannot change to ${input.technologyId}`
      )
    }
    return input
  })
}

const seriesRecords = recordHandlers(MaterialSeries, materialSeriesHooks)

/** Nothing else creates a series: `PUT /material-series/{id}` creates it when the id is new (201), else replaces it. */
export const materialSeriesHandlers: GroupHandlers<"materialSeries"> = {
  list: seriesRecords.list,
  get: seriesRecords.get,
  replace: seriesRecords.replaceOrCreate,
  remove: seriesRecords.remove
}
