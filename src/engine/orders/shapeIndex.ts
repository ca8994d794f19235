/**
 * The shape index: per app, every analysed part's shape signature packed in
 * one Float32Array, so ranking 100,000 parts is one pass over memory instead
 * of loading 100,000 JSON documents per call.
 *
 * Its source is the `part_shape` table (migration 0005), which triggers on
 * `engine_record` keep in step with every part write, whoever makes it: an
 * insert or a change of geometry writes the part's row, a delete turns it
 * into a tombstone (geometry NULL). Each row carries the id of the
 * transaction that wrote it (`changed_xid`, a `xid8`).
 *
 * The index is built on first use and brought up to date on every call by
 * one indexed query: the rows with `changed_xid >= horizon`, where the
 * horizon is the oldest transaction still running when the index last read
 * (`pg_snapshot_xmin` of that statement's snapshot). Every row that read
 * could not see was written by a transaction at or after that horizon, so
 * nothing committed later is missed, however transactions interleave and
 * whichever engine instance wrote it; rows it re-reads are applied again
 * harmlessly. Reads of one index are serialised, so an older answer never
 * overwrites a newer one.
 *
 * Indexes are kept per database client (a test process runs several
 * databases) and per app, for the MAX_APPS apps used last.
 */
import { Effect, Semaphore } from "effect"
import { setRecent } from "../../domain/RecentMap.ts"
import { changesSince, currentDatabase, type ShapeRow } from "./ShapeRepository.ts"
import { scoreOf, type ShapeGeometry, shapeSignature, SIGNATURE_LENGTH, signatureDistance } from "./shapeSignature.ts"

/** Apps whose index stays in memory per database (about 15 MB per 100,000 parts each). */
const MAX_APPS = 32
const INITIAL_CAPACITY = 256

export interface RankedPart {
  readonly ticketModelId: string
  readonly score: number
}

/** Higher score first; equal scores by id. */
const ranksBefore = (score: number, id: string, otherScore: number, otherId: string) => score > otherScore || (score === otherScore && id < otherId)

/** One app's signatures: slot i holds part `ids[i]` at `signatures[i * SIGNATURE_LENGTH]`. Exported for its tests. */
export class AppShapes {
  readonly lock = Semaphore.makeUnsafe(1)
  /** Where the next refresh starts; undefined until the first (full) read. */
  horizon: string | undefined = undefined
  private ids: Array<string> = []
  private readonly slots = new Map<string, number>()
  private signatures = new Float32Array(INITIAL_CAPACITY * SIGNATURE_LENGTH)

  get size() {
    return this.ids.length
  }

  upsert(id: string, geometry: ShapeGeometry) {
    let slot = this.slots.get(id)
    if (slot === undefined) {
      slot = this.ids.length
      if ((slot + 1) * SIGNATURE_LENGTH > this.signatures.length) {
        const grown = new Float32Array(this.signatures.length * 2)
        grown.set(this.signatures)
        this.signatures = grown
      }
      this.ids.push(id)
      this.slots.set(id, slot)
    }
    shapeSignature(geometry, this.signatures, slot * SIGNATURE_LENGTH)
  }

  /** The signature of part `id`, if the index holds it (a copy). */
  signatureOf(id: string): Float32Array | undefined {
    const slot = this.slots.get(id)
    return slot === undefined ? undefined : this.signatures.slice(slot * SIGNATURE_LENGTH, (slot + 1) * SIGNATURE_LENGTH)
  }

  /** Removes a part: the last slot moves into its place. */
  remove(id: string) {
    const slot = this.slots.get(id)
    if (slot === undefined) return
    const last = this.ids.length - 1
    if (slot !== last) {
      const moved = this.ids[last]!
      this.ids[slot] = moved
      this.slots.set(moved, slot)
      this.signatures.copyWithin(slot * SIGNATURE_LENGTH, last * SIGNATURE_LENGTH, (last + 1) * SIGNATURE_LENGTH)
    }
    this.ids.pop()
    this.slots.delete(id)
  }

  /**
   * The `limit` parts nearest to `query`, best first, ties by id; `exclude`
   * (the queried part) left out. A bounded insertion list: a part enters only
   * when it beats the current last, so the pass is linear in the parts.
   */
  rank(query: Float32Array, exclude: string, limit: number): ReadonlyArray<RankedPart> {
    const ids = this.ids
    const signatures = this.signatures
    const bestScores = new Float64Array(limit)
    const bestIds = new Array<string>(limit)
    let count = 0
    // Once the list is full, a part farther than its last (with a margin far above rounding, so
    // equal scores still meet the tie by id) is dropped without its D2 term.
    let bound = Infinity
    for (let slot = 0; slot < ids.length; slot++) {
      const distance = signatureDistance(query, 0, signatures, slot * SIGNATURE_LENGTH, bound)
      if (distance > bound) continue
      const score = scoreOf(distance)
      const id = ids[slot]!
      if (count === limit && !ranksBefore(score, id, bestScores[limit - 1]!, bestIds[limit - 1]!)) continue
      if (id === exclude) continue
      // Shift the worse ones down (the last falls off when the list is full) and insert.
      let position = count < limit ? count : limit - 1
      while (position > 0 && ranksBefore(score, id, bestScores[position - 1]!, bestIds[position - 1]!)) {
        bestScores[position] = bestScores[position - 1]!
        bestIds[position] = bestIds[position - 1]!
        position--
      }
      bestScores[position] = score
      bestIds[position] = id
      if (count < limit) count++
      if (count === limit) bound = 1 / bestScores[limit - 1]! - 1 + 1e-9
    }
    return bestIds.slice(0, count).map((ticketModelId, index) => ({ ticketModelId, score: bestScores[index]! }))
  }

  apply(rows: ReadonlyArray<ShapeRow>) {
    for (const row of rows) {
      if (row.part_id === null) continue
      if (row.geometry === null) this.remove(row.part_id)
      else this.upsert(row.part_id, row.geometry)
    }
    const horizon = rows[0]?.horizon
    if (horizon !== undefined) this.horizon = horizon
  }
}

/** Indexes by database client, then by app (least recently used first). */
const indexes = new WeakMap<object, Map<string, AppShapes>>()

const appShapes = (database: object, appId: string): AppShapes => {
  let apps = indexes.get(database)
  if (apps === undefined) {
    apps = new Map()
    indexes.set(database, apps)
  }
  const shapes = apps.get(appId) ?? new AppShapes()
  setRecent(apps, appId, shapes, MAX_APPS)
  return shapes
}

/**
 * The app's parts ranked by similarity to part `partId`, best first, at most
 * `limit`, without the part itself: the index brought up to date, then one
 * pass. The part's signature comes from the index, which has just read every
 * committed write; only when the index does not hold the part (no such part,
 * one without geometry, or one written since) is `geometryOf` asked for its
 * geometry, and its failure (not found, no geometry) is the answer.
 */
export const rankSimilarParts = Effect.fnUntraced(function*<E, R>(
  appId: string,
  partId: string,
  limit: number,
  geometryOf: Effect.Effect<ShapeGeometry, E, R>
) {
  const shapes = appShapes(yield* currentDatabase, appId)
  return yield* shapes.lock.withPermit(
    Effect.gen(function*() {
      const cold = shapes.horizon === undefined
      const rows = yield* changesSince(appId, shapes.horizon).pipe(
        Effect.withSpan("similarity refresh", { attributes: { "similarity.cold": cold } }, { captureStackTrace: false })
      )
      shapes.apply(rows)
      const query = shapes.signatureOf(partId) ?? shapeSignature(yield* geometryOf)
      return yield* Effect.sync(() => shapes.rank(query, partId, limit)).pipe(
        Effect.withSpan("similarity rank", { attributes: { "similarity.parts": shapes.size, "similarity.changes": rows.length } }, {
          captureStackTrace: false
        })
      )
    })
  )
})
