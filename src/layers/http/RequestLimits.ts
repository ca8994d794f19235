/**
 * Bounds on what a request may carry, checked in front of every route (the
 * public API, MCP, the admin API) before authentication, as a proxy would:
 *
 * - a path with a malformed percent-encoding (`%ZZ`, `%C0%AF`) is a 400;
 * - a body over MAX_BODY_BYTES is a 413 (but a model file upload's, which
 *   has its own limit, src/layers/http/ModelFileHandlers.ts): at once when its Content-Length says
 *   so, else as soon as the bytes read pass the limit (the connection is then
 *   closed, so the rest is never read);
 * - a JSON body nested deeper than MAX_JSON_DEPTH is a 400: parsing and
 *   decoding recurse per level, so depth is bounded before either runs.
 *
 * Every refusal has the standard body: `{code, message, type}` on REST and
 * the admin API, a JSON-RPC error on /v1/mcp: with the request's id for a
 * body whose Content-Length is over the limit by at most as much again
 * (read on, unkept, for its id: idOfLargeBody), else without. The body is read here
 * once, under the limit; the request keeps it, so the handler's own read
 * returns the same bytes (the router hands handlers this same request).
 */
import { JSONParser } from "@streamparser/json"
import { ByteSize, Context, Effect, Schema, Stream } from "effect"
import { HttpIncomingMessage, HttpServerRequest, HttpServerResponse } from "effect/http"
import { errorAnswer } from "../../api/ErrorAnswer.ts"
import { JsonRpcId } from "../../api/mcp/openapi.ts"
import { BadRequest, PayloadTooLarge } from "../../domain/Errors.ts"

/** The deepest nesting of arrays and objects a JSON body may have. */
export const MAX_JSON_DEPTH = 64

const MCP_PATH = "/v1/mcp"

/** Methods whose body no route reads: Node discards it as it arrives. */
const BODYLESS = new Set(["GET", "HEAD", "OPTIONS", "DELETE"])

const OPEN_BRACE = 0x7b, OPEN_BRACKET = 0x5b, CLOSE_BRACE = 0x7d, CLOSE_BRACKET = 0x5d, QUOTE = 0x22, BACKSLASH = 0x5c

/** Whether `text` nests arrays and objects deeper than `limit` (strings skipped; one linear pass, no parse). */
export const nestsDeeperThan = (text: string, limit: number): boolean => {
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === BACKSLASH) i++
      else if (c === QUOTE) inString = false
    } else if (c === QUOTE) inString = true
    else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > limit) return true
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) depth--
  }
  return false
}

/** Whether every percent-encoding of the path decodes (to valid UTF-8). */
const pathDecodes = (url: string): boolean => {
  const query = url.indexOf("?")
  const path = query < 0 ? url : url.slice(0, query)
  if (!path.includes("%")) return true
  try {
    decodeURIComponent(path)
    return true
  } catch {
    return false
  }
}

const UPLOAD_PATH = "/v1/model-file"

const isUploadPath = (url: string) => url === UPLOAD_PATH || url.startsWith(`${UPLOAD_PATH}?`)

const isJson = (contentType: string | undefined) => contentType === undefined || /^application\/(?:[\w.+-]*\+)?json\s*(?:;|$)/i.test(contentType)

type Refusal = { readonly status: 400 | 413; readonly type: string; readonly message: string; readonly rpcCode: number }

const isMcp = (url: string) => url === MCP_PATH || url.startsWith(`${MCP_PATH}?`)

const isRequestId = Schema.is(JsonRpcId)

/** A JSON-RPC request id (a string or an integer, as the endpoint takes one), or undefined. */
const requestIdOf = (value: unknown): string | number | undefined => isRequestId(value) ? value : undefined

/** The refusal, in the shape of the surface that refuses it (`id`: the MCP request's, when it could be read). */
const refusalResponse = (request: HttpServerRequest.HttpServerRequest, refusal: Refusal, id?: string | number) => {
  const close = refusal.status === 413 ? { connection: "close" } : undefined
  if (isMcp(request.url)) {
    return HttpServerResponse.jsonUnsafe(
      // Without the request's id when it is unknown (MCP's error id is optional, never null).
      { jsonrpc: "2.0", ...(id === undefined ? {} : { id }), error: { code: refusal.rpcCode, message: refusal.message } },
      { status: refusal.status, ...(close === undefined ? {} : { headers: close }) }
    )
  }
  const response = errorAnswer({ code: refusal.status, message: refusal.message, type: refusal.type })
  return close === undefined ? response : HttpServerResponse.setHeaders(response, close)
}

const tooLarge = (maxBodyBytes: number): Refusal => {
  const { code, message, type } = PayloadTooLarge.over(maxBodyBytes)
  return { status: code, type, message, rpcCode: -32600 }
}

const MALFORMED_PATH: Refusal = {
  status: 400,
  type: "MalformedPath",
  message: "The request path has a malformed percent-encoding",
  rpcCode: -32600
}

const TOO_DEEP: Refusal = {
  status: 400,
  type: BadRequest.name,
  message: `The request body nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels`,
  rpcCode: -32700
}

const UNREADABLE: Refusal = {
  status: 400,
  type: "UnreadableBody",
  message: "The request body could not be read",
  rpcCode: -32700
}

/**
 * How far an MCP body over MAX_BODY_BYTES is read, as a multiple of it, only
 * to answer its 413 with the request's id: the official clients write the id
 * last, after the parameters that make the body too large. A larger body is
 * refused at once, without an id.
 */
const ID_SCAN_FACTOR = 2

/**
 * The top-level `id` of an MCP body too large to take, read as it streams in
 * (nothing of it kept but the parser's current value), stopping as soon as
 * the id is read or the body is no JSON. Undefined when there is none.
 */
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

/** The middleware: `maxBodyBytes` is MAX_BODY_BYTES. */
export const requestLimits = (maxBodyBytes: number) => {
  const limit = ByteSize.bytes(maxBodyBytes)
  return <E, R>(
    app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
  ): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R> =>
    Effect.withFiber((fiber) => {
      const request = Context.getUnsafe(fiber.context, HttpServerRequest.HttpServerRequest)
      if (!pathDecodes(request.url)) return Effect.succeed(refusalResponse(request, MALFORMED_PATH))
      // No route reads the body of these methods, so there is nothing to bound (and no headers to look at on the hot path).
      if (BODYLESS.has(request.method)) return app
      // An upload's body streams to storage under its own limit, MODEL_UPLOAD_MAX_BYTES (ModelFileHandlers.ts).
      if (request.method === "POST" && isUploadPath(request.url)) return app
      const declared = Number(request.headers["content-length"])
      if (declared > maxBodyBytes) {
        return isMcp(request.url) && declared <= ID_SCAN_FACTOR * maxBodyBytes
          ? Effect.map(idOfLargeBody(request), (id) => refusalResponse(request, tooLarge(maxBodyBytes), id))
          : Effect.succeed(refusalResponse(request, tooLarge(maxBodyBytes)))
      }
      const read = Effect.provideService(request.text, HttpIncomingMessage.MaxBodySize, limit)
      return Effect.matchEffect(read, {
        onFailure: (error) =>
          Effect.succeed(refusalResponse(
            request,
            error.reason._tag === "RequestParseError" && error.reason.reason === "BodyTooLarge" ? tooLarge(maxBodyBytes) : UNREADABLE
          )),
        onSuccess: (text) =>
          isJson(request.headers["content-type"]) && nestsDeeperThan(text, MAX_JSON_DEPTH)
            ? Effect.succeed(refusalResponse(request, TOO_DEEP))
            : app
      })
    })
}
