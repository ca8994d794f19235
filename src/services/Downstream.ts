/**
 * Downstream: the engine behind the gateway, embedded (src/engine over the
 * same storage) or remote (DOWNSTREAM_URL). Either fails with the one typed
 * `DownstreamError`, which the gateway passes to the client unchanged.
 */
import { Context, type Effect } from "effect"
import type { DownstreamError } from "../domain/Errors.ts"
import type { RecordFilter } from "../domain/Resource.ts"

/** Whose call this is: every record belongs to one app. */
export interface CallScope {
  readonly appId: string
  readonly requestId: string
}

/** A record as the engine returns it: JSON, checked against the resource's schema by the caller. */
export type EngineRecord = Readonly<Record<string, unknown>>

export class Downstream extends Context.Service<Downstream, {
  readonly list: (resource: string, scope: CallScope, filter: RecordFilter) => Effect.Effect<ReadonlyArray<EngineRecord>, DownstreamError>
  /** `undefined` when the id does not exist for this app. */
  readonly get: (resource: string, scope: CallScope, id: string) => Effect.Effect<EngineRecord | undefined, DownstreamError>
  readonly create: (resource: string, scope: CallScope, input: EngineRecord) => Effect.Effect<EngineRecord, DownstreamError>
  /** Replaces the whole record; a 404 DownstreamError when the id does not exist for this app. */
  readonly replace: (resource: string, scope: CallScope, id: string, input: EngineRecord) => Effect.Effect<EngineRecord, DownstreamError>
}>()("mfg/services/Downstream") {}
