/**
 * Emptying an app's test data, as the admin API and the CLI do it: the
 * engine empties the test space (its records, events, model files and the
 * answers of its keyed writes), then the gateway forgets the Idempotency-Keys
 * used in that space, so that a key used again after the emptying runs its
 * call afresh instead of replaying an answer about records that are gone.
 * The engine's refusal ends it with the keys untouched; live keys never are.
 */
import { Effect } from "effect"
import { dataSpaceOf } from "../../domain/Grants.ts"
import { Downstream } from "../../services/Downstream.ts"
import { IdempotencyStore } from "../../services/IdempotencyStore.ts"

/** The emptying, given the engine and the gateway's keys. */
export const testDataEmptying = Effect.gen(function*() {
  const downstream = yield* Downstream
  const keys = yield* IdempotencyStore
  return (appId: string, requestId: string) => downstream.emptyTestData(appId, requestId).pipe(Effect.tap(() => keys.forgetSpace(dataSpaceOf(appId, "test"))))
})
