/**
 * The engine's unit of work: one operation of the public contract, for one
 * app. A handler receives the operation's input as the endpoint's schemas
 * decoded it and answers its success value; `EngineHandlers` has the shape of
 * the contract, so every operation has exactly one handler.
 */
import type { Effect } from "effect"
import type { SqlClient } from "effect/sql"
import type { SqlError } from "effect/sql/SqlError"
import type { CallGrants, IdempotentCall, WritePrecondition } from "../contract/EngineCall.ts"
import type { GroupId, OperationAnswer, OperationInput, OperationTable } from "../contract/Operations.ts"
import type { EngineError } from "./EngineError.ts"
import type { WebhookSender } from "./events/sender.ts"
import type { ModelAnalyser } from "./geometry/ModelAnalyser.ts"
import type { ModelFetcher } from "./geometry/ModelFetcher.ts"
import type { RecordRepository } from "./RecordRepository.ts"

export interface OperationContext {
  readonly appId: string
  readonly requestId: string
  /** The version the written record must still be at (If-Match); checked by Engine.run. */
  readonly precondition?: WritePrecondition | undefined
  /** What the caller's secret allows where the engine decides it (accepting a quote); absent: nothing restricted. */
  readonly grants?: CallGrants | undefined
  /** The write's Idempotency-Key: its answer is committed with it (Engine.run, idempotency.ts). */
  readonly idempotency?: IdempotentCall | undefined
}

/**
 * What operations may use: the record repository, the client the other
 * repositories and transactions run on, and the engine's outbound services
 * (model downloads and analysis, webhook sends), each put in their context
 * by Engine.run from the Engine's layer.
 */
export type EngineServices = RecordRepository | SqlClient.SqlClient | ModelFetcher | ModelAnalyser | WebhookSender

/** A step of an operation. SQL failures are mapped once, by the Engine: an outage is its 503, anything else a defect. */
export type Step<A> = Effect.Effect<A, EngineError | SqlError, EngineServices>

/** The handlers of a group, by endpoint identifier. */
export type GroupHandlers<Group extends GroupId> = {
  readonly [Name in keyof OperationTable[Group]]: (
    context: OperationContext,
    input: OperationInput<OperationTable[Group][Name]>
  ) => Step<OperationAnswer<OperationTable[Group][Name]>>
}

/** One handler per operation of the contract. */
export type EngineHandlers = { readonly [Group in GroupId]: GroupHandlers<Group> }
