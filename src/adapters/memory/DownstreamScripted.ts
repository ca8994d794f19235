/**
 * Downstream as a scripted engine: the caller gives a handler per operation
 * (`"customer.get"`), typed by the contract (its decoded input, its answer);
 * an operation without one answers the 501 `NotImplemented`, from the
 * engine. The gateway treats the answers as any engine's: encoded by the
 * endpoint's success schema (one that does not match is its 502), errors
 * passed through. For compositions without an engine (a test, an example).
 */
import { Effect, Layer } from "effect"
import type { CallScope } from "../../contract/EngineCall.ts"
import { type GroupId, type OperationAnswer, type OperationInput, type OperationName, operationOf, type OperationTable } from "../../contract/Operations.ts"
import { DownstreamError } from "../../domain/Errors.ts"
import { Downstream } from "../../services/Downstream.ts"

/** The endpoint an operation name (`customer.get`) names. */
type EndpointNamed<Name extends OperationName> = Name extends `${infer Group extends GroupId}.${infer Endpoint}`
  ? Endpoint extends keyof OperationTable[Group] ? OperationTable[Group][Endpoint] : never
  : never

/** How a scripted engine answers one operation. */
export type ScriptedHandler<Endpoint> = (input: OperationInput<Endpoint>, scope: CallScope) => Effect.Effect<OperationAnswer<Endpoint>, DownstreamError>

/** The scripted operations, by name; any the script leaves out answers the 501. */
export type ScriptedEngine = { readonly [Name in OperationName]?: ScriptedHandler<EndpointNamed<Name>> }

type AnyHandler = (input: never, scope: CallScope) => Effect.Effect<unknown, DownstreamError>

const notScripted = (what: string, requestId: string) =>
  new DownstreamError({
    status: 501,
    code: 501,
    message: `${what} is not scripted in this engine`,
    type: "NotImplemented",
    source: "engine",
    requestId
  })

/** Downstream answering the operations of `script`. */
export const DownstreamScripted = (script: ScriptedEngine) => {
  const handlers: Readonly<Partial<Record<OperationName, AnyHandler>>> = script
  return Layer.succeed(
    Downstream,
    Downstream.of({
      call: (endpoint) => (input, scope) => {
        const operation = operationOf(endpoint)
        const handler = handlers[operation]
        if (handler === undefined) return Effect.fail(notScripted(operation, scope.requestId))
        // The script's handler for this name has this endpoint's types (ScriptedEngine): the name is the endpoint's.
        return handler(input as never, scope) as Effect.Effect<OperationAnswer<typeof endpoint>, DownstreamError>
      },
      emptyTestData: (_appId, requestId) => Effect.fail(notScripted("emptying test data", requestId))
    })
  )
}
