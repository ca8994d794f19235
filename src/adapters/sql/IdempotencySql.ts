/**
 * IdempotencyStore over SQL: table `idempotency_key` (migration
 * 0010_idempotency_keys), one row per app and key.
 *
 * Every step is one statement, so several instances on one database agree
 * without locks held across the call: the claim is an INSERT that takes the
 * key only where no live row holds it (ON CONFLICT ... DO UPDATE ... WHERE:
 * a row whose 24 h are over, or a `running` row of the same request whose
 * lease is over); when it takes nothing, a SELECT says what holds the key.
 * A running claim's lease is short (LEASE_SECONDS) and renewed by its
 * instance while the call runs, so the key of an instance that died is free
 * again within seconds.
 * Completing and releasing name the claim's owner (its request id), so a
 * call whose lease was taken over cannot overwrite the answer of the call
 * that took it. Times are the database's (`now()`), the one clock every
 * instance shares.
 *
 * Rows whose 24 h are over are taken over by the next claim of their key,
 * and deleted in the background, a bounded batch at a time.
 */
import { Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { traced } from "../../domain/Span.ts"
import { type ClaimOutcome, IDEMPOTENCY_TTL_MS, type IdempotencyClaim, IdempotencyStore, StoredAnswer } from "../../services/IdempotencyStore.ts"
import { storageFailure } from "../storage/StorageErrors.ts"

/**
 * How long a `running` claim holds its key without news of its instance: the
 * instance renews the leases of the claims it holds every LEASE_RENEWAL, so
 * a lease runs out only when its instance stopped (killed, frozen, cut off
 * from the database), and a retry takes the key over within seconds.
 */
export const LEASE_SECONDS = 10
const LEASE_RENEWAL = "3 seconds"

/** Rows deleted per statement, and statements per purge: the purge's work is bounded. */
const PURGE_BATCH = 1_000
const PURGE_BATCHES = 10
const PURGE_INTERVAL = "10 minutes"

/** A row that holds a key, as the SELECT after a refused claim reads it. */
interface HeldRow {
  readonly fingerprint: string
  readonly state: "running" | "done"
  readonly status: number | null
  readonly headers: string | null
  readonly body: string | null
}

const decodeHeaders = Schema.decodeUnknownEffect(Schema.fromJsonString(StoredAnswer.fields.headers))

const CLAIMED: ClaimOutcome = { _tag: "Claimed" }
const IN_USE: ClaimOutcome = { _tag: "InUse" }
const REUSED: ClaimOutcome = { _tag: "Reused" }

/** Claim attempts when the row that refused one is gone by the time it is read (released meanwhile). */
const CLAIM_ATTEMPTS = 3

export const IdempotencySql = Layer.effect(
  IdempotencyStore,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const leaseSeconds = LEASE_SECONDS
    const ttlSeconds = IDEMPOTENCY_TTL_MS / 1000
    /** The claims this instance holds (running calls), by `app key owner`: their leases are renewed. */
    const held = new Map<string, { readonly appId: string; readonly key: string; readonly owner: string }>()
    const heldId = (claim: { readonly appId: string; readonly key: string; readonly owner: string }) => `${claim.appId}\n${claim.key}\n${claim.owner}`

    const take = (claim: { appId: string; key: string; fingerprint: string; owner: string }) =>
      sql<{ owner: string }>`
        INSERT INTO idempotency_key AS held (app_id, key, fingerprint, owner, state, created_at, expires_at, lease_until)
        VALUES (${claim.appId}, ${claim.key}, ${claim.fingerprint}, ${claim.owner}, 'running', now(),
                now() + make_interval(secs => ${ttlSeconds}), now() + make_interval(secs => ${leaseSeconds}))
        ON CONFLICT (app_id, key) DO UPDATE SET
          fingerprint = EXCLUDED.fingerprint, owner = EXCLUDED.owner, state = 'running',
          status = NULL, headers = NULL, body = NULL,
          created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at, lease_until = EXCLUDED.lease_until
        WHERE held.expires_at <= now()
           OR (held.state = 'running' AND held.lease_until <= now() AND held.fingerprint = EXCLUDED.fingerprint)
        RETURNING owner`

    const holder = (appId: string, key: string) =>
      sql<HeldRow>`
        SELECT fingerprint, state, status, headers::text AS headers, body
        FROM idempotency_key WHERE app_id = ${appId} AND key = ${key}`

    const purgeBatch = () =>
      sql<{ key: string }>`
        DELETE FROM idempotency_key WHERE (app_id, key) IN (
          SELECT app_id, key FROM idempotency_key WHERE expires_at <= now()
          ORDER BY expires_at LIMIT ${PURGE_BATCH} FOR UPDATE SKIP LOCKED
        )
        RETURNING key`

    const purgeExpired = Effect.gen(function*() {
      let purged = 0
      for (let batch = 0; batch < PURGE_BATCHES; batch++) {
        const rows = yield* purgeBatch()
        purged += rows.length
        if (rows.length < PURGE_BATCH) break
      }
      return purged
    }).pipe(Effect.catchTag("SqlError", storageFailure), traced("IdempotencyStore.purgeExpired"))

    // In the background, every PURGE_INTERVAL; a failed purge (an outage, or a bug) is tried again at the next one.
    yield* Effect.forkScoped(
      purgeExpired.pipe(
        Effect.catchCause((cause) => Effect.logWarning("idempotency keys not purged", cause)),
        Effect.delay(PURGE_INTERVAL),
        Effect.forever
      )
    )

    /** One statement renews the leases of every claim held. */
    const renewLeases = Effect.suspend(() => {
      if (held.size === 0) return Effect.void
      const claims = [...held.values()]
      return sql`
        UPDATE idempotency_key AS k SET lease_until = now() + make_interval(secs => ${leaseSeconds})
        FROM unnest(${claims.map((c) => c.appId)}::text[], ${claims.map((c) => c.key)}::text[], ${claims.map((c) => c.owner)}::text[])
          AS c(app_id, key, owner)
        WHERE k.app_id = c.app_id AND k.key = c.key AND k.owner = c.owner AND k.state = 'running'`.pipe(Effect.asVoid)
    })
    // A renewal that fails (an outage) is tried at the next; claims then lapse after LEASE_SECONDS, and the engine's
    // own record of the key (src/engine/idempotency.ts) still keeps a write from happening twice.
    yield* Effect.forkScoped(
      renewLeases.pipe(
        Effect.catchCause((cause) => Effect.logDebug("idempotency leases not renewed", cause)),
        Effect.delay(LEASE_RENEWAL),
        Effect.forever
      )
    )
    const forget = (claim: IdempotencyClaim) => Effect.sync(() => held.delete(heldId(claim)))

    return IdempotencyStore.of({
      claim: (claim) =>
        Effect.gen(function*() {
          for (let attempt = 0; attempt < CLAIM_ATTEMPTS; attempt++) {
            if ((yield* take(claim)).length > 0) {
              held.set(heldId(claim), claim)
              return CLAIMED
            }
            const row = (yield* holder(claim.appId, claim.key))[0]
            if (row === undefined) continue
            if (row.fingerprint !== claim.fingerprint) return REUSED
            if (row.state === "running" || row.status === null) return IN_USE
            const headers = row.headers === null ? {} : yield* Effect.orDie(decodeHeaders(row.headers))
            return { _tag: "Replay", answer: { status: row.status, headers, body: row.body } } satisfies ClaimOutcome
          }
          // Taken and given back again and again meanwhile: the key is busy.
          return IN_USE
        }).pipe(Effect.catchTag("SqlError", storageFailure), traced("IdempotencyStore.claim")),

      complete: (claim, answer) =>
        sql`
          UPDATE idempotency_key
          SET state = 'done', status = ${answer.status}, headers = ${JSON.stringify(answer.headers)}::jsonb,
              body = ${answer.body}, lease_until = NULL, expires_at = now() + make_interval(secs => ${ttlSeconds})
          WHERE app_id = ${claim.appId} AND key = ${claim.key} AND owner = ${claim.owner} AND state = 'running'`.pipe(
          Effect.asVoid,
          Effect.ensuring(forget(claim)),
          Effect.catchTag("SqlError", storageFailure),
          traced("IdempotencyStore.complete")
        ),

      release: (claim) =>
        sql`
          DELETE FROM idempotency_key
          WHERE app_id = ${claim.appId} AND key = ${claim.key} AND owner = ${claim.owner} AND state = 'running'`.pipe(
          Effect.asVoid,
          Effect.ensuring(forget(claim)),
          Effect.catchTag("SqlError", storageFailure),
          traced("IdempotencyStore.release")
        ),

      purgeExpired,

      forgetSpace: (space) =>
        sql<{ key: string }>`DELETE FROM idempotency_key WHERE app_id = ${space} RETURNING key`.pipe(
          Effect.map((rows) => rows.length),
          Effect.catchTag("SqlError", storageFailure),
          traced("IdempotencyStore.forgetSpace")
        )
    })
  })
)
