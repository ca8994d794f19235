/**
 * `Idempotency-Key` around the forwarded handler (ForwardHandlers.ts): a
 * call of an operation that takes the header (src/contract/IdempotencyKey.ts)
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
 * The key and fingerprint go on to the engine (CurrentIdempotentCall, read by
 * ForwardHandlers and the MCP tool calls into the call's scope): the engine
 * commits its answer with the write (src/engine/idempotency.ts), so when this
 * record of the key is lost (the instance died after the commit, before
 * storing the answer; its lease then runs out within seconds) the retry's
 * call finds the engine's answer and answers it, replayed, instead of writing
 * twice.
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
import { CurrentCaller } from "../../contract/Authorization.ts"
import type { DecodedInput, IdempotentCall } from "../../contract/EngineCall.ts"
import { errorAnswer } from "../../contract/ErrorAnswer.ts"
import { IDEMPOTENCY_KEY_HEADER, IDEMPOTENCY_KEY_PATTERN, IDEMPOTENT_REPLAYED_HEADER, takesIdempotencyKey } from "../../contract/IdempotencyKey.ts"
import { presentParts } from "../../contract/Operations.ts"
import { type ClaimOutcome, type IdempotencyClaim, IdempotencyStore, type StoredAnswer } from "../../services/IdempotencyStore.ts"

/** What the wrapper reads of a forwarded request: its endpoint, the request (headers), the decoded input. */
export interface KeyedRequest {
  readonly endpoint: HttpApiEndpoint.Top
  readonly request: HttpServerRequest.HttpServerRequest
  readonly params?: unknown
  readonly query?: unknown
  readonly payload?: unknown
}

type Response = HttpServerResponse.HttpServerResponse

/** The Idempotency-Key of the call running, for the engine (ForwardHandlers and the MCP tool calls put it in the call's scope). */
export const CurrentIdempotentCall = Context.Reference<IdempotentCall | undefined>("mfg/http/CurrentIdempotentCall", {
  defaultValue: () => undefined
})

/** Runs `respond` as the Idempotency-Key of `request` says: once per app and key, its answer replayed. */
export type WithIdempotencyKey = <R>(
  request: KeyedRequest,
  respond: Effect.Effect<Response, never, R>
) => Effect.Effect<Response, never, R | CurrentCaller>

/** A refusal of the key itself (invalid, in use, reused) or of its store (unavailable), as the REST error body says it. */
export interface KeyRefusal {
  readonly code: number
  readonly message: string
  readonly type: string
  /** Seconds after which a retry may be answered (a key still in use). */
  readonly retryAfter?: number | undefined
}

/** How one surface's answers are kept under a key: stored (or not: "try again"), replayed, and a refusal said. */
export interface AnswerKeeping<A> {
  /** The answer to store, or undefined when it means "try again" (the key is then given back). */
  readonly store: (answer: A) => StoredAnswer | undefined
  readonly replay: (stored: StoredAnswer) => A
  /** The answer marked as a replay: the engine answered the one it had stored with its write. */
  readonly markReplayed: (answer: A) => A
  readonly refuse: (refusal: KeyRefusal) => A
}

/**
 * Runs `respond` once per app and `key` (the call's `fingerprint` telling a
 * retry from another request): claimed, run in the layer's scope and its
 * answer stored; a retry answered again; a key in use or reused refused.
 */
export type RunOnce = <A, R>(
  key: string,
  fingerprint: string,
  respond: Effect.Effect<A, never, R>,
  keeping: AnswerKeeping<A>
) => Effect.Effect<A, never, R | CurrentCaller>

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

/** What a call is, for telling a retry from another request under the same key: what it calls (`operation`) and its decoded input. */
export const fingerprint = (operation: string, input: DecodedInput): string => hash("sha256", `${operation}\n${canonicalJson(presentParts(input))}`, "hex")

/** What a REST request is: its method, route and decoded input. */
export const fingerprintOf = (request: KeyedRequest): string => fingerprint(`${request.endpoint.method} ${request.endpoint.path}`, request)

/** Whether `key` is a key at all: 1–255 visible ASCII characters. */
export const isValidKey = (key: string) => IDEMPOTENCY_KEY_PATTERN.test(key)

/** The refusal of a key that is none (400, naming the header). */
export const INVALID_KEY: KeyRefusal = {
  code: 400,
  message: `Invalid value for header "${IDEMPOTENCY_KEY_HEADER}": expected 1 to 255 visible ASCII characters (no spaces), such as a UUID`,
  type: "ValidationError"
}

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

const REPLAYED_HEADER = IDEMPOTENT_REPLAYED_HEADER.toLowerCase()

/** The stored answer, again. */
const replay = (answer: StoredAnswer): Response => {
  const { "content-type": contentType, ...rest } = answer.headers
  const headers = { ...rest, [REPLAYED_HEADER]: "true" }
  return answer.body === null
    ? HttpServerResponse.empty({ status: answer.status, headers })
    : HttpServerResponse.uint8Array(encoder.encode(answer.body), { status: answer.status, headers, contentType })
}

const inUse = (key: string): KeyRefusal => ({
  code: 409,
  message: `A request with ${IDEMPOTENCY_KEY_HEADER} "${key}" is still running; retry once it has been answered`,
  type: "IdempotencyKeyInUse",
  retryAfter: 1
})

const reused = (key: string): KeyRefusal => ({
  code: 422,
  message: `${IDEMPOTENCY_KEY_HEADER} "${key}" was already used for a different request (another operation or body); ` +
    "use a new key for a new request",
  type: "IdempotencyKeyReused"
})

/** REST answers: the HTTP response, stored as status, replayed headers and body. */
const httpKeeping: AnswerKeeping<Response> = {
  store: storable,
  replay,
  markReplayed: (response) => HttpServerResponse.setHeader(response, REPLAYED_HEADER, "true"),
  refuse: (refusal) => {
    const response = errorAnswer(refusal)
    return refusal.retryAfter === undefined ? response : HttpServerResponse.setHeader(response, "retry-after", String(refusal.retryAfter))
  }
}

/** A claim's outcome, once acted on: the call started, or what answers instead. */
type Started<A> = { readonly _tag: "Started"; readonly fiber: Fiber.Fiber<A> } | Exclude<ClaimOutcome, { readonly _tag: "Claimed" }>

/** The core: one call per app and key, over `store`, run in `scope`. */
export const makeRunOnce = (store: IdempotencyStore["Service"], scope: Scope.Scope): RunOnce => {
  /**
   * The call, with its key for the engine, then its answer stored or the key
   * given back (also when it fails or is interrupted at shutdown). An answer
   * the engine had stored is marked as replayed, as ours are.
   */
  const runAndStore = <A, R>(claim: IdempotencyClaim, respond: Effect.Effect<A, never, R>, keeping: AnswerKeeping<A>) => {
    let replayed = false
    const call: IdempotentCall = { key: claim.key, fingerprint: claim.fingerprint, onReplay: () => (replayed = true) }
    const marked = Effect.map(
      Effect.provideService(respond, CurrentIdempotentCall, call),
      (answer) => replayed ? keeping.markReplayed(answer) : answer
    )
    return Effect.onExit(marked, (exit) => {
      const answer = Exit.isSuccess(exit) ? keeping.store(exit.value) : undefined
      return (answer === undefined ? store.release(claim) : store.complete(claim, answer)).pipe(
        Effect.catch((error) => Effect.logWarning("Idempotency-Key answer not stored", error.message))
      )
    })
  }

  return Effect.fnUntraced(function*<A, R>(key: string, fingerprint: string, respond: Effect.Effect<A, never, R>, keeping: AnswerKeeping<A>) {
    const caller = yield* CurrentCaller
    const claim: IdempotencyClaim = { appId: caller.dataSpace, key, fingerprint, owner: caller.requestId }
    // Claimed and started in one step: an interrupt in between would leave the key held until its lease is over.
    const started = yield* Effect.result(
      Effect.uninterruptible(Effect.flatMap(store.claim(claim), (outcome): Effect.Effect<Started<A>, never, R> =>
        outcome._tag === "Claimed"
          ? Effect.map(Effect.forkIn(runAndStore(claim, respond, keeping), scope), (fiber): Started<A> => ({ _tag: "Started", fiber }))
          : Effect.succeed(outcome)))
    )
    if (started._tag === "Failure") return keeping.refuse(started.failure)
    const outcome = started.success
    switch (outcome._tag) {
      case "Started":
        return yield* Fiber.join(outcome.fiber)
      case "Replay":
        return keeping.replay(outcome.answer)
      case "InUse":
        return keeping.refuse(inUse(key))
      case "Reused":
        return keeping.refuse(reused(key))
    }
  }) as RunOnce
}

/** The REST wrapper: the header read, the key checked, the call run once (`once`). */
export const makeIdempotency = (once: RunOnce): WithIdempotencyKey => (request, respond) => {
  // Only here for the operations that take a key: a GET returns at once.
  if (!takesIdempotencyKey(request.endpoint)) return respond
  const key = request.request.headers[HEADER]
  if (key === undefined) return respond
  if (!isValidKey(key)) return Effect.succeed(httpKeeping.refuse(INVALID_KEY))
  return once(key, fingerprintOf(request), respond, httpKeeping)
}

/** The core over the IdempotencyStore; its calls run in this layer's scope (interrupted, and their keys given back, at shutdown). */
export class IdempotentOnce extends Context.Service<IdempotentOnce, RunOnce>()("mfg/http/IdempotentOnce") {
  static readonly layer = Layer.effect(
    IdempotentOnce,
    Effect.gen(function*() {
      return makeRunOnce(yield* IdempotencyStore, yield* Effect.scope)
    })
  )
}

/** The REST wrapper, over the core. */
export class IdempotentCalls extends Context.Service<IdempotentCalls, WithIdempotencyKey>()("mfg/http/IdempotentCalls") {
  static readonly layer = Layer.effect(IdempotentCalls, Effect.map(IdempotentOnce, makeIdempotency)).pipe(
    Layer.provide(IdempotentOnce.layer)
  )
}
