/**
 * The JSON codec of a schema known only as `Schema.Top` (an endpoint's
 * success or input, a resource's page). The contract's schemas are plain
 * data: none needs a service to decode or encode, which the codec's type says.
 */
import { Schema } from "effect"

/** `schema`'s JSON codec (`Schema.toCodecJson`), as one that needs no service. */
export const plainJsonCodec = (schema: Schema.Top): Schema.Codec<unknown, unknown> =>
  Schema.make<Schema.Codec<unknown, unknown>>(Schema.toCodecJson(schema).ast)
