/**
 * The record operations of a resource, derived from its definition: list,
 * get, lookup by any identifier, create, whole-record replace and delete,
 * scoped to the caller's app, with its references checked.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import type { SqlError } from "effect/sql/SqlError"
import type { EngineRequest } from "../api/EngineCall.ts"
import { type Resource, toRecordFilter } from "../domain/Resource.ts"
import { EngineError } from "./EngineError.ts"
import type { EngineServices, Operation, OperationContext, Operations } from "./Operation.ts"
import { RecordRepository, type StoredRecord } from "./RecordRepository.ts"

const param = (request: EngineRequest, name: string) => String(request.params?.[name] ?? "")

/** Refuses a reference to a record the app cannot see (another app's, or none). */
export const checkReferences = (resource: Resource, context: OperationContext, input: StoredRecord) =>
  Effect.gen(function*() {
    const records = yield* RecordRepository
    for (const [field, target] of Object.entries(resource.storage.references ?? {})) {
      const value = input[field]
      if (value === undefined || value === null) continue
      const found = yield* records.find(target, context.appId, String(value))
      if (found === undefined) return yield* EngineError.unknownReference(field, target, String(value))
    }
  })

type Step<A> = Effect.Effect<A, EngineError | SqlError, EngineServices>

/**
 * What a resource adds to its record operations.
 *
 * - `prepare` completes a record before it is stored: the fields the engine
 *   sets (a state, computed values, defaults). `previous` is the stored
 *   record on a replace, with its computed fields already carried over. It
 *   runs before the transaction: it may take its time (a model download).
 * - `written` and `removed` are the other records that go with it (a part's
 *   model versions, a service job's PPS records). They run in the same
 *   transaction as the record's own write, so a failure in either leaves
 *   nothing behind.
 */
export interface RecordHooks {
  readonly prepare?: (context: OperationContext, input: StoredRecord, previous: StoredRecord | undefined) => Step<StoredRecord>
  readonly written?: (context: OperationContext, stored: StoredRecord, previous: StoredRecord | undefined) => Step<void>
  readonly removed?: (context: OperationContext, removed: StoredRecord) => Step<void>
}

/** `operation` in one transaction: every write it makes is kept, or none. */
export const transactional = (operation: Operation): Operation => (context, request) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql.withTransaction(operation(context, request)))

const keep = (record: StoredRecord, keys: ReadonlyArray<string>) => Object.fromEntries(keys.filter((key) => key in record).map((key) => [key, record[key]]))

export const crudOperations = (resource: Resource, hooks: RecordHooks = {}): Operations => {
  const name = resource.name
  const prepare = hooks.prepare ?? ((_context, input) => Effect.succeed(input))
  const written = hooks.written
  const removed = hooks.removed
  /** The record's write and what goes with it, in one transaction when there is more than the one write. */
  const atomically = <A>(write: Step<A>, after: ((record: A) => Step<void>) | undefined): Step<A> =>
    after === undefined
      ? write
      : Effect.flatMap(SqlClient.SqlClient, (sql) => sql.withTransaction(Effect.tap(write, after)))
  const list: Operation = (context, request) =>
    Effect.gen(function*() {
      const records = yield* RecordRepository
      return yield* records.list(name, context.appId, toRecordFilter(resource.filters, request.query ?? {}))
    })
  const get: Operation = (context, request) =>
    Effect.gen(function*() {
      const records = yield* RecordRepository
      return (yield* records.find(name, context.appId, param(request, "id"))) ?? null
    })
  const lookup: Operation = (context, request) =>
    Effect.gen(function*() {
      const records = yield* RecordRepository
      return (yield* records.lookup(name, context.appId, String(request.query?.identifier ?? ""))) ?? null
    })
  const create: Operation = (context, request) =>
    Effect.gen(function*() {
      const records = yield* RecordRepository
      const input = request.payload as StoredRecord
      yield* checkReferences(resource, context, input)
      const prepared = yield* prepare(context, input, undefined)
      return yield* atomically(
        records.insert(name, context.appId, prepared, { numberPrefix: resource.storage.numberPrefix }),
        written === undefined ? undefined : (stored) => written(context, stored, undefined)
      )
    })
  const replace: Operation = (context, request) =>
    Effect.gen(function*() {
      const records = yield* RecordRepository
      const id = param(request, "id")
      const input = request.payload as StoredRecord
      const previous = yield* records.find(name, context.appId, id)
      if (previous === undefined) return yield* EngineError.notFound(name, id)
      yield* checkReferences(resource, context, input)
      const prepared = yield* prepare(context, { ...keep(previous, resource.computedKeys), ...input }, previous)
      return yield* atomically(
        Effect.flatMap(records.replace(name, context.appId, id, prepared), (replaced) =>
          replaced === undefined ? Effect.fail(EngineError.notFound(name, id)) : Effect.succeed(replaced)),
        written === undefined ? undefined : (stored) =>
          written(context, stored, previous)
      )
    })
  const remove: Operation = (context, request) =>
    Effect.gen(function*() {
      const records = yield* RecordRepository
      const id = param(request, "id")
      return yield* atomically(
        Effect.flatMap(records.remove(name, context.appId, id), (record) =>
          record === undefined ? Effect.fail(EngineError.notFound(name, id)) : Effect.succeed(record)),
        removed === undefined ? undefined : (record) =>
          removed(context, record)
      )
    })
  return {
    [`${name}.list`]: list,
    [`${name}.get`]: get,
    [`${name}.lookup`]: lookup,
    [`${name}.create`]: create,
    [`${name}.replace`]: replace,
    [`${name}.remove`]: remove
  }
}
