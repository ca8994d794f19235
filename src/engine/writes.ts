/**
 * The workflows' writes of records (everything outside the record
 * operations of crud.ts): each locks the deletable records the new version
 * references before it stores it, as crud.ts's writes do, so that a delete
 * running at the same time either waits for the write and counts its
 * reference, or has committed and the write is refused (422 naming the
 * field). See integrity.ts. They run in the workflow's transaction, which
 * the locks last until; a workflow writes a record's own row before the rows
 * a delete of it releases (a job before its PPS records, a machine before
 * its reels), as the delete locks them in that order.
 */
import { Effect } from "effect"
import { lockReferenced, locksOnWrite } from "./integrity.ts"
import { type InsertOptions, RecordRepository, type StoredRecord } from "./RecordRepository.ts"

/** Stores a new record of `resource` for the app, what it references locked. */
export const insertLocked = Effect.fnUntraced(function*(resource: string, appId: string, record: StoredRecord, options?: InsertOptions) {
  const records = yield* RecordRepository
  if (locksOnWrite(resource, record)) yield* lockReferenced(resource, appId, record, undefined)
  return yield* records.insert(resource, appId, record, options)
})

/**
 * Replaces the app's record of `resource` (storage keeps its id, number and
 * createdAt), what the new version references locked; `undefined` when the
 * app has no such record of its own. A reference the stored version holds
 * already is locked but not refused (integrity.ts), so the stored version is
 * read first.
 */
export const replaceLocked = Effect.fnUntraced(function*(resource: string, appId: string, id: string, record: StoredRecord) {
  const records = yield* RecordRepository
  if (locksOnWrite(resource, record)) {
    const previous = yield* records.find(resource, appId, id)
    if (previous === undefined) return undefined
    yield* lockReferenced(resource, appId, record, previous)
  }
  return yield* records.replace(resource, appId, id, record)
})
