/**
 * Downstream: the engine behind the gateway, embedded (src/engine over the
 * same storage) or remote (DOWNSTREAM_URL). Every public operation is one
 * `invoke`: the gateway sends the decoded request, the engine answers JSON.
 * Either fails with the one typed `DownstreamError`, which the gateway passes
 * to the client unchanged.
 */
import { Context, type Effect } from "effect"
import type { CallScope, EngineRequest } from "../api/EngineCall.ts"
import type { DownstreamError } from "../domain/Errors.ts"

export class Downstream extends Context.Service<Downstream, {
  /**
   * Runs `operation` (e.g. `customer.get`) for the caller's app. The answer is
   * JSON, checked by the gateway against the endpoint's schema; `null` means
   * "no such record" (the spec's empty 200).
   */
  readonly invoke: (operation: string, scope: CallScope, request: EngineRequest) => Effect.Effect<unknown, DownstreamError>
}>()("mfg/services/Downstream") {}
