/** The engine's unit of work: one public operation, for one app. */
import type { Effect } from "effect"
import type { SqlClient } from "effect/sql"
import type { SqlError } from "effect/sql/SqlError"
import type { EngineRequest } from "../api/EngineCall.ts"
import type { EngineError } from "./EngineError.ts"
import type { RecordRepository } from "./RecordRepository.ts"

export interface OperationContext {
  readonly appId: string
  readonly requestId: string
}

/** What operations may use: the repository, and SQL for what it does not cover. */
export type EngineServices = RecordRepository | SqlClient.SqlClient

/** SQL failures are mapped once, by the Engine: an outage is its 503, anything else a defect. */
export type Operation = (
  context: OperationContext,
  request: EngineRequest
) => Effect.Effect<unknown, EngineError | SqlError, EngineServices>

/** Operations by id, `<group>.<endpoint>` as in the public API (e.g. `customer.get`). */
export type Operations = Readonly<Record<string, Operation>>
