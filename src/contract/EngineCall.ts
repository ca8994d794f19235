import type { Grants } from "../domain/Grants.ts"

/**
 * A write's precondition (`If-Match`): the record it changes must still be at
 * the version the client saw, its `updatedAt`. The engine checks it with the
 * record's row locked, in the write's transaction, so no other write can slip
 * in between the check and the change.
 */
export interface WritePrecondition {
  readonly id: string
  readonly updatedAt: string
}

/**
 * What the caller's secret allows where only the engine can decide it:
 * accepting a quote needs the `order` scope and a total within
 * `maxAcceptTotal`, known only as the engine accepts it. Absent: the engine
 * restricts nothing (its own calls, demo data).
 */
export type CallGrants = Pick<Grants, "scopes" | "maxAcceptTotal">

/**
 * A write made with an `Idempotency-Key`: the engine commits its answer in the
 * write's own transaction, under the app and key, so a retry after any crash
 * finds the answer instead of writing again (src/engine/idempotency.ts).
 */
export interface IdempotentCall {
  readonly key: string
  /** What the request is (SHA-256 of its operation and decoded input): the same key with another request is refused. */
  readonly fingerprint: string
  /** Told when the engine answers the stored answer of an earlier call instead of running this one. */
  readonly onReplay?: (() => void) | undefined
}

/**
 * Whose call this is: every record belongs to one app (for a test-mode secret,
 * the app's test data space: src/domain/Grants.ts, `dataSpaceOf`); the request
 * id names the call in the engine's errors and logs.
 */
export interface CallScope {
  readonly appId: string
  readonly requestId: string
  readonly precondition?: WritePrecondition | undefined
  readonly grants?: CallGrants | undefined
  readonly idempotency?: IdempotentCall | undefined
}

/** An operation's input where its endpoint is known only at run time: the parts its schemas decoded. */
export interface DecodedInput {
  readonly params?: unknown
  readonly query?: unknown
  readonly payload?: unknown
}
