/**
 * McpServer driven in process, with typed messages.
 *
 * The endpoint asks McpServer a 2026-07-28 request the transport admits
 * (McpAdmission, McpModern), and a 2025-11-25 request, which McpServer's
 * HTTP transport serves only with sessions, as the same request a
 * 2026-07-28 client sends (McpLegacy). It asks through McpServer's own RPC
 * protocol: `McpServer.run` over an `RpcServer.Protocol` that takes the
 * request as an RPC message and hands back McpServer's `Exit` for it, the
 * result or the JSON-RPC error as values. Nothing is serialized on the way,
 * so nothing is read back from McpServer's HTTP answers.
 *
 * It runs on the McpServer of the HTTP route (`McpServer.layer`, shared by
 * the layer graph), so the registrations, the middleware and the visibility
 * checks are the same; the request services (the caller, the request's
 * headers) are those of the fiber that asks, as on the HTTP route.
 */
import { Context, Deferred, Effect, Layer, Queue } from "effect"
import { McpServer } from "effect/ai"
import { RpcSerialization, RpcServer } from "effect/rpc"
import type { RpcMessage } from "effect/rpc"
import { MCP_PROTOCOLS } from "../../contract/mcp/openapi.ts"
import type { RpcErrorObject } from "./McpDirect.ts"
import { type ServedCapabilities, servedCapabilities, SERVER_OPTIONS } from "./McpServerInfo.ts"

type Json = Readonly<Record<string, unknown>>

const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value)

/** McpServer's answer to one request: its result, or its JSON-RPC error. */
export type McpOutcome =
  | { readonly _tag: "Result"; readonly result: Json }
  | { readonly _tag: "Error"; readonly error: RpcErrorObject }

/** One JSON-RPC request to McpServer: its method and parameters (with their 2026-07-28 `_meta`). */
export interface McpRequestMessage {
  readonly id: string | number
  readonly method: string
  readonly params: Json
}

const INTERNAL_ERROR: McpOutcome = { _tag: "Error", error: { code: -32603, message: "Internal error" } }

/** The error object of a JSON-RPC error as the specification has it: code, message and data only. */
const errorObject = (error: unknown): RpcErrorObject => {
  if (!isObject(error)) return INTERNAL_ERROR.error
  const { code, data, message } = error
  return {
    code: typeof code === "number" ? code : -32603,
    message: typeof message === "string" ? message : "Internal error",
    ...(data === undefined ? {} : { data })
  }
}

/** The outcome an `Exit` of McpServer's protocol carries (McpServer answers every failure with a `Fail` of an error object). */
const outcomeOf = (exit: RpcMessage.ExitEncoded<unknown, unknown>): McpOutcome => {
  if (exit._tag === "Success") return isObject(exit.value) ? { _tag: "Result", result: exit.value } : INTERNAL_ERROR
  for (const failure of exit.cause) if (failure._tag === "Fail") return { _tag: "Error", error: errorObject(failure.error) }
  return INTERNAL_ERROR
}

export class McpInProcess extends Context.Service<McpInProcess, {
  /** McpServer's answer to `request`, asked as a 2026-07-28 client asks it. */
  readonly request: (request: McpRequestMessage) => Effect.Effect<McpOutcome>
  /** The capabilities the endpoint advertises, from what is registered with McpServer. */
  readonly capabilities: Effect.Effect<ServedCapabilities>
}>()("mfg/http/McpInProcess") {
  static readonly layer = Layer.effect(
    McpInProcess,
    Effect.gen(function*() {
      const server = yield* McpServer.McpServer
      // Each request is a client of its own: its Exit settles its Deferred, then its Eof ends it.
      const exits = new Map<number, Deferred.Deferred<McpOutcome>>()
      let nextClient = 0
      let write!: (clientId: number, message: RpcMessage.FromClientEncoded) => Effect.Effect<void>
      const protocol = yield* RpcServer.Protocol.make((writeRequest) => {
        write = writeRequest
        return Effect.map(Queue.make<number>(), (disconnects) => ({
          disconnects,
          send: (clientId: number, response: RpcMessage.FromServerEncoded) =>
            Effect.sync(() => {
              const exit = exits.get(clientId)
              if (exit === undefined) return
              if (response._tag === "Exit") Deferred.doneUnsafe(exit, Effect.succeed(outcomeOf(response.exit)))
              else if (response._tag === "Defect") Deferred.doneUnsafe(exit, Effect.succeed(INTERNAL_ERROR))
            }),
          end: () => Effect.void,
          clientIds: Effect.sync(() => new Set(exits.keys())),
          initialMessage: Effect.succeedNone,
          supportsAck: false,
          supportsTransferables: false,
          supportsSpanPropagation: false,
          // Nothing is pushed: a request is answered once, with its Exit.
          supportsNotifications: false,
          codecFor: RpcSerialization.json.codecFor
        }))
      })
      // The protocols of the HTTP route, so that discovery names the same supported versions; every request is asked in 2026-07-28.
      yield* McpServer.run({ ...SERVER_OPTIONS, protocols: [...MCP_PROTOCOLS] }).pipe(
        Effect.provideService(RpcServer.Protocol, protocol),
        Effect.provideService(McpServer.McpServer, server),
        Effect.forkScoped
      )

      const request = ({ id, method, params }: McpRequestMessage) =>
        Effect.suspend(() => {
          const clientId = nextClient++
          const exit = Deferred.makeUnsafe<McpOutcome>()
          exits.set(clientId, exit)
          return write(clientId, { _tag: "Request", id, tag: method, payload: params, headers: [] }).pipe(
            Effect.andThen(Deferred.await(exit)),
            Effect.onInterrupt(() => write(clientId, { _tag: "Interrupt", requestId: id })),
            Effect.ensuring(Effect.suspend(() => {
              exits.delete(clientId)
              return write(clientId, { _tag: "Eof" })
            }))
          )
        })

      return McpInProcess.of({ request, capabilities: Effect.sync(() => servedCapabilities(server)) })
    })
  )
}
