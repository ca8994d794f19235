/** Small helpers the production workflows share over the record repository. */
import { Effect } from "effect"
import type { SqlError } from "effect/sql/SqlError"
import type { RecordFilter } from "../../domain/Resource.ts"
import type { EngineServices } from "../Operation.ts"
import { RecordRepository, type StoredRecord } from "../RecordRepository.ts"

/** Large enough to mean "every record" for the workflows' own reads. */
export const ALL = 1_000_000

export const param = (request: { readonly params?: Readonly<Record<string, unknown>> | undefined }, name: string) => String(request.params?.[name] ?? "")

/** Every record of `resource` visible to the app, whose fields equal the given values. */
export const listAll = (
  resource: string,
  appId: string,
  equals: Readonly<Record<string, ReadonlyArray<string>>> = {},
  extra: Partial<RecordFilter> = {}
): Effect.Effect<ReadonlyArray<StoredRecord>, SqlError, EngineServices> =>
  Effect.gen(function*() {
    const records = yield* RecordRepository
    return yield* records.list(resource, appId, {
      equals: Object.entries(equals).map(([field, values]) => ({ field, values })),
      dates: [],
      limit: ALL,
      offset: 0,
      ...extra
    })
  })

export const strings = (value: unknown): ReadonlyArray<string> => Array.isArray(value) ? value.filter((item): item is string => typeof item === "string") : []

export const unique = <A>(values: ReadonlyArray<A>): ReadonlyArray<A> => [...new Set(values)]
