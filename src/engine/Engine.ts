/**
 * The engine: runs an operation of the public contract for one app. The same
 * service answers in-process (Downstream embedded) and over its own HTTP API
 * (EngineApi, served by src/app/EngineServer.ts).
 */
import { Context, Effect, Layer, PubSub } from "effect"
import { SqlClient } from "effect/sql"
import type { SqlError } from "effect/sql/SqlError"
import type { WritePrecondition } from "../contract/EngineCall.ts"
import { groupsOf, type OperationAnswer, type OperationEndpoint, type OperationInput, type OperationName, operationOf } from "../contract/Operations.ts"
import { PublicContract } from "../contract/PublicApi.ts"
import type { TestDataEmptied } from "../domain/Grants.ts"
import { traced } from "../domain/Span.ts"
import { isConnectionLost, isOutage } from "../domain/StorageOutage.ts"
import { EngineError } from "./EngineError.ts"
import { CommittedEvents } from "./events/CommittedEvents.ts"
import { type CallEvents, CurrentCall } from "./events/outbox.ts"
import { WebhookSender } from "./events/sender.ts"
import { ModelAnalyser } from "./geometry/ModelAnalyser.ts"
import { ModelFetcher } from "./geometry/ModelFetcher.ts"
import { runKeyed } from "./idempotency.ts"
import { purgeExpiredAnswers } from "./IdempotencyRepository.ts"
import type { EngineHandlers, EngineServices, OperationContext, Step } from "./Operation.ts"
import { engineHandlers } from "./operations.ts"
import { RecordRepository } from "./RecordRepository.ts"
import { writeReferenceData } from "./referenceData.ts"
import { emptyTestData } from "./testData.ts"
import { inTransaction } from "./transaction.ts"

/**
 * What the engine's layer is built with: the outbound services it hands its
 * operations (see EngineServices), and the hub it announces its calls'
 * committed events on (CommittedEvents), which the dispatcher of the same
 * composition subscribes to.
 */
export type EngineOutbound = ModelFetcher | ModelAnalyser | WebhookSender | CommittedEvents

type AnyHandler = (context: OperationContext, input: never) => Step<unknown>

/** The handlers by operation name, in the contract's order. */
const handlerTable = (handlers: EngineHandlers): ReadonlyMap<OperationName, AnyHandler> => {
  const byName = new Map<string, AnyHandler>()
  for (const [group, groupHandlers] of Object.entries(handlers)) {
    for (const [name, handler] of Object.entries<AnyHandler>(groupHandlers)) byName.set(`${group}.${name}`, handler)
  }
  const table = new Map<OperationName, AnyHandler>()
  for (const group of groupsOf(PublicContract)) {
    for (const endpoint of Object.values(group.endpoints)) {
      // EngineHandlers has the contract's shape, so every endpoint has its handler.
      table.set(operationOf(endpoint), byName.get(`${group.identifier}.${endpoint.identifier}`)!)
    }
  }
  return table
}

/**
 * A conditional write (If-Match): the record's row locked, its version
 * compared, then the write, in one transaction; a record changed meanwhile
 * (or gone) is the 412, and nothing is written. The group of a record
 * operation is the resource it writes (`customer.replace` writes `customer`).
 */
const underPrecondition = <A>(operation: string, appId: string, precondition: WritePrecondition, write: Step<A>): Step<A> =>
  inTransaction(Effect.flatMap(
    lockedVersion(operation.slice(0, operation.indexOf(".")), appId, precondition),
    () => write
  ))

/** The record's row locked, and the 412 unless it is still the version the write names. */
const lockedVersion = (resource: string, appId: string, precondition: WritePrecondition) =>
  Effect.flatMap(
    RecordRepository,
    (records) =>
      Effect.flatMap(
        records.lockedUpdatedAt(resource, appId, precondition.id),
        (updatedAt) => updatedAt === precondition.updatedAt ? Effect.void : EngineError.preconditionFailed(resource, precondition.id)
      )
  )

/**
 * A storage failure as the engine answers it: an outage is the 503 the caller
 * may retry, anything else a defect. A write whose connection was lost after
 * it was sent may have been committed: the 503 of an unknown outcome says so.
 * A keyed write knows (its COMMIT was in flight, or nothing was kept); any
 * other write counts a connection lost during a statement as unknown.
 */
const storageFailure = (error: SqlError, writes: boolean, outcomeUnknown: (() => boolean) | undefined) => {
  if (!isOutage(error)) return Effect.die(error)
  const unknown = outcomeUnknown !== undefined
    ? outcomeUnknown()
    : writes && isConnectionLost(error) && error.reason.operation !== "connect"
  return Effect.fail(unknown ? EngineError.outcomeUnknown() : EngineError.storageUnavailable())
}

/**
 * `context` with `service` under `key`: unchanged when it holds that very
 * service already (the embedded engine runs in the gateway's context, which
 * holds the same fetcher, analyser, sender and client). A context keeps a few
 * additions as overlays and copies all its entries on the next: each addition
 * left out is one copy less per call.
 */
const withService = <R, I, S>(context: Context.Context<R>, key: Context.Key<I, S>, service: S): Context.Context<R | I> =>
  // Already there: the same context, typed as holding it.
  Context.getOrUndefined(context as Context.Context<R | I>, key) === service ? context as Context.Context<R | I> : Context.add(context, key, service)

/** How often the answers of keyed writes past their 24 h are deleted. */
const PURGE_INTERVAL = "10 minutes"

export class Engine extends Context.Service<Engine, {
  /** Runs the operation `endpoint` is, on its decoded input. */
  readonly run: <E extends OperationEndpoint>(
    endpoint: E,
    context: OperationContext,
    input: OperationInput<E>
  ) => Effect.Effect<OperationAnswer<E>, EngineError>
  /** Empties the test data space of `appId` (testData.ts); never a live one. */
  readonly emptyTestData: (appId: string) => Effect.Effect<TestDataEmptied, EngineError>
}>()("mfg/engine/Engine") {
  /** An engine running `handlers` over the SqlClient in context. */
  static readonly make = (handlers: EngineHandlers) =>
    Layer.effect(
      Engine,
      Effect.gen(function*() {
        // Without its reference data the engine cannot answer: failing to write it stops the start.
        yield* Effect.orDie(writeReferenceData)
        const table = handlerTable(handlers)
        // What operations use, added to the caller's context service by service: merging a whole context into it would
        // copy the caller's context on every call.
        const repository = yield* RecordRepository
        const sql = yield* SqlClient.SqlClient
        const fetcher = yield* ModelFetcher
        const analyser = yield* ModelAnalyser
        const sender = yield* WebhookSender
        const committed = yield* CommittedEvents
        // In the background; a failed purge (an outage) is tried again at the next one.
        yield* Effect.forkScoped(
          purgeExpiredAnswers.pipe(
            Effect.catchCause((cause) => Effect.logWarning("idempotency answers not purged", cause)),
            Effect.delay(PURGE_INTERVAL),
            Effect.forever
          )
        )
        return Engine.of({
          run: <E extends OperationEndpoint>(endpoint: E, context: OperationContext, input: OperationInput<E>) => {
            const operation = operationOf(endpoint)
            const handler = table.get(operation)!
            const step = handler(context, input as never) as Step<OperationAnswer<E>>
            const precondition = context.precondition
            const events: CallEvents = { ids: [] }
            const written = precondition === undefined ? step : underPrecondition(operation, context.appId, precondition, step)
            const keyed = context.idempotency === undefined ? undefined : runKeyed(sql, endpoint, operation, context.appId, context.idempotency, written)
            const writes = endpoint.method !== "GET"
            return (keyed === undefined ? written : keyed.run).pipe(
              // Ended, so its transactions have committed (or rolled back): the dispatcher, if this process runs one, makes
              // the events' first attempts at once. A failed call may have committed some too; a rolled-back id names no row.
              // The hub drops what it cannot hold (CommittedEvents.ts), so this finalizer never waits on it.
              Effect.ensuring(Effect.suspend(() => events.ids.length === 0 ? Effect.void : PubSub.publishAll(committed, events.ids))),
              Effect.catchTag("SqlError", (error) => storageFailure(error, writes, keyed?.outcomeUnknown)),
              // Added in one step, not one provideService each: every provideService is a frame of its own, paid per call.
              Effect.updateContext((outer: Context.Context<never>): Context.Context<EngineServices> => {
                const withRepository = withService(outer, RecordRepository, repository)
                const withClient = withService(withRepository, SqlClient.SqlClient, keyed === undefined ? sql : keyed.client)
                const withModels = withService(withService(withClient, ModelFetcher, fetcher), ModelAnalyser, analyser)
                return withService(withService(withModels, WebhookSender, sender), CurrentCall, { requestId: context.requestId, events })
              }),
              traced(`engine ${operation}`, { attributes: { "app.id": context.appId } })
            )
          },
          emptyTestData: (appId) =>
            emptyTestData(appId).pipe(
              Effect.catchTag("SqlError", (error) => isOutage(error) ? Effect.fail(EngineError.storageUnavailable()) : Effect.die(error)),
              Effect.provideService(SqlClient.SqlClient, sql),
              traced("engine emptyTestData", { attributes: { "app.id": appId } })
            )
        })
      })
    ).pipe(Layer.provide(RecordRepository.layer))

  static readonly layer = Engine.make(engineHandlers)
}
