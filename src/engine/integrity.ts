/**
 * Referential integrity: which records name which, and the two rules that
 * keep them whole.
 *
 * - A delete (crud.ts `remove`) is refused with a 409 naming the app's
 *   records that reference the record, by resource and how many.
 * - A write that adds a reference to a record that is gone is refused with
 *   the 422 naming the field: the record operations' (crud.ts `create`,
 *   `replace`) and the workflows' alike (writes.ts `insertLocked`,
 *   `replaceLocked`, which every write outside crud.ts goes through, but
 *   the demo seed's, which writes its own new records).
 *
 * The references are found from the resource definitions (every field of
 * `storage.references`), plus the ones inside records that no definition
 * declares: a catalogue model's configurations, an accepted quote's lines, a
 * service job's parts, a reel group's material, a part's catalogue
 * configuration. A few are resolved by the delete instead (RESOLVED_BY_DELETE):
 * it does not count them, but writes lock them all the same, so that the
 * delete, which finds them after its lock, finds every one.
 *
 * Why no reference can slip between the check and the delete, on READ
 * COMMITTED and without SERIALIZABLE's retries: the delete locks the row it
 * deletes (`FOR UPDATE`) before it counts, and a write locks the rows it
 * references (`FOR KEY SHARE`) before it stores, each in its own transaction;
 * the two locks conflict. If the delete locks first, the write waits until
 * the delete commits and then finds the row gone (422). If the write locks
 * first, the delete waits until the write commits, and its count, a new
 * statement with a new snapshot, sees the new reference (409). `FOR KEY
 * SHARE` does not conflict with an update that keeps the key, so references
 * never hold up replacing the record they name. Only records that can be
 * deleted (a `remove` endpoint in the contract) are locked: global reference
 * data and records without a delete never are; nor are an accepted quote's
 * lines, which the ticket's lock guards (`guardedBy`).
 */
import { Effect, Predicate } from "effect"
import type { SqlError } from "effect/sql/SqlError"
import { groupsOf } from "../contract/Operations.ts"
import { PublicContract } from "../contract/PublicApi.ts"
import type { Resource } from "../domain/Resource.ts"
import * as catalogue from "../domain/resources/catalogue.ts"
import * as customer from "../domain/resources/Customer.ts"
import * as orders from "../domain/resources/orders.ts"
import * as production from "../domain/resources/production.ts"
import * as reference from "../domain/resources/reference.ts"
import { EngineError } from "./EngineError.ts"
import type { Step } from "./Operation.ts"
import { EXTERNAL_REFERENCE_INDEX, type KeyPath, RecordRepository, type StoredRecord } from "./RecordRepository.ts"

/** Where a record holds a key: field names, `*` for each entry of a list (`["configurations", "*", "materialId"]`). */

/** Records of `from` name a record of `target` at `path`. */
export interface Reference {
  readonly from: string
  readonly path: KeyPath
  readonly target: string
  /** What of the target the key is: its id unless said (a part names a catalogue model by one of its configuration ids). */
  readonly targetKey?: KeyPath | undefined
  /** Only records whose `field` has one of `values` reference the target (a quote's lines, once it is accepted). */
  readonly only?: { readonly field: string; readonly values: ReadonlyArray<string>; readonly qualifier: string } | undefined
  /** Why a write does not lock the target: another lock orders the write and the delete (and taking this one too could deadlock). */
  readonly guardedBy?: string | undefined
}

const isResource = (value: unknown): value is Resource =>
  Predicate.isObject(value) && typeof value.name === "string" && Predicate.isObject(value.storage) && "listQuery" in value && "computedKeys" in value

/** Every resource definition of the domain. */
export const RESOURCES: ReadonlyArray<Resource> = [catalogue, customer, orders, production, reference]
  .flatMap((module) => Object.values(module) as ReadonlyArray<unknown>)
  .filter(isResource)

/** References inside records that the definitions' `storage.references` (one field, one id) cannot declare. */
const UNDECLARED: ReadonlyArray<Reference> = [
  { from: "catalogueModel", path: ["configurations", "*", "technologyId"], target: "technology" },
  { from: "catalogueModel", path: ["configurations", "*", "materialId"], target: "material" },
  { from: "catalogueModel", path: ["configurations", "*", "colourId"], target: "colour" },
  { from: "ticketModel", path: ["catalogueModelConfigurationId"], target: "catalogueModel", targetKey: ["configurations", "*", "id"] },
  { from: "ticketModel", path: ["serviceIds", "*"], target: "service" },
  { from: "material", path: ["colourIds", "*"], target: "colour" },
  { from: "quotationForm", path: ["parameterFieldIds", "*"], target: "productionParameterField" },
  { from: "serviceJob", path: ["ticketModelIds", "*"], target: "ticketModel" },
  ...(["ticketModelId", "itemId"] as const).map((field): Reference => ({
    from: "ticketQuote",
    path: ["lines", "*", field],
    target: field === "itemId" ? "item" : "ticketModel",
    // A sent quote is superseded when its ticket's parts change; an accepted one is the contract.
    only: { field: "state", values: ["accepted"], qualifier: "accepted" },
    // A quote is accepted under its ticket's lock (quotes.ts), and a part is deleted only under that lock while its
    // ticket is draft or quoted (parts.ts): the delete waits for the acceptance and is refused, or the quote is superseded.
    guardedBy: "ticket"
  })),
  // Reel groups are stored without a resource definition (numeric ids, production/reels.ts).
  { from: "reelGroup", path: ["materialId"], target: "material" },
  { from: "reelGroup", path: ["colourId"], target: "colour" },
  { from: "reelGroup", path: ["supplierId"], target: "supplier" },
  { from: "reel", path: ["reelGroupId"], target: "reelGroup" },
  // Machining strategies are stored without a resource definition (orders/machiningStrategies.ts).
  { from: "machiningStrategy", path: ["ticketModelId"], target: "ticketModel" }
]

/**
 * References that deleting their target resolves rather than refuses: the
 * records go with it, or let go of it, in the delete's transaction.
 */
const RESOLVED_BY_DELETE: ReadonlyArray<{ readonly from: string; readonly field: string }> = [
  // A deleted service job's PPS records stay with their parts, in no job (production/serviceJobs.ts).
  { from: "pps", field: "serviceJobId" },
  // A part's model versions and machining strategies are deleted with it (orders/parts.ts).
  { from: "modelVersion", field: "ticketModelId" },
  { from: "machiningStrategy", field: "ticketModelId" },
  // A deleted machine's reels are released (production/machines.ts).
  { from: "reel", field: "machineId" }
]

const resolvedByDelete = (ref: Reference) => RESOLVED_BY_DELETE.some(({ field, from }) => ref.from === from && ref.path.length === 1 && ref.path[0] === field)

/** Every reference between the engine's records, those a delete resolves included. */
const ALL_REFERENCES: ReadonlyArray<Reference> = [
  ...RESOURCES.flatMap((resource) =>
    Object.entries(resource.storage.references ?? {}).map(([field, target]): Reference => ({ from: resource.name, path: [field], target }))
  ),
  ...UNDECLARED
]

/** Every reference between the engine's records that a delete must respect. */
export const REFERENCES: ReadonlyArray<Reference> = ALL_REFERENCES.filter((ref) => !resolvedByDelete(ref))

/** Resources the contract can delete (a `remove` endpoint): the only ones a write locks. */
export const DELETABLE: ReadonlySet<string> = new Set(
  groupsOf(PublicContract).filter((group) => Object.values(group.endpoints).some((endpoint) => endpoint.identifier === "remove")).map((group) =>
    group.identifier
  )
)

/** The keys a record holds at `path`, each with the dotted field that holds it (`configurations.1.materialId`). */
export const keysAt = (record: unknown, path: KeyPath, at: ReadonlyArray<string | number> = []): ReadonlyArray<{ key: string; field: string }> => {
  if (path.length === 0) {
    return typeof record === "string" || typeof record === "number" ? [{ key: String(record), field: at.join(".") }] : []
  }
  const [head, ...rest] = path
  if (head === "*") return Array.isArray(record) ? record.flatMap((entry, index) => keysAt(entry, rest, [...at, index])) : []
  return Predicate.isObject(record) && Object.hasOwn(record, head!) ? keysAt((record as Record<string, unknown>)[head!], rest, [...at, head!]) : []
}

const applies = (ref: Reference, record: StoredRecord | undefined) =>
  record !== undefined && (ref.only === undefined || ref.only.values.includes(String(record[ref.only.field])))

/** A resource's name in a sentence, singular or plural, from its title (`Part (ticket model)` → `part`, `parts`). */
const titleOf = (name: string, count: number) => {
  const title = RESOURCES.find((resource) => resource.name === name)?.title.replace(/\s*\(.*\)$/, "") ??
    name.replace(/[A-Z]/g, (letter) => ` ${letter.toLowerCase()}`)
  const word = /^[A-Z][a-z]/.test(title) ? title[0]!.toLowerCase() + title.slice(1) : title
  return count === 1 || word.endsWith("s") ? word : `${word}s`
}

const sentence = (parts: ReadonlyArray<string>) => parts.length === 1 ? parts[0]! : `${parts.slice(0, -1).join(", ")} and ${parts.at(-1)!}`

/** The counts of the app's records that hold one of each reference's keys, by referencing resource, as words. */
const referrers = Effect.fnUntraced(function*(appId: string, refs: ReadonlyArray<{ readonly ref: Reference; readonly keys: ReadonlyArray<string> }>) {
  const rows = yield* (yield* RecordRepository).countReferrers(appId, refs.map(({ keys, ref }) => ({ from: ref.from, only: ref.only, path: ref.path, keys })))
  const counts = new Map(rows.map((row) => [row.resource, row.n]))
  return [...new Set(refs.map(({ ref }) => ref.from))].flatMap((from) => {
    const n = counts.get(from)
    if (n === undefined) return []
    const qualifier = refs.find(({ ref }) => ref.from === from)?.ref.only?.qualifier
    return [`${n} ${qualifier === undefined ? "" : `${qualifier} `}${titleOf(from, n)} (${from})`]
  })
})

const uniqueKeys = (record: unknown, path: KeyPath) => [...new Set(keysAt(record, path).map(({ key }) => key))]

/**
 * Refuses to delete `record` of `target` while records of the app reference
 * it: 409 naming each referencing resource and how many. Runs in the delete's
 * transaction, after its row is locked (see the module's comment).
 */
export const refuseIfReferenced = Effect.fnUntraced(function*(target: string, appId: string, record: StoredRecord) {
  const refs = REFERENCES.filter((ref) => ref.target === target).map((ref) => ({ ref, keys: uniqueKeys(record, ref.targetKey ?? ["id"]) }))
  const users = yield* referrers(appId, refs)
  if (users.length > 0) return yield* EngineError.conflict(`${target} ${String(record.id)} is used by ${sentence(users)}: it cannot be deleted`)
})

/**
 * The app's records of the resources `from` that reference `record` of
 * `target`, in words (`2 machines (machine) and 1 service job (serviceJob)`),
 * or undefined when none does: what a refused change of a field those
 * records must agree with names (a machine group's technology, say).
 */
export const usedBy = (target: string, appId: string, record: StoredRecord, from: ReadonlyArray<string>): Step<string | undefined> =>
  Effect.map(
    referrers(
      appId,
      ALL_REFERENCES.filter((ref) => ref.target === target && from.includes(ref.from)).map((ref) => ({
        ref,
        keys: uniqueKeys(record, ref.targetKey ?? ["id"])
      }))
    ),
    (users) => users.length === 0 ? undefined : sentence(users)
  )

/** The references to keys inside a `target` record (not its id) that replacing `previous` by `next` drops. */
const droppedKeys = (target: string, previous: StoredRecord, next: StoredRecord) =>
  REFERENCES.filter((ref) => ref.target === target && ref.targetKey !== undefined).map((ref) => {
    const kept = new Set(uniqueKeys(next, ref.targetKey!))
    return { ref, keys: uniqueKeys(previous, ref.targetKey!).filter((key) => !kept.has(key)) }
  }).filter(({ keys }) => keys.length > 0)

/** Whether replacing `previous` by `next` drops a key other records may name (a catalogue model's configuration). */
export const dropsKeys = (target: string, previous: StoredRecord, next: StoredRecord) => droppedKeys(target, previous, next).length > 0

/**
 * Refuses a replace that drops a key other records name, as a delete of it
 * (a catalogue model's configuration that parts were made from): 409 naming
 * the key and the referencing records. Runs in the replace's transaction,
 * after the row is locked (`FOR UPDATE`) and read again as `stored`.
 */
export const refuseIfDroppedKeysReferenced = Effect.fnUntraced(function*(target: string, appId: string, stored: StoredRecord, next: StoredRecord) {
  for (const dropped of droppedKeys(target, stored, next)) {
    const users = yield* referrers(appId, [dropped])
    if (users.length === 0) continue
    const what = dropped.ref.targetKey!.filter((segment) => segment !== "*" && segment !== "id").join(".").replace(/s$/, "")
    return yield* EngineError.conflict(
      `${what} ${dropped.keys.join(", ")} of ${target} ${String(stored.id)} is used by ${sentence(users)}: a replace cannot drop it`
    )
  }
})

/**
 * Locks (`FOR KEY SHARE`) the deletable records that `record`, about to be
 * stored as `resource`, references, until the write's transaction ends, and
 * refuses a reference the record adds to one that is gone (422 naming the
 * field). A reference `previous` (the stored record of a replace) already
 * held is locked but not refused: it is the delete's to keep.
 */
export const lockReferenced = Effect.fnUntraced(function*(resource: string, appId: string, record: StoredRecord, previous: StoredRecord | undefined) {
  const records = yield* RecordRepository
  for (const ref of lockedReferencesOf(resource)) {
    if (!applies(ref, record)) continue
    const held = keysAt(record, ref.path)
    if (held.length === 0) continue
    const keys = [...new Set(held.map(({ key }) => key))]
    const targetKey = ref.targetKey ?? ["id"]
    const rows = yield* records.lockHolding(ref.target, appId, targetKey, keys)
    const found = new Set(rows.flatMap((row) => keysAt(row, targetKey).map(({ key }) => key)))
    const before = new Set(applies(ref, previous) ? keysAt(previous, ref.path).map(({ key }) => key) : [])
    const gone = held.find(({ key }) => !found.has(key) && !before.has(key))
    if (gone !== undefined) return yield* EngineError.unknownReference(gone.field, ref.target, gone.key)
  }
})

/** The references of `resource` whose targets can be deleted, but those another lock guards: what a write of it locks. */
const lockedReferencesOf = (resource: string) =>
  ALL_REFERENCES.filter((ref) => ref.from === resource && DELETABLE.has(ref.target) && ref.guardedBy === undefined)

/** Whether storing `record` as `resource` locks any record (so that the write needs a transaction). */
export const locksOnWrite = (resource: string, record: StoredRecord) =>
  lockedReferencesOf(resource).some((ref) => applies(ref, record) && keysAt(record, ref.path).length > 0)

// ---------------------------------------------------------------------------
// Identifiers

/** The 409 of an `externalReference` another record of the app holds, naming that record. */
const externalReferenceTaken = (resource: string, value: string, holder: StoredRecord) => {
  const id = String(holder.id)
  const named = typeof holder.number === "string" ? `${holder.number} (id ${id})` : id
  return EngineError.conflict(`externalReference ${value} is already ${resource} ${named}`)
}

/** Refuses `record`'s `externalReference` when another record of the app and resource holds it (`id` is the record's own on a replace). */
export const refuseTakenExternalReference = Effect.fnUntraced(function*(resource: string, appId: string, record: StoredRecord, id: string | undefined) {
  const value = record.externalReference
  if (typeof value !== "string") return
  const holder = yield* (yield* RecordRepository).findByExternalReference(resource, appId, value)
  if (holder !== undefined && holder.id !== id) return yield* externalReferenceTaken(resource, value, holder)
})

/** Whether `error` is the unique index of external references refusing a write (another write took the value first). */
const isExternalReferenceTaken = (error: EngineError | SqlError): error is SqlError =>
  error._tag === "SqlError" && error.reason._tag === "UniqueViolation" && error.reason.constraint === EXTERNAL_REFERENCE_INDEX

/**
 * `write`, with the unique index's refusal of `record`'s `externalReference`
 * (a concurrent write took it after the check) as the same 409 naming the
 * record that holds it. `write` must have rolled back when this runs: it is a
 * transaction of its own.
 */
export const withUniqueExternalReference = <A>(resource: string, appId: string, record: StoredRecord, write: Step<A>): Step<A> =>
  Effect.catchIf(write, isExternalReferenceTaken, (error) =>
    Effect.gen(function*() {
      const value = String(record.externalReference)
      const holder = yield* (yield* RecordRepository).findByExternalReference(resource, appId, value)
      return yield* (holder === undefined ? Effect.fail(error) : externalReferenceTaken(resource, value, holder))
    }))
