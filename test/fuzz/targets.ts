/**
 * What the fuzzer calls, derived from the API's own definitions: every REST
 * endpoint of PublicApi (its groups and endpoints are iterated, never listed
 * here) and every MCP tool of McpTools.
 *
 * For each input part (path parameters, query, JSON body; for a tool, its
 * arguments) a target carries:
 *   - a pool of valid values in wire form, generated from the part's Schema by
 *     Effect's Schema-derived Arbitrary (decoded side), then encoded with the
 *     same Schema (NumberFromString becomes a string, and so on);
 *   - an oracle: the Schema decode the server runs (excess keys are errors),
 *     which says whether a mutated input is still valid.
 */
import { Arbitrary, Effect, Exit, Schema, SchemaAST } from "effect"
import type { HttpApiEndpoint } from "effect/http-api"
import { McpTools } from "../../src/contract/mcp/tools.ts"
import { PublicApi } from "../../src/contract/PublicApi.ts"

export type Json = null | boolean | number | string | ReadonlyArray<Json> | { readonly [key: string]: Json }
/** A query as the server parses it: a repeated parameter is an array. */
export type WireQuery = Readonly<Record<string, string | ReadonlyArray<string>>>

/** One input part of a target: its valid wire values, the keys it knows, and whether a value is valid. */
export interface Part<A> {
  readonly pool: ReadonlyArray<A>
  /** Top-level keys of the part's Schema, and which of them are required. */
  readonly keys: ReadonlyArray<string>
  readonly required: ReadonlyArray<string>
  readonly isValid: (value: unknown) => boolean
}

export interface RestTarget {
  readonly kind: "rest"
  /** `<group>.<endpoint>` */
  readonly id: string
  readonly method: string
  /** `/v1/customer/:id` (the API's prefix included) */
  readonly path: string
  readonly params: Part<Readonly<Record<string, string>>> | undefined
  readonly query: Part<WireQuery> | undefined
  readonly payload: Part<Json> | undefined
}

export interface McpTarget {
  readonly kind: "mcp"
  /** `mcp.<tool name>` */
  readonly id: string
  readonly tool: string
  readonly args: Part<{ readonly [key: string]: Json }>
}

export type Target = RestTarget | McpTarget

/** Valid values kept per part: enough variety, cheap to generate. */
const POOL_SIZE = 24
const EXCESS_IS_ERROR = { onExcessProperty: "error" } as const

/** The Struct behind a part (HttpApi makes a Struct of `{ id: ... }` fields). */
const objectsOf = (schema: Schema.Top): SchemaAST.Objects | undefined => {
  const ast = SchemaAST.toType(schema.ast)
  return ast._tag === "Objects" ? ast : undefined
}

const keysOf = (schema: Schema.Top) => {
  const objects = objectsOf(schema)
  const signatures = objects?.propertySignatures ?? []
  return {
    keys: signatures.map((signature) => String(signature.name)),
    required: signatures.filter((signature) => !SchemaAST.isOptional(signature.type)).map((signature) => String(signature.name))
  }
}

/**
 * `count` values of the decoded side of `schema`, at growing sizes, encoded
 * with `encode`. Values `keep` rejects are dropped (see `pathSafe`).
 */
const validPool = <A>(
  schema: Schema.Top,
  encode: (value: unknown) => A,
  seed: number,
  keep: (value: A) => boolean = () => true
): ReadonlyArray<A> => {
  const arbitrary = Arbitrary.schema(Schema.toType(schema) as Schema.Top as Schema.Constraint)
  const values: Array<A> = []
  for (const size of [0, 2, 5, 10, 20, 40]) {
    const sampled = Effect.runSync(Effect.result(
      Arbitrary.sampleEffect(arbitrary, { count: POOL_SIZE / 6, size, seed: `${seed}:${size}`, maxDiscards: 2_000 })
    ))
    // A size can be too small for a rule across fields (at size 0 optional fields are absent): the others do.
    if (sampled._tag === "Failure") continue
    for (const value of sampled.success) {
      const encoded = encode(value)
      if (keep(encoded)) values.push(encoded)
    }
  }
  if (values.length === 0) {
    throw new Error(`cannot generate valid values of ${JSON.stringify(Schema.toJsonSchemaDocument(Schema.toType(schema)).schema).slice(0, 300)}`)
  }
  return values
}

const oracle = (decode: (input: unknown) => Exit.Exit<unknown, unknown>) => (value: unknown) => Exit.isSuccess(decode(value))

/**
 * A path segment a client can send as it is: the URL parser resolves `.`
 * and `..` (plain or percent-encoded) as dot segments, so such an id cannot
 * be addressed by any HTTP client; the fuzzer does not pretend to.
 */
const pathSafe = (params: Readonly<Record<string, string>>) => Object.values(params).every((value) => value !== "." && value !== "..")

const seedOf = (base: number, id: string) => {
  let hash = base >>> 0
  for (const char of id) hash = Math.imul(hash ^ char.charCodeAt(0), 16_777_619) >>> 0
  return hash
}

/** The JSON body Schema of an endpoint, if it takes one. */
const payloadSchema = (endpoint: HttpApiEndpoint.Top): Schema.Top | undefined => {
  const json = (endpoint.payload as ReadonlyMap<string, { readonly schemas: ReadonlyArray<Schema.Top> }>).get("application/json")
  return json?.schemas[0]
}

const restTarget = (groupId: string, endpoint: HttpApiEndpoint.Top, seed: number): RestTarget => {
  const id = `${groupId}.${endpoint.identifier}`
  const part = <A>(
    schema: Schema.Top | undefined,
    encode: (value: unknown) => A,
    decode: (input: unknown) => Exit.Exit<unknown, unknown>,
    name: string,
    keep?: (value: A) => boolean
  ): Part<A> | undefined =>
    schema === undefined ? undefined : {
      pool: validPool(schema, encode, seedOf(seed, `${id}.${name}`), keep),
      ...keysOf(schema),
      isValid: oracle(decode)
    }
  const params = endpoint.params as Schema.Codec<unknown, unknown> | undefined
  const query = endpoint.query as Schema.Codec<unknown, unknown> | undefined
  const payload = payloadSchema(endpoint)
  const payloadJson = payload === undefined ? undefined : Schema.toCodecJson(payload) as unknown as Schema.Codec<unknown, unknown>
  return {
    kind: "rest",
    id,
    method: endpoint.method,
    path: endpoint.path,
    params: params === undefined ? undefined : part(
      params,
      (value) => Schema.encodeUnknownSync(params)(value) as Record<string, string>,
      Schema.decodeUnknownExit(params),
      "params",
      pathSafe
    ),
    query: query === undefined ? undefined : part(
      query,
      (value) => Schema.encodeUnknownSync(query)(value) as WireQuery,
      Schema.decodeUnknownExit(query, EXCESS_IS_ERROR),
      "query"
    ),
    payload: payloadJson === undefined ? undefined : part(
      payload,
      (value) => Schema.encodeUnknownSync(payloadJson)(value) as Json,
      Schema.decodeUnknownExit(payloadJson, EXCESS_IS_ERROR),
      "payload"
    )
  }
}

/**
 * A tool's arguments: its endpoint's parts side by side, each as the JSON of
 * its decoded side (what tools.ts accepts), each generated from its own
 * Schema (rules across fields included); the tool's own decoding is the oracle.
 */
const mcpTarget = (derived: (typeof McpTools)[number], seed: number): McpTarget => {
  const endpoint = derived.spec.endpoint
  const schemas = [endpoint.params, endpoint.query, payloadSchema(endpoint)].filter((schema): schema is Schema.Top => schema !== undefined)
  const isValid = (value: unknown) => Exit.isSuccess(Effect.runSyncExit(derived.decodeArguments(value)))
  const pools = schemas.map((schema, index) => {
    const codec = Schema.toCodecJson(Schema.toType(schema)) as unknown as Schema.Codec<unknown, unknown>
    return validPool(
      schema,
      (value) => Schema.encodeUnknownSync(codec)(value) as { readonly [key: string]: Json },
      seedOf(seed, `${derived.spec.name}.${index}`)
    )
  })
  const size = Math.max(...pools.map((pool) => pool.length))
  const pool = Array.from(
    { length: size },
    (_, index) => Object.assign({}, ...pools.map((part) => part[index % part.length])) as { readonly [key: string]: Json }
  )
    .filter(isValid)
  const keys = schemas.map(keysOf)
  return {
    kind: "mcp",
    id: `mcp.${derived.spec.name}`,
    tool: derived.spec.name,
    args: { pool, keys: keys.flatMap((part) => part.keys), required: keys.flatMap((part) => part.required), isValid }
  }
}

/** Whether an endpoint's body is not JSON (a model file upload): its own suite covers it (test/rest/model-upload.test.ts). */
const takesRawBody = (endpoint: HttpApiEndpoint.Top) => {
  const media = endpoint.payload as ReadonlyMap<string, unknown>
  return media.size > 0 && !media.has("application/json")
}

/** Every REST endpoint of PublicApi whose body, if any, is JSON, and every MCP tool. */
export const deriveTargets = (seed: number): ReadonlyArray<Target> => {
  const rest = Object.values(PublicApi.groups).flatMap((group) =>
    Object.values(group.endpoints)
      .filter((endpoint) => !takesRawBody(endpoint as HttpApiEndpoint.Top))
      .map((endpoint) => restTarget(group.identifier, endpoint as HttpApiEndpoint.Top, seed))
  )
  return [...rest, ...McpTools.map((derived) => mcpTarget(derived, seed))]
}
