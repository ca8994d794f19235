/**
 * An operation's answer as JSON, and back, by its endpoint's own success
 * schema: what the engine stores as the answer of a keyed write
 * (src/engine/idempotency.ts) and answers again to its retry, exactly as the
 * first call's answer (the gateway then encodes it as it did the first time).
 *
 * A page (a paged list's answer) is its records, encoded by the schema, and
 * its total; an answer of `null` (the spec's empty 200) and the answer of an
 * endpoint without a body are `null`.
 */
import { Effect, Schema } from "effect"
import { type HttpApiEndpoint, HttpApiSchema } from "effect/http-api"
import { plainJsonCodec } from "../domain/JsonCodec.ts"
import { isPaged, type Page } from "./Operations.ts"

export interface AnswerCodec {
  readonly encode: (answer: unknown) => Effect.Effect<unknown, Schema.SchemaError>
  readonly decode: (json: unknown) => Effect.Effect<unknown, Schema.SchemaError>
}

const NO_BODY: AnswerCodec = { encode: () => Effect.succeed(null), decode: () => Effect.succeed(undefined) }

const make = (endpoint: HttpApiEndpoint.Top): AnswerCodec => {
  const body = [...endpoint.success].find((schema) => !HttpApiSchema.isNoContent(schema.ast))
  if (body === undefined) return NO_BODY
  // The public API's schemas are plain data: none needs a service to encode or decode.
  const codec = plainJsonCodec(body)
  const encode = Schema.encodeUnknownEffect(codec)
  const decode = Schema.decodeUnknownEffect(codec)
  if (!isPaged(endpoint)) {
    return {
      encode: (answer) => answer === null ? Effect.succeed(null) : encode(answer),
      decode: (json) => json === null ? Effect.succeed(null) : decode(json)
    }
  }
  return {
    encode: (answer) => {
      const page = answer as Page<unknown>
      return Effect.map(encode(page.items), (items) => ({ items, total: page.total }))
    },
    decode: (json) => {
      const page = json as { readonly items: unknown; readonly total: number }
      return Effect.map(decode(page.items), (items) => ({ items, total: page.total }))
    }
  }
}

const codecs = new WeakMap<HttpApiEndpoint.Top, AnswerCodec>()

/** The answer codec of `endpoint` (made once per endpoint). */
export const answerCodec = (endpoint: HttpApiEndpoint.Constraint): AnswerCodec => {
  const top = endpoint as HttpApiEndpoint.Top
  let codec = codecs.get(top)
  if (codec === undefined) {
    codec = make(top)
    codecs.set(top, codec)
  }
  return codec
}
