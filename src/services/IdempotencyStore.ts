/**
 * IdempotencyStore: the answers of calls made with an `Idempotency-Key`,
 * kept per app and key for 24 hours, in the gateway's database so that every
 * instance sees them (src/adapters/sql/IdempotencySql.ts).
 *
 * A key is claimed before its call runs (state `running`), then completed
 * with the call's answer (state `done`) or released (the row is dropped) when
 * the answer means "try again". A claim of a key already held answers what
 * the gateway does instead of running the call: replay the stored answer, or
 * refuse (still running, or held by another request).
 */
import { Context, type Effect, Schema } from "effect"
import type { ServiceUnavailable } from "../domain/Errors.ts"

/** How long a stored answer is replayed, from the moment it is stored. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000

/** One call's hold on a key. */
export interface IdempotencyClaim {
  readonly appId: string
  readonly key: string
  /** What the call is: SHA-256 of its operation and its decoded input (src/gateway/rest/Idempotency.ts). */
  readonly fingerprint: string
  /** The request id of the call that holds the key: only it completes or releases the claim. */
  readonly owner: string
}

/** An answer as stored and replayed: status, the headers worth replaying, the body (null: none). */
export const StoredAnswer = Schema.Struct({
  status: Schema.Int,
  headers: Schema.Record(Schema.String, Schema.String),
  body: Schema.NullOr(Schema.String)
})
export type StoredAnswer = typeof StoredAnswer.Type

/** What a claim found. */
export type ClaimOutcome =
  /** The key is this call's: run it, then complete or release. */
  | { readonly _tag: "Claimed" }
  /** The same request was answered: answer it again. */
  | { readonly _tag: "Replay"; readonly answer: StoredAnswer }
  /** The same request is still running (on this instance or another). */
  | { readonly _tag: "InUse" }
  /** The key was used for another request (another operation or input). */
  | { readonly _tag: "Reused" }

export class IdempotencyStore extends Context.Service<IdempotencyStore, {
  /**
   * Takes the key for this call, unless a live row holds it. A row whose 24 h
   * are over is taken over, and so is a `running` row of the same request
   * whose lease is over (its instance stopped before it answered).
   */
  readonly claim: (claim: IdempotencyClaim) => Effect.Effect<ClaimOutcome, ServiceUnavailable>
  /** Stores the call's answer, replayed for 24 h from now; nothing if the claim is no longer the call's. */
  readonly complete: (claim: IdempotencyClaim, answer: StoredAnswer) => Effect.Effect<void, ServiceUnavailable>
  /** Gives the key back (the answer is not stored, a retry runs); nothing if the claim is no longer the call's. */
  readonly release: (claim: IdempotencyClaim) => Effect.Effect<void, ServiceUnavailable>
  /** Deletes rows whose 24 h are over, a bounded number at a time; answers how many. */
  readonly purgeExpired: Effect.Effect<number, ServiceUnavailable>
  /**
   * Forgets every key of a data space (an app's test data, emptied): a key
   * used again there runs its call afresh instead of replaying an answer
   * about records that are gone. Answers how many keys were forgotten.
   */
  readonly forgetSpace: (space: string) => Effect.Effect<number, ServiceUnavailable>
}>()("mfg/services/IdempotencyStore") {}
