/**
 * IdempotencyStore in memory: the keys of one process, kept as
 * IdempotencySql keeps them (per app and key, replayed for 24 h, refused
 * while running or for another request), without leases: a claim lives as
 * long as its call, in this process. For compositions without a database.
 */
import { Effect, Layer } from "effect"
import { type ClaimOutcome, IDEMPOTENCY_TTL_MS, type IdempotencyClaim, IdempotencyStore, type StoredAnswer } from "../../services/IdempotencyStore.ts"

interface HeldKey {
  readonly fingerprint: string
  readonly owner: string
  /** Undefined while the call runs. */
  readonly answer: StoredAnswer | undefined
  readonly expiresAt: number
}

const keyOf = (claim: IdempotencyClaim) => `${claim.appId}\n${claim.key}`

export const IdempotencyMemory = Layer.sync(IdempotencyStore, () => {
  const keys = new Map<string, HeldKey>()
  const ownedBy = (claim: IdempotencyClaim) => keys.get(keyOf(claim))?.owner === claim.owner
  return IdempotencyStore.of({
    claim: (claim) =>
      Effect.sync((): ClaimOutcome => {
        const held = keys.get(keyOf(claim))
        if (held === undefined || held.expiresAt <= Date.now()) {
          keys.set(keyOf(claim), { fingerprint: claim.fingerprint, owner: claim.owner, answer: undefined, expiresAt: Date.now() + IDEMPOTENCY_TTL_MS })
          return { _tag: "Claimed" }
        }
        if (held.fingerprint !== claim.fingerprint) return { _tag: "Reused" }
        return held.answer === undefined ? { _tag: "InUse" } : { _tag: "Replay", answer: held.answer }
      }),
    complete: (claim, answer) =>
      Effect.sync(() => {
        if (ownedBy(claim)) {
          keys.set(keyOf(claim), { fingerprint: claim.fingerprint, owner: claim.owner, answer, expiresAt: Date.now() + IDEMPOTENCY_TTL_MS })
        }
      }),
    release: (claim) =>
      Effect.sync(() => {
        if (ownedBy(claim)) keys.delete(keyOf(claim))
      }),
    forgetSpace: (space) =>
      Effect.sync(() => {
        let forgotten = 0
        for (const key of keys.keys()) {
          if (key.startsWith(`${space}\n`)) {
            keys.delete(key)
            forgotten++
          }
        }
        return forgotten
      }),
    purgeExpired: Effect.sync(() => {
      let purged = 0
      for (const [key, held] of keys) {
        if (held.expiresAt <= Date.now()) {
          keys.delete(key)
          purged++
        }
      }
      return purged
    })
  })
})
