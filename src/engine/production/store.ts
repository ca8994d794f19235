/** Small helpers the production workflows share over the record repository, typed by resource. */
import { Effect } from "effect"
import type { SqlError } from "effect/sql/SqlError"
import type { RecordFilter, Resource } from "../../domain/Resource.ts"
import type { EngineServices, Step } from "../Operation.ts"
import { RecordRepository, type StoredRecord } from "../RecordRepository.ts"
import { asRecord, type RecordOf, type StoredFields } from "../typedRecords.ts"
import { insertLocked, replaceLocked } from "../writes.ts"

/** Large enough to mean "every record" for the workflows' own reads. */
const ALL = 1_000_000

type Read<A> = Effect.Effect<A, SqlError, EngineServices>

/**
 * Which records a workflow reads: fields equal to one of the values, ids,
 * dates, and at most `limit` after skipping `offset` (every one by default).
 */
export interface Selection {
  readonly equals?: Readonly<Record<string, ReadonlyArray<string>>> | undefined
  readonly ids?: ReadonlyArray<string> | undefined
  readonly dates?: RecordFilter["dates"] | undefined
  readonly limit?: number | undefined
  readonly offset?: number | undefined
}

/** What storage filters on: the selection, everything unless it pages. */
const filterOf = (selection: Selection): RecordFilter => ({
  ids: selection.ids,
  equals: Object.entries(selection.equals ?? {}).map(([field, values]) => ({ field, values })),
  dates: selection.dates ?? [],
  limit: selection.limit ?? ALL,
  offset: selection.offset ?? 0
})

/** The stored records of the resource named `resource` that the app sees and the selection keeps, in one read. */
export const listStored = (resource: string, appId: string, selection: Selection = {}): Read<ReadonlyArray<StoredRecord>> =>
  Effect.flatMap(RecordRepository, (records) => records.list(resource, appId, filterOf(selection)))

/** One page of the records of `resource` the app sees and the selection keeps, and how many it keeps in all. */
export const pageStored = (resource: string, appId: string, selection: Selection = {}) =>
  Effect.flatMap(RecordRepository, (records) => records.page(resource, appId, filterOf(selection)))

/** The records of `resource` that the app sees and the selection keeps, typed as the resource's record. */
export const listAll = <R extends Resource>(resource: R, appId: string, selection: Selection = {}): Read<ReadonlyArray<RecordOf<R>>> =>
  Effect.map(listStored(resource.name, appId, selection), (records) => records.map((record) => asRecord(resource, record)))

/** Stores a new record of `resource` for the app, what it references locked (writes.ts). */
export const insertRecord = <R extends Resource>(resource: R, appId: string, fields: StoredFields<R>): Step<RecordOf<R>> =>
  Effect.map(insertLocked(resource.name, appId, fields), (stored) => asRecord(resource, stored))

/**
 * Replaces the app's record of `resource` with `fields` (storage keeps its id,
 * number and createdAt), what it references locked (writes.ts); `undefined`
 * when the app has no such record of its own.
 */
export const replaceRecord = <R extends Resource>(
  resource: R,
  appId: string,
  id: string,
  fields: StoredFields<R>
): Step<RecordOf<R> | undefined> =>
  Effect.map(replaceLocked(resource.name, appId, id, fields), (replaced) => replaced === undefined ? undefined : asRecord(resource, replaced))

export const unique = <A>(values: ReadonlyArray<A>): ReadonlyArray<A> => [...new Set(values)]
