/**
 * IdempotencyStore over SQL: table `idempotency_key` (migration
 * 0010_idempotency_keys), one row per app and key.
 *
 * Every step is one statement, so several instances on one database agree
 * without locks held across the call: the claim is an INSERT that takes the
 * key only where no live row holds it (ON CONFLICT ... DO UPDATE ... WHERE:
 * a row whose 24 h are over, or a `running` row of the same request whose
 * lease is over); when it takes nothing, a SELECT says what holds the key.
 * Completing and releasing name the claim's owner (its request id), so a
 * call whose lease was taken over cannot overwrite the answer of the call
 * that took it. Times are the database's (`now()`), the one clock every
 * instance shares.
 *
 * Rows whose 24 h are over are taken over by the next claim of their key,
 * and deleted in the background, a bounded batch at a time.
 */
import { Duration, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { traced } from "../domain/Span.ts"
import { AppConfig, type AppConfigShape } from "../services/AppConfig.ts"
import { type ClaimOutcome, IDEMPOTENCY_TTL_MS, IdempotencyStore, StoredAnswer } from "../services/IdempotencyStore.ts"
import { storageFailure } from "./storage/StorageErrors.ts"

/** Beyond the longest a call may take: a lease over means the instance that ran the call stopped. */
const LEASE_MARGIN_MS = 60_000

/**
 * How long a `running` claim holds its key: the longest a call may take
 * (a remote engine's DOWNSTREAM_TIMEOUT_MS, or the embedded engine fetching
 * and analysing a model file), plus a margin. About two minutes by default.
 */
export const leaseMsOf = (config: AppConfigShape) =>
  Math.max(
    config.downstreamTimeoutMs,
    Duration.toMillis(config.modelFetch.timeout) + Duration.toMillis(config.modelAnalysis.timeout)
  ) + LEASE_MARGIN_MS

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
    const leaseSeconds = leaseMsOf(yield* AppConfig) / 1000
    const ttlSeconds = IDEMPOTENCY_TTL_MS / 1000

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

    const held = (appId: string, key: string) =>
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

    return IdempotencyStore.of({
      claim: (claim) =>
        Effect.gen(function*() {
          for (let attempt = 0; attempt < CLAIM_ATTEMPTS; attempt++) {
            if ((yield* take(claim)).length > 0) return CLAIMED
            const row = (yield* held(claim.appId, claim.key))[0]
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
          Effect.catchTag("SqlError", storageFailure),
          traced("IdempotencyStore.complete")
        ),

      release: (claim) =>
        sql`
          DELETE FROM idempotency_key
          WHERE app_id = ${claim.appId} AND key = ${claim.key} AND owner = ${claim.owner} AND state = 'running'`.pipe(
          Effect.asVoid,
          Effect.catchTag("SqlError", storageFailure),
          traced("IdempotencyStore.release")
        ),

      purgeExpired
    })
  })
)
