/**
 * How MCP's requests are refused in front of every route (RequestLimits): a
 * JSON-RPC error with the HTTP status, carrying the request's id when it
 * could be read, and the connection closed after a 413. The id of a body over
 * the limit is read as the body streams in (nothing of it kept but the
 * parser's current value), stopping as soon as the id is read or the body is
 * no JSON.
 */
import { JSONParser } from "@streamparser/json"
import { Effect, Schema, Stream } from "effect"
import { type HttpServerRequest, HttpServerResponse } from "effect/http"
import { JsonRpcId } from "../../contract/mcp/openapi.ts"
import type { LimitedSurface, RefusalKind } from "../request/index.ts"
import { MCP_PATH } from "./McpAuth.ts"

/** The JSON-RPC code of each refusal: an invalid request, or a body that cannot be parsed. */
const RPC_CODES: Record<RefusalKind, number> = { MalformedPath: -32600, TooLarge: -32600, TooDeep: -32700, Unreadable: -32700 }

const isRequestId = Schema.is(JsonRpcId)

/** A JSON-RPC request id (a string or an integer, as the endpoint takes one), or undefined. */
const requestIdOf = (value: unknown): string | number | undefined => isRequestId(value) ? value : undefined

const idOfLargeBody = (request: HttpServerRequest.HttpServerRequest) =>
  Effect.suspend(() => {
    const parser = new JSONParser({ paths: ["$.id"], keepStack: false })
    let id: string | number | undefined
    let done = false
    parser.onValue = ({ value }) => {
      id = requestIdOf(value)
      done = true
    }
    parser.onError = () => {
      done = true
    }
    return request.stream.pipe(
      Stream.takeWhile(() => !done),
      Stream.runForEach((chunk) => Effect.sync(() => parser.write(chunk))),
      Effect.ignore,
      Effect.map(() => id)
    )
  })

export const McpRequestLimits: LimitedSurface = {
  matches: (request) => request.url === MCP_PATH || request.url.startsWith(`${MCP_PATH}?`),
  refusal: (refusal, id) =>
    HttpServerResponse.jsonUnsafe(
      // Without the request's id when it is unknown (MCP's error id is optional, never null).
      { jsonrpc: "2.0", ...(id === undefined ? {} : { id }), error: { code: RPC_CODES[refusal.kind], message: refusal.message } },
      { status: refusal.status, ...(refusal.status === 413 ? { headers: { connection: "close" } } : {}) }
    ),
  idOfLargeBody
}
