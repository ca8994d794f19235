/**
 * Records as a resource types them, read through the repository: what the
 * record operations (crud.ts) and every rule and hook of a resource read.
 * It knows nothing of the operations, so a hook that reads records never
 * calls back into them.
 */
import { Effect } from "effect"
import type { Resource } from "../domain/Resource.ts"
import { EngineError } from "./EngineError.ts"
import type { OperationContext, Step } from "./Operation.ts"
import { RecordRepository, type StoredRecord } from "./RecordRepository.ts"

/** A resource's record as read, and as written. */
export type RecordOf<R extends Resource> = R["record"]["Type"]
export type InputOf<R extends Resource> = R["input"]["Type"]
/** What is stored of a record: all but the id, the timestamps and the number, which storage sets (and keeps on a replace). */
export type StoredFields<R extends Resource> = Omit<RecordOf<R>, "id" | "createdAt" | "updatedAt" | "number">
/** What `prepare` completes: the input, with the computed fields of the previous record on a replace. */
export type PrepareInput<R extends Resource> = InputOf<R> & Partial<StoredFields<R>>

/**
 * A stored record as the resource's record type, as every read and answer
 * of it shows it: a field whose values include null (`nullableKeys`) that a
 * write left out reads as null, so each field has one representation
 * whatever path wrote it. Storage holds only what the resource's input
 * schema accepted and what the engine set, and the answer is checked
 * against the endpoint's success schema when it is encoded.
 */
export const asRecord = <R extends Resource>(resource: R, record: StoredRecord): RecordOf<R> => {
  const keys = resource.nullableKeys
  if (keys.length === 0 || keys.every((key) => record[key] !== undefined)) return record as RecordOf<R>
  const completed: Record<string, unknown> = { ...record }
  for (const key of keys) completed[key] ??= null
  return completed as RecordOf<R>
}

/** Refuses a reference to a record the app cannot see (another app's, or none). */
export const checkReferences = Effect.fnUntraced(function*(resource: Resource, context: OperationContext, input: StoredRecord) {
  const records = yield* RecordRepository
  for (const [field, target] of Object.entries(resource.storage.references ?? {})) {
    const value = input[field]
    if (value === undefined || value === null) continue
    const found = yield* records.find(target, context.appId, String(value))
    if (found === undefined) return yield* EngineError.unknownReference(field, target, String(value))
  }
})

/** The app's record of `resource` with this id, typed as the resource's record. */
export const findRecord = <R extends Resource>(resource: R, appId: string, id: string): Step<RecordOf<R> | undefined> =>
  Effect.flatMap(
    RecordRepository,
    (records) => Effect.map(records.find(resource.name, appId, id), (found) => found === undefined ? undefined : asRecord(resource, found))
  )

/** The app's record of `resource` with this id, or the engine's 404 naming it. */
export const getRecord = <R extends Resource>(resource: R, appId: string, id: string): Step<RecordOf<R>> =>
  Effect.flatMap(findRecord(resource, appId, id), (found) => found === undefined ? Effect.fail(EngineError.notFound(resource.name, id)) : Effect.succeed(found))

const PAGE = 1000

/** Every record of `resource` the app sees whose fields equal one of the given values (paged through), typed. */
export const listRecords = Effect.fnUntraced(function*<R extends Resource>(
  resource: R,
  appId: string,
  equals: Readonly<Record<string, string | ReadonlyArray<string>>> = {}
) {
  const records = yield* RecordRepository
  const filter = Object.entries(equals).map(([field, value]) => ({ field, values: typeof value === "string" ? [value] : value }))
  const all: Array<RecordOf<R>> = []
  for (let offset = 0;; offset += PAGE) {
    const page = yield* records.list(resource.name, appId, { equals: filter, dates: [], limit: PAGE, offset })
    all.push(...page.map((record) => asRecord(resource, record)))
    if (page.length < PAGE) return all as ReadonlyArray<RecordOf<R>>
  }
})
