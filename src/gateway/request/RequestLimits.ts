/**
 * Bounds on what a request may carry, checked in front of every route before
 * authentication, as a proxy would:
 *
 * - a path with a malformed percent-encoding (`%ZZ`, `%C0%AF`) is a 400;
 * - a body over MAX_BODY_BYTES is a 413 (but on a surface that bounds its
 *   body itself, a model file upload): at once when its Content-Length says
 *   so, else as soon as the bytes read pass the limit (the connection is then
 *   closed, so the rest is never read);
 * - a JSON body nested deeper than MAX_JSON_DEPTH is a 400: parsing and
 *   decoding recurse per level, so depth is bounded before either runs.
 *
 * Every refusal has the standard body `{code, message, type}`, unless the
 * surface the request is for shapes its own (MCP: a JSON-RPC error, with the
 * request's id read from a body over the limit by at most as much again).
 * The surfaces are given by the server (LimitedSurface); this module names
 * none. The body is read here once, under the limit; the request keeps it,
 * so the handler's own read returns the same bytes (the router hands
 * handlers this same request).
 */
import { ByteSize, Context, Effect } from "effect"
import { HttpIncomingMessage, HttpServerRequest, HttpServerResponse } from "effect/http"
import { errorAnswer } from "../../contract/ErrorAnswer.ts"
import { BadRequest, PayloadTooLarge } from "../../domain/Errors.ts"

/** The deepest nesting of arrays and objects a JSON body may have. */
export const MAX_JSON_DEPTH = 64

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

const isJson = (contentType: string | undefined) => contentType === undefined || /^application\/(?:[\w.+-]*\+)?json\s*(?:;|$)/i.test(contentType)

/** Why a request is refused before any route sees it. */
export type RefusalKind = "MalformedPath" | "TooLarge" | "TooDeep" | "Unreadable"

export interface Refusal {
  readonly kind: RefusalKind
  readonly status: 400 | 413
  readonly type: string
  readonly message: string
}

/** A surface whose requests are refused in a shape of their own, or whose body is bounded by the surface itself. */
export interface LimitedSurface {
  /** Whether the request is this surface's (its path; a surface may look at its method too). */
  readonly matches: (request: HttpServerRequest.HttpServerRequest) => boolean
  /** The body is streamed and bounded by the surface's own limit (a model file upload): nothing is read here. */
  readonly boundsItsBody?: boolean
  /** The refusal in the surface's shape; `id` is what `idOfLargeBody` read, when it read one. */
  readonly refusal?: (refusal: Refusal, id: string | number | undefined) => HttpServerResponse.HttpServerResponse
  /**
   * For a body over MAX_BODY_BYTES by at most as much again: what the
   * refusal names of it (MCP: the request's id), read as it streams in.
   */
  readonly idOfLargeBody?: (request: HttpServerRequest.HttpServerRequest) => Effect.Effect<string | number | undefined>
}

/** The refusal, in the shape of the surface that refuses it. */
const refusalResponse = (surface: LimitedSurface | undefined, refusal: Refusal, id?: string | number) => {
  if (surface?.refusal !== undefined) return surface.refusal(refusal, id)
  const response = errorAnswer({ code: refusal.status, message: refusal.message, type: refusal.type })
  return refusal.status === 413 ? HttpServerResponse.setHeaders(response, { connection: "close" }) : response
}

const tooLarge = (maxBodyBytes: number): Refusal => {
  const { code, message, type } = PayloadTooLarge.over(maxBodyBytes)
  return { kind: "TooLarge", status: code, type, message }
}

const MALFORMED_PATH: Refusal = {
  kind: "MalformedPath",
  status: 400,
  type: "MalformedPath",
  message: "The request path has a malformed percent-encoding"
}

const TOO_DEEP: Refusal = {
  kind: "TooDeep",
  status: 400,
  type: BadRequest.name,
  message: `The request body nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels`
}

const UNREADABLE: Refusal = {
  kind: "Unreadable",
  status: 400,
  type: "UnreadableBody",
  message: "The request body could not be read"
}

/**
 * How far a body over MAX_BODY_BYTES is read, as a multiple of it, on a
 * surface that names something of it in its refusal (MCP's id: the official
 * clients write it last, after the parameters that make the body too large).
 * A larger body is refused at once.
 */
const ID_SCAN_FACTOR = 2

/** The middleware: `maxBodyBytes` is MAX_BODY_BYTES; `surfaces`, those with refusals or limits of their own. */
export const requestLimits = (maxBodyBytes: number, surfaces: ReadonlyArray<LimitedSurface>) => {
  const limit = ByteSize.bytes(maxBodyBytes)
  return <E, R>(
    app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
  ): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R> =>
    Effect.withFiber((fiber) => {
      const request = Context.getUnsafe(fiber.context, HttpServerRequest.HttpServerRequest)
      const surface = surfaces.find((candidate) => candidate.matches(request))
      if (!pathDecodes(request.url)) return Effect.succeed(refusalResponse(surface, MALFORMED_PATH))
      // No route reads the body of these methods, so there is nothing to bound (and no headers to look at on the hot path).
      if (BODYLESS.has(request.method)) return app
      // An upload's body streams to storage under its own limit, MODEL_UPLOAD_MAX_BYTES (ModelFileHandlers.ts).
      if (surface?.boundsItsBody === true) return app
      const declared = Number(request.headers["content-length"])
      if (declared > maxBodyBytes) {
        const idOf = surface?.idOfLargeBody
        return idOf !== undefined && declared <= ID_SCAN_FACTOR * maxBodyBytes
          ? Effect.map(idOf(request), (id) => refusalResponse(surface, tooLarge(maxBodyBytes), id))
          : Effect.succeed(refusalResponse(surface, tooLarge(maxBodyBytes)))
      }
      const read = Effect.provideService(request.text, HttpIncomingMessage.MaxBodySize, limit)
      return Effect.matchEffect(read, {
        onFailure: (error) =>
          Effect.succeed(refusalResponse(
            surface,
            error.reason._tag === "RequestParseError" && error.reason.reason === "BodyTooLarge" ? tooLarge(maxBodyBytes) : UNREADABLE
          )),
        onSuccess: (text) =>
          isJson(request.headers["content-type"]) && nestsDeeperThan(text, MAX_JSON_DEPTH)
            ? Effect.succeed(refusalResponse(surface, TOO_DEEP))
            : app
      })
    })
}
