/**
 * The record operations of a resource, derived from its definition: list,
 * get, lookup by any identifier, create, whole-record replace and delete,
 * scoped to the caller's app, with its references checked: a delete is
 * refused while other records reference the record, a write refused when it
 * references one that is gone, and an `externalReference` is one record's
 * per app and resource (integrity.ts), never one of the resource's numbers.
 */
import { Effect } from "effect"
import { asCreated, type Page } from "../contract/Operations.ts"
import type { Resource } from "../domain/Resource.ts"
import { toRecordFilter } from "../domain/Resource.ts"
import { EngineError } from "./EngineError.ts"
import {
  dropsKeys,
  lockReferenced,
  locksOnWrite,
  refuseIfDroppedKeysReferenced,
  refuseIfReferenced,
  refuseTakenExternalReference,
  withUniqueExternalReference
} from "./integrity.ts"
import type { OperationContext, Step } from "./Operation.ts"
import { RecordRepository, type StoredRecord } from "./RecordRepository.ts"
import { inTransaction } from "./transaction.ts"
import { asRecord, checkReferences, type InputOf, type PrepareInput, type RecordOf, type StoredFields } from "./typedRecords.ts"

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
export interface RecordHooks<R extends Resource> {
  readonly prepare?: (context: OperationContext, input: PrepareInput<R>, previous: RecordOf<R> | undefined) => Step<StoredFields<R>>
  readonly written?: (context: OperationContext, stored: RecordOf<R>, previous: RecordOf<R> | undefined) => Step<void>
  readonly removed?: (context: OperationContext, removed: RecordOf<R>) => Step<void>
}

/** `operation` in one transaction: every write it makes is kept, or none. */
export const transactional = <I, A>(operation: (context: OperationContext, input: I) => Step<A>) => (context: OperationContext, input: I): Step<A> =>
  inTransaction(operation(context, input))

const keep = (record: StoredRecord, keys: ReadonlyArray<string>) => Object.fromEntries(keys.filter((key) => key in record).map((key) => [key, record[key]]))

/** The record operations of a resource; a group takes the ones the spec gives it. */
export interface RecordHandlers<R extends Resource> {
  readonly list: (context: OperationContext, input: { readonly query: R["listQuery"]["Type"] }) => Step<Page<RecordOf<R>>>
  readonly get: (context: OperationContext, input: { readonly params: { readonly id: string } }) => Step<RecordOf<R> | null>
  readonly lookup: (context: OperationContext, input: { readonly query: { readonly identifier: string } }) => Step<RecordOf<R> | null>
  readonly create: (context: OperationContext, input: { readonly payload: InputOf<R> }) => Step<RecordOf<R>>
  readonly replace: (
    context: OperationContext,
    /** The body's `id`, when it carries one, is the path's (the gateway checks it): never stored. */
    input: { readonly params: { readonly id: string }; readonly payload: InputOf<R> & { readonly id?: string | undefined } }
  ) => Step<RecordOf<R>>
  readonly remove: (context: OperationContext, input: { readonly params: { readonly id: string } }) => Step<RecordOf<R>>
  /**
   * `replace`, but that an id the app has no record with creates one under
   * it (answered `asCreated`: the gateway's 201). Writes of one id are
   * ordered by a lock on it, so two creating at once make one record.
   */
  readonly replaceOrCreate: RecordHandlers<R>["replace"]
}

/**
 * An `externalReference` that reads as one of the resource's own numbers
 * (`T-000002`, in any case, for a ticket) is refused (422 naming the
 * field): a lookup tries numbers before external references, so it would
 * find the numbered record, not this one.
 */
const refuseNumberLike = (resource: Resource, payload: StoredRecord): Step<void> => {
  const prefix = resource.storage.numberPrefix
  const reference = payload.externalReference
  if (prefix === undefined || typeof reference !== "string" || !new RegExp(`^${prefix}-[0-9]{6,}$`, "i").test(reference)) return Effect.void
  return Effect.fail(EngineError.invalid(
    `externalReference: ${reference} reads as a ${resource.name} number (${prefix}-000042, the app's own numbering): ` +
      `a lookup by it finds the ${resource.name} so numbered; choose a reference of your own system`
  ))
}

/** What an id an integrator chooses may be: URL-safe (RFC 3986 unreserved), as every path carries it unescaped. */
const CHOSEN_ID = /^[A-Za-z0-9][A-Za-z0-9._~-]{0,99}$/

export const recordHandlers = <R extends Resource>(resource: R, hooks: RecordHooks<R> = {}): RecordHandlers<R> => {
  const name = resource.name
  const prepare = hooks.prepare ?? ((_context, input) => Effect.succeed(input as StoredFields<R>))
  const written = hooks.written
  const removed = hooks.removed
  const typed = (record: StoredRecord) => asRecord(resource, record)
  /** The steps of a write (`write`), in order; a generator defined once, not per call (IncomingSecretGuard.ts says why). */
  const writeSteps = Effect.fnUntraced(function*(
    context: OperationContext,
    prepared: StoredRecord,
    previous: StoredRecord | undefined,
    store: Step<StoredRecord>,
    drops: boolean,
    locks: boolean
  ) {
    if (drops && previous !== undefined) {
      // Dropping a key others name is a delete of it: the same lock, then the same count.
      const records = yield* RecordRepository
      const stored = yield* records.lockForRemoval(name, context.appId, String(previous.id))
      if (stored !== undefined) yield* refuseIfDroppedKeysReferenced(name, context.appId, stored, prepared)
    }
    if (locks) yield* lockReferenced(name, context.appId, prepared, previous)
    const stored = yield* store
    if (written !== undefined) yield* written(context, typed(stored), previous === undefined ? undefined : typed(previous))
    return typed(stored)
  })
  /**
   * The record's write and what goes with it: on a replace that drops a key
   * other records name, the refusal; the rows it references locked
   * (integrity.ts), the write, the `written` hook. One transaction when there
   * is more than the one statement, or an external reference whose unique
   * index may refuse it (the refusal is then read after the rollback).
   */
  const write = (
    context: OperationContext,
    prepared: StoredRecord,
    previous: StoredRecord | undefined,
    store: Step<StoredRecord>
  ): Step<RecordOf<R>> => {
    const locks = locksOnWrite(name, prepared)
    const drops = previous !== undefined && dropsKeys(name, previous, prepared)
    const steps = writeSteps(context, prepared, previous, store, drops, locks)
    const external = typeof prepared.externalReference === "string"
    if (!locks && !drops && written === undefined && !external) return steps
    const atomic = inTransaction(steps)
    return external ? withUniqueExternalReference(name, context.appId, prepared, atomic) : atomic
  }
  const removal = Effect.fnUntraced(function*(context: OperationContext, id: string) {
    const records = yield* RecordRepository
    const locked = yield* records.lockForRemoval(name, context.appId, id)
    if (locked === undefined) return yield* EngineError.notFound(name, id)
    yield* refuseIfReferenced(name, context.appId, locked)
    const record = yield* records.remove(name, context.appId, id)
    if (record === undefined) return yield* EngineError.notFound(name, id)
    if (removed !== undefined) yield* removed(context, typed(record))
    return typed(record)
  })
  const create = Effect.fnUntraced(function*(context: OperationContext, payload: InputOf<R>, id: string | undefined) {
    const records = yield* RecordRepository
    yield* checkReferences(resource, context, payload)
    yield* refuseNumberLike(resource, payload)
    yield* refuseTakenExternalReference(name, context.appId, payload, undefined)
    const prepared: StoredRecord = yield* prepare(context, payload, undefined)
    const options = { numberPrefix: resource.storage.numberPrefix, ...(id === undefined ? {} : { id }) }
    return yield* write(context, prepared, undefined, records.insert(name, context.appId, prepared, options))
  })
  const replace = Effect.fnUntraced(function*(context: OperationContext, id: string, payload: InputOf<R>) {
    const records = yield* RecordRepository
    const found = yield* records.find(name, context.appId, id)
    if (found === undefined) return yield* EngineError.notFound(name, id)
    const previous = typed(found)
    yield* checkReferences(resource, context, payload)
    yield* refuseNumberLike(resource, payload)
    yield* refuseTakenExternalReference(name, context.appId, payload, id)
    const carried = keep(found, resource.computedKeys) as Partial<StoredFields<R>>
    const prepared: StoredRecord = yield* prepare(context, { ...carried, ...payload }, previous)
    return yield* write(
      context,
      prepared,
      found,
      Effect.flatMap(
        records.replace(name, context.appId, id, prepared),
        (replaced) => replaced === undefined ? Effect.fail(EngineError.notFound(name, id)) : Effect.succeed(replaced)
      )
    )
  })
  return {
    list: Effect.fnUntraced(function*(context, { query }) {
      const records = yield* RecordRepository
      const { records: page, total } = yield* records.page(name, context.appId, toRecordFilter(resource.filters, query, resource.caseInsensitiveFilters))
      return { items: page.map(typed), total }
    }),
    get: Effect.fnUntraced(function*(context, { params }) {
      const records = yield* RecordRepository
      const found = yield* records.find(name, context.appId, params.id)
      return found === undefined ? null : typed(found)
    }),
    lookup: Effect.fnUntraced(function*(context, { query }) {
      const records = yield* RecordRepository
      const found = yield* records.lookup(name, context.appId, query.identifier)
      return found === undefined ? null : typed(found)
    }),
    create: (context, { payload }) => create(context, payload, undefined),
    replace: (context, { params: { id }, payload: { id: _sameId, ...payload } }) => replace(context, id, payload),
    replaceOrCreate: (context, { params: { id }, payload: { id: _sameId, ...payload } }) =>
      inTransaction(Effect.gen(function*() {
        const records = yield* RecordRepository
        yield* records.lockKey(`record:${name}:${context.appId}:${id}`)
        if ((yield* records.find(name, context.appId, id)) !== undefined) return yield* replace(context, id, payload)
        if (!CHOSEN_ID.test(id)) {
          return yield* EngineError.invalid(
            `id: ${JSON.stringify(id)} is no ${name} of the app, and not an id a new one can have: 1 to 100 letters, digits, ` +
              "'-', '_', '.' or '~', starting with a letter or digit"
          )
        }
        return asCreated(yield* create(context, payload, id))
      })),
    // The row is locked before the records that reference it are counted, and deleted in the same
    // transaction: a reference written meanwhile waits for the lock, or is counted (integrity.ts).
    remove: (context, { params: { id } }) => inTransaction(removal(context, id))
  }
}
