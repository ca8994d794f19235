/**
 * Model versions: every model file a part has had, with its geometry. A new
 * part stores version 1, a part whose model changes the next one; they go
 * with the part. `POST /model-version/{id}/fields-resolve` reads fields of
 * one by name or dotted path.
 */
import { Effect, Predicate, Schema } from "effect"
import { ModelVersion, type TicketModel } from "../../domain/resources/orders.ts"
import type { GroupHandlers, OperationContext } from "../Operation.ts"
import { RecordRepository } from "../RecordRepository.ts"
import { getRecord, listRecords, type RecordOf, type StoredFields } from "../typedRecords.ts"
import { insertLocked } from "../writes.ts"

type Part = RecordOf<typeof TicketModel>

/** Stores the part's model as its next model version (the first for a new part, with no lookup). */
export const addVersion = Effect.fnUntraced(function*(context: OperationContext, part: Part, first = false) {
  const existing = first ? [] : yield* listRecords(ModelVersion, context.appId, { ticketModelId: part.id })
  const version: StoredFields<typeof ModelVersion> = {
    ticketModelId: part.id,
    version: existing.reduce((max, record) => Math.max(max, record.version), 0) + 1,
    fileName: part.fileName,
    modelEndpoint: part.modelEndpoint ?? null,
    geometry: part.geometry
  }
  yield* insertLocked(ModelVersion.name, context.appId, version)
})

/** Removes the versions of a part that is gone. */
export const removeVersions = Effect.fnUntraced(function*(context: OperationContext, part: Part) {
  const records = yield* RecordRepository
  for (const version of yield* listRecords(ModelVersion, context.appId, { ticketModelId: part.id })) {
    yield* records.remove(ModelVersion.name, context.appId, version.id)
  }
})

/** What a field resolves to: a string, a finite number or a boolean; anything else (an object, a list) is null. */
const FieldValue = Schema.Union([Schema.String, Schema.Finite, Schema.Boolean])
const isFieldValue = Schema.is(FieldValue)

/** The value at a dotted path of a record: the caller names any path, so the record is walked as the JSON it is stored as. */
const valueAt = (record: unknown, path: string): typeof FieldValue.Type | null => {
  let current = record
  for (const key of path.split(".")) {
    if (!Predicate.isObject(current) || !Object.hasOwn(current, key)) return null
    current = current[key]
  }
  return isFieldValue(current) ? current : null
}

export const fieldsResolve: GroupHandlers<"modelVersion">["fieldsResolve"] = (context, { params: { id }, payload: { fields } }) =>
  Effect.map(getRecord(ModelVersion, context.appId, id), (version) => ({
    modelVersionId: id,
    values: Object.fromEntries(fields.map((field) => [field, valueAt(version, field)]))
  }))
