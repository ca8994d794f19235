/**
 * Downstream: the engine behind the gateway, embedded (src/engine over the
 * same storage) or remote (DOWNSTREAM_URL, EngineApi). An operation is the
 * endpoint itself: `call(endpoint)` takes the endpoint's decoded input and
 * answers its success value (or `null`, the spec's empty 200 for a read that
 * found nothing). Either fails with the one typed `DownstreamError`, which
 * the gateway passes to the client unchanged.
 */
import { Context, type Effect } from "effect"
import type { CallScope } from "../contract/EngineCall.ts"
import type { OperationAnswer, OperationEndpoint, OperationInput } from "../contract/Operations.ts"
import type { DownstreamError } from "../domain/Errors.ts"
import type { TestDataEmptied } from "../domain/Grants.ts"

export class Downstream extends Context.Service<Downstream, {
  /** Runs the operation `endpoint` is, for the caller's app. */
  readonly call: <E extends OperationEndpoint>(
    endpoint: E
  ) => (input: OperationInput<E>, scope: CallScope) => Effect.Effect<OperationAnswer<E>, DownstreamError>
  /** Empties the app's test data space in the engine (an operator's call: the admin API, not the contract). */
  readonly emptyTestData: (appId: string, requestId: string) => Effect.Effect<TestDataEmptied, DownstreamError>
}>()("mfg/services/Downstream") {}
