/**
 * The handlers of a resource's endpoints, derived from its definition: each
 * forwards to Downstream in the caller's app and checks what comes back
 * against the resource's schema.
 */
import { Effect, Schema } from "effect"
import { HttpServerResponse } from "effect/http"
import { CurrentCaller } from "../../api/Authorization.ts"
import { DownstreamError } from "../../domain/Errors.ts"
import { type Resource, toRecordFilter } from "../../domain/Resource.ts"
import { type CallScope, Downstream, type EngineRecord } from "../../services/Downstream.ts"
import { downstreamResponse } from "./ErrorResponses.ts"

/** The spec's answer for a missing id: 200 with an empty body. */
const EMPTY_200 = HttpServerResponse.uint8Array(new Uint8Array(0), { status: 200, contentType: "application/json" })

export const crudHandlers = <Record, Input, Query>(resource: {
  readonly name: string
  readonly filters: Resource["filters"]
  readonly record: Schema.Codec<Record, unknown>
  readonly input: Schema.Codec<Input, unknown>
  readonly listQuery: Schema.Codec<Query, unknown>
}) =>
  Effect.gen(function*() {
    const downstream = yield* Downstream
    const decodeRecord = Schema.decodeUnknownEffect(resource.record)
    const decodeRecords = Schema.decodeUnknownEffect(Schema.Array(resource.record))

    /** A reply that does not match the resource's schema is the engine's fault: 502, naming it. */
    const unreadable = (requestId: string) => () =>
      new DownstreamError({
        status: 502,
        code: 502,
        message: `The engine answered a ${resource.name} that does not match its schema`,
        type: "BadGateway",
        source: "engine",
        requestId
      })

    /** Runs a call in the caller's app; a downstream failure becomes its passthrough response. */
    const scoped = <A>(f: (scope: CallScope) => Effect.Effect<A, DownstreamError>) =>
      Effect.gen(function*() {
        const caller = yield* CurrentCaller
        return yield* f({ appId: caller.appId, requestId: caller.requestId }).pipe(
          Effect.catch((error) => Effect.succeed(downstreamResponse(error)))
        )
      })

    return {
      list: ({ query }: { readonly query: Query }) =>
        scoped((scope) =>
          downstream.list(resource.name, scope, toRecordFilter(resource.filters, query as Readonly<globalThis.Record<string, unknown>>)).pipe(
            Effect.flatMap((records) => Effect.mapError(decodeRecords(records), unreadable(scope.requestId)))
          )
        ),
      create: ({ payload }: { readonly payload: Input }) =>
        scoped((scope) =>
          downstream.create(resource.name, scope, payload as EngineRecord).pipe(
            Effect.flatMap((record) => Effect.mapError(decodeRecord(record), unreadable(scope.requestId)))
          )
        ),
      get: ({ params }: { readonly params: { readonly id: string } }) =>
        scoped((scope) =>
          downstream.get(resource.name, scope, params.id).pipe(
            Effect.flatMap((record): Effect.Effect<Record | HttpServerResponse.HttpServerResponse, DownstreamError> =>
              record === undefined ? Effect.succeed(EMPTY_200) : Effect.mapError(decodeRecord(record), unreadable(scope.requestId))
            )
          )
        ),
      replace: ({ params, payload }: { readonly params: { readonly id: string }; readonly payload: Input }) =>
        scoped((scope) =>
          downstream.replace(resource.name, scope, params.id, payload as EngineRecord).pipe(
            Effect.flatMap((record) => Effect.mapError(decodeRecord(record), unreadable(scope.requestId)))
          )
        )
    }
  })
