/**
 * `Idempotency-Key` around the forwarded handler (ForwardHandlers.ts): a
 * call of an operation that takes the header (src/api/IdempotencyKey.ts)
 * and carries it runs once per app and key; its answer is stored
 * (IdempotencyStore) and answered again to the same request for 24 h.
 *
 *   no header, or an operation without it (GET, DELETE, whole-record PUT): as without this file
 *   key not 1–255 visible ASCII characters ──── 400 naming the header
 *   claim (app, key, fingerprint) ┬ taken ────── run; store the answer, or give the key back
 *                                 ├ answered ─── the stored status, headers and body, `Idempotent-Replayed: true`
 *                                 ├ running ──── 409 IdempotencyKeyInUse, `Retry-After: 1`
 *                                 └ other request ─ 422 IdempotencyKeyReused
 *
 * The fingerprint is SHA-256 of the method, the route and the canonical JSON
 * (keys sorted) of the decoded path parameters, query and body: the decoded
 * input, not the raw bytes, so a retry whose JSON differs only in key order,
 * spacing or escapes is the same request, as the engine sees it.
 *
 * Once claimed, the call runs in the layer's scope rather than the request's:
 * a client that gives up (a timeout) does not interrupt it, and its answer is
 * stored for the retry. Answers that mean "try again" are not stored and the
 * key is given back, so the retry runs: 5xx (the engine unreachable, late or
 * unusable, storage down), 429, and a 400 (the request was malformed: it did
 * not run, and the corrected request may use the same key). A stored answer is
 * the client's answer even when storing it failed (the key then stays
 * `running` until its lease is over, and a retry is a 409 until then).
 *
 * Every call, a replay or a refusal too, has been metered by the
 * IncomingSecretGuard before it gets here, like any other.
 */
import { Context, Effect, Exit, Fiber, Layer, type Scope } from "effect"
import { type HttpServerRequest, HttpServerResponse } from "effect/http"
import type { HttpApiEndpoint } from "effect/http-api"
import { hash } from "node:crypto"
import { CurrentCaller } from "../../api/Authorization.ts"
import { IDEMPOTENCY_KEY_HEADER, IDEMPOTENCY_KEY_PATTERN, IDEMPOTENT_REPLAYED_HEADER, takesIdempotencyKey } from "../../api/IdempotencyKey.ts"
import { presentParts } from "../../api/Operations.ts"
import { BadRequest } from "../../domain/Errors.ts"
import { type ClaimOutcome, type IdempotencyClaim, IdempotencyStore, type StoredAnswer } from "../../services/IdempotencyStore.ts"
import { IdempotencySql } from "../IdempotencySql.ts"
import { errorResponse } from "./ErrorResponses.ts"

/** What the wrapper reads of a forwarded request: its endpoint, the request (headers), the decoded input. */
export interface KeyedRequest {
  readonly endpoint: HttpApiEndpoint.Top
  readonly request: HttpServerRequest.HttpServerRequest
  readonly params?: unknown
  readonly query?: unknown
  readonly payload?: unknown
}

type Response = HttpServerResponse.HttpServerResponse

/** A claim's outcome, once acted on: the call started, or what answers instead. */
type Started = { readonly _tag: "Started"; readonly fiber: Fiber.Fiber<Response> } | Exclude<ClaimOutcome, { readonly _tag: "Claimed" }>

/** Runs `respond` as the Idempotency-Key of `request` says: once per app and key, its answer replayed. */
export type WithIdempotencyKey = <R>(
  request: KeyedRequest,
  respond: Effect.Effect<Response, never, R>
) => Effect.Effect<Response, never, R | CurrentCaller>

const HEADER = IDEMPOTENCY_KEY_HEADER.toLowerCase()

/** The response headers a replay carries besides the body's content type: what the first answer said about its result. */
const REPLAYED_HEADERS = ["location", "etag", "last-modified", "x-error-source", "x-error-source-request-id"] as const

/** JSON of `value` with every object's keys sorted: the same input, whatever order its fields came in. */
const canonicalJson = (value: unknown): string =>
  JSON.stringify(value, (_key, item: unknown) => {
    if (typeof item === "bigint") return item.toString()
    if (item === null || typeof item !== "object" || Array.isArray(item)) return item
    const entries = Object.entries(item as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    return Object.fromEntries(entries)
  }) ?? ""

/** What a request is, for telling a retry from another request under the same key. */
export const fingerprintOf = (request: KeyedRequest): string =>
  hash("sha256", `${request.endpoint.method} ${request.endpoint.path}\n${canonicalJson(presentParts(request))}`, "hex")

const utf8 = new TextDecoder("utf-8", { fatal: true })
const encoder = new TextEncoder()

/** The answer to store, or undefined when it means "try again" (or has a body that cannot be stored as text). */
const storable = (response: Response): StoredAnswer | undefined => {
  const status = response.status
  if (status >= 500 || status === 429 || status === 400) return undefined
  const headers: Record<string, string> = {}
  let body: string | null
  switch (response.body._tag) {
    case "Empty":
      body = null
      break
    case "Uint8Array":
      try {
        body = utf8.decode(response.body.body)
      } catch {
        return undefined
      }
      headers["content-type"] = response.body.contentType
      break
    default:
      return undefined
  }
  for (const name of REPLAYED_HEADERS) {
    const value = response.headers[name]
    if (value !== undefined) headers[name] = value
  }
  return { status, headers, body }
}

/** The stored answer, again. */
const replay = (answer: StoredAnswer): Response => {
  const { "content-type": contentType, ...rest } = answer.headers
  const headers = { ...rest, [IDEMPOTENT_REPLAYED_HEADER.toLowerCase()]: "true" }
  return answer.body === null
    ? HttpServerResponse.empty({ status: answer.status, headers })
    : HttpServerResponse.uint8Array(encoder.encode(answer.body), { status: answer.status, headers, contentType })
}

const invalidKey = () =>
  errorResponse(
    BadRequest.of(
      `Invalid value for header "${IDEMPOTENCY_KEY_HEADER}": expected 1 to 255 visible ASCII characters (no spaces), such as a UUID`
    )
  )

const inUse = (key: string) =>
  HttpServerResponse.setHeader(
    errorResponse({
      code: 409,
      message: `A request with ${IDEMPOTENCY_KEY_HEADER} "${key}" is still running; retry once it has been answered`,
      type: "IdempotencyKeyInUse"
    }),
    "retry-after",
    "1"
  )

const reused = (key: string) =>
  errorResponse({
    code: 422,
    message: `${IDEMPOTENCY_KEY_HEADER} "${key}" was already used for a different request (another operation or body); ` +
      "use a new key for a new request",
    type: "IdempotencyKeyReused"
  })

export const makeIdempotency = (
  store: IdempotencyStore["Service"],
  scope: Scope.Scope
): WithIdempotencyKey => {
  /** The call, then its answer stored or the key given back (also when it fails or is interrupted at shutdown). */
  const runAndStore = <R>(claim: IdempotencyClaim, respond: Effect.Effect<Response, never, R>) =>
    Effect.onExit(respond, (exit) => {
      const answer = Exit.isSuccess(exit) ? storable(exit.value) : undefined
      return (answer === undefined ? store.release(claim) : store.complete(claim, answer)).pipe(
        Effect.catch((error) => Effect.logWarning("Idempotency-Key answer not stored", error.message))
      )
    })

  const keyed = Effect.fnUntraced(function*<R>(request: KeyedRequest, key: string, respond: Effect.Effect<Response, never, R>) {
    const caller = yield* CurrentCaller
    const claim: IdempotencyClaim = { appId: caller.dataSpace, key, fingerprint: fingerprintOf(request), owner: caller.requestId }
    // Claimed and started in one step: an interrupt in between would leave the key held until its lease is over.
    const started: Started = yield* Effect.uninterruptible(Effect.flatMap(store.claim(claim), (outcome) =>
      outcome._tag === "Claimed"
        ? Effect.map(Effect.forkIn(runAndStore(claim, respond), scope), (fiber): Started => ({ _tag: "Started", fiber }))
        : Effect.succeed(outcome)))
    switch (started._tag) {
      case "Started":
        return yield* Fiber.join(started.fiber)
      case "Replay":
        return replay(started.answer)
      case "InUse":
        return inUse(key)
      case "Reused":
        return reused(key)
    }
  }, Effect.catch((error) => Effect.succeed(errorResponse(error))))

  return (request, respond) => {
    // Only here for the operations that take a key: a GET returns at once.
    if (!takesIdempotencyKey(request.endpoint)) return respond
    const key = request.request.headers[HEADER]
    if (key === undefined) return respond
    if (!IDEMPOTENCY_KEY_PATTERN.test(key)) return Effect.succeed(invalidKey())
    return keyed(request, key, respond)
  }
}

/** The wrapper, over the SQL store; its calls run in this layer's scope (interrupted, and their keys given back, at shutdown). */
export class IdempotentCalls extends Context.Service<IdempotentCalls, WithIdempotencyKey>()("mfg/http/IdempotentCalls") {
  static readonly layer = Layer.effect(
    IdempotentCalls,
    Effect.gen(function*() {
      return makeIdempotency(yield* IdempotencyStore, yield* Effect.scope)
    })
  ).pipe(Layer.provide(IdempotencySql))
}
