/**
 * `Idempotency-Key` on MCP `tools/call`, as on REST (Idempotency.ts): the
 * HTTP request's header, for a tool whose REST operation takes it (every
 * POST, and the workflow PUT of send_ticket_to_production). A retried call
 * with the same key and the same tool and arguments runs once; its result is
 * stored for the app for 24 hours and answered again, whatever the JSON-RPC
 * id of the retry, with `_meta["io.mfg/idempotentReplayed"]: true`.
 *
 * The same rules as REST: a key used for another tool or other arguments is
 * refused (422 IdempotencyKeyReused), a retry while the first call runs too
 * (409 IdempotencyKeyInUse), an invalid key is a 400 naming the header, each
 * as a tool error with the REST error body; a result that means "try again"
 * (a 5xx, a 429, invalid arguments) is not stored. The fingerprint names the
 * tool, so a REST call and a tool call never share a key's answer (the
 * second is the 422).
 */
import { Context, Effect } from "effect"
import type { DecodedInput } from "../../contract/EngineCall.ts"
import { IDEMPOTENCY_KEY_HEADER } from "../../contract/IdempotencyKey.ts"
import type { StoredAnswer } from "../../services/IdempotencyStore.ts"
import { type AnswerKeeping, fingerprint, INVALID_KEY, isValidKey, type KeyRefusal, type RunOnce } from "../rest/index.ts"
import type { TextBlock, ToolResult } from "./ToolResult.ts"

/** The `_meta` key of a result answered again for a retried call (REST: `Idempotent-Replayed: true`). */
export const REPLAYED_META = "io.mfg/idempotentReplayed"

/** What a `tools/call` carries beyond its JSON-RPC message: the HTTP request's `Idempotency-Key`. */
export interface CallHeaders {
  readonly idempotencyKey: string | undefined
}

const IDEMPOTENCY_KEY = IDEMPOTENCY_KEY_HEADER.toLowerCase()

/** The call headers of an HTTP request's (lower-case) headers. */
export const callHeadersOf = (headers: Readonly<Record<string, string | undefined>>): CallHeaders => ({ idempotencyKey: headers[IDEMPOTENCY_KEY] })

/**
 * The call headers as a request service, for the calls McpServer makes
 * (McpAuth provides it with the caller); the direct answers pass them to the
 * call instead, one context addition less per call.
 */
export class McpCallHeaders extends Context.Service<McpCallHeaders, CallHeaders>()("mfg/http/McpCallHeaders") {
  static readonly fromHeaders = (headers: Readonly<Record<string, string | undefined>>) => McpCallHeaders.of(callHeadersOf(headers))
}

/** A tool call's outcome: its result, and whether a retry may be answered with it. */
export interface ToolOutcome {
  readonly result: ToolResult
  /** False for a result that means "try again" (a 5xx, a 429, invalid arguments) and for a refusal of the key. */
  readonly storable: boolean
}

/** A result as stored: the fields a tool result has, as JSON. */
const stored = (result: ToolResult): StoredAnswer => ({
  status: 200,
  headers: {},
  body: JSON.stringify({
    ...(result._meta === undefined ? {} : { _meta: result._meta }),
    isError: result.isError ?? false,
    ...(result.structuredContent === undefined ? {} : { structuredContent: result.structuredContent }),
    content: result.content
  })
})

const replayed = (answer: StoredAnswer): ToolResult => {
  const { _meta, ...rest } = JSON.parse(answer.body ?? "{}") as {
    readonly _meta?: Readonly<Record<string, unknown>>
    readonly isError: boolean
    readonly structuredContent?: unknown
    readonly content: ReadonlyArray<TextBlock>
  }
  return { ...rest, _meta: { ..._meta, [REPLAYED_META]: true } }
}

/** A result the engine answered from its own store (the gateway's record of the key was lost), marked as a replay. */
const markedReplayed = (result: ToolResult): ToolResult => ({ ...result, _meta: { ...result._meta, [REPLAYED_META]: true } })

/** A refusal of the key, as a tool error with the REST error body. */
const refusedResult = (refusal: KeyRefusal): ToolResult => {
  const body = { code: refusal.code, message: refusal.message, type: refusal.type }
  return { isError: true, content: [{ type: "text", text: JSON.stringify(body) }] }
}

const toolKeeping: AnswerKeeping<ToolOutcome> = {
  store: (outcome) => outcome.storable ? stored(outcome.result) : undefined,
  replay: (answer) => ({ result: replayed(answer), storable: false }),
  markReplayed: (outcome) => ({ ...outcome, result: markedReplayed(outcome.result) }),
  refuse: (refusal) => ({ result: refusedResult(refusal), storable: false })
}

/**
 * Runs `call` as the request's Idempotency-Key (`idempotencyKey`) says, for
 * the tool `name` whose decoded input is `input`: once per app and key when
 * there is one.
 */
export const withToolKey = <R>(
  once: RunOnce,
  name: string,
  input: DecodedInput,
  idempotencyKey: string | undefined,
  call: Effect.Effect<ToolOutcome, never, R>
) => {
  if (idempotencyKey === undefined) return call
  if (!isValidKey(idempotencyKey)) return Effect.succeed(toolKeeping.refuse(INVALID_KEY))
  return once(idempotencyKey, fingerprint(`MCP tools/call ${name}`, input), call, toolKeeping)
}
