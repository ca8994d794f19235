/**
 * Requests to send, as fast-check arbitraries over the targets: a valid
 * request (values from the Schema-derived pools), or one made invalid in one
 * place: a wrong type, a missing or unknown field, a value out of range, a
 * huge string, malformed JSON or a body that is not an object, a bad,
 * repeated or unknown query parameter, a bad path parameter; a query
 * parameter or a body sent to an endpoint that declares none.
 *
 * Each case says what the server must answer: for a valid request anything
 * but a 400; for an invalid one a 400 naming the field or parameter (the
 * names it may give are listed). Whether a mutated input is still valid is
 * the Schema's to say (the target's oracle), not the mutation's: making an
 * optional field null or a number a bigger number may well be valid.
 */
import fc from "fast-check"
import type { Json, McpTarget, Part, RestTarget, Target, WireQuery } from "./targets.ts"

export interface Expectation {
  readonly valid: boolean
  /** Names an invalid request's 400 may give (the mutated one first). */
  readonly names: ReadonlyArray<string>
  /** The body as a whole is wrong (malformed JSON, not an object): no field to name. */
  readonly bodyLevel: boolean
}

export interface RestCase {
  readonly kind: "rest"
  readonly target: RestTarget
  readonly mutation: string
  readonly method: string
  /** Path and query, percent-encoded. */
  readonly url: string
  readonly body: string | undefined
  readonly expect: Expectation
}

export interface McpCase {
  readonly kind: "mcp"
  readonly target: McpTarget
  readonly mutation: string
  readonly arguments: unknown
  readonly expect: Expectation
}

export type Case = RestCase | McpCase

type Path = ReadonlyArray<string | number>

const dotted = (path: Path) => path.map(String).join(".")

/** Every node of a JSON value with its path (the root included). */
const nodes = (value: Json, path: Path = []): Array<{ path: Path; value: Json }> => {
  const here = [{ path, value }]
  if (Array.isArray(value)) return here.concat(value.flatMap((item, index) => nodes(item, [...path, index])))
  if (value !== null && typeof value === "object") {
    return here.concat(Object.entries(value).flatMap(([key, item]) => nodes(item as Json, [...path, key])))
  }
  return here
}

const setAt = (value: Json, path: Path, replacement: Json | undefined): Json => {
  if (path.length === 0) return replacement ?? null
  const [head, ...rest] = path
  if (Array.isArray(value)) {
    const copy = [...value]
    if (replacement === undefined && rest.length === 0) copy.splice(head as number, 1)
    else copy[head as number] = setAt(copy[head as number]!, rest, replacement)
    return copy
  }
  const record = { ...(value as Record<string, Json>) }
  if (replacement === undefined && rest.length === 0) delete record[head as string]
  else record[head as string] = setAt(record[head as string]!, rest, replacement)
  return record
}

const jsonType = (value: Json) => (value === null ? "null" : Array.isArray(value) ? "array" : typeof value)

const OTHER_VALUES: ReadonlyArray<Json> = [0, -1, 1.5, true, false, "x", "", null, [], {}, [1, "a"], { a: 1 }]
const NUMBERS: ReadonlyArray<number> = [-1, 0, -0.5, 0.5, 1.5, 1001, 2 ** 53, 1e21, -1e21, 1e308, -1e308]
/** Long enough to pass any length limit of the API, short enough for a request line or a body. */
const hugeString = fc.constantFrom(257, 1_001, 4_097, 20_000, 100_000).chain((length) =>
  fc.constantFrom("x", "é", "😀", " ", "<", "'").map((unit) => unit.repeat(Math.ceil(length / unit.length)).slice(0, length))
)
/** For a path or a query: ASCII, so that the request line stays within Node's header limit (16 KiB). */
const hugeAscii = fc.constantFrom(101, 201, 1_001, 4_097).map((length) => "x".repeat(length))
const shortGarbage = fc.constantFrom("", " ", "abc", "-1", "0", "1.5", "1e3", "1001", "true", "null", "2026-13-45", "%", "\u0000", "é", "../x")
const unknownKey = fc.oneof(
  fc.constantFrom("unexpected", "zz", "__proto__x", "ids[]", "createdAt[between]", "Limit", "constructor"),
  fc.string({ minLength: 1, maxLength: 12, unit: "grapheme-ascii" })
)

interface Mutated<A> {
  readonly value: A
  readonly mutation: string
  /** The path the mutation touched, dotted ("" for the whole value). */
  readonly name: string
  readonly bodyLevel?: boolean
}

/** One mutation of a JSON object (a body, or a tool's arguments). */
const mutateJson = (base: Json, part: Part<Json>): fc.Arbitrary<Mutated<Json>> => {
  const all = nodes(base)
  const inner = all.filter((node) => node.path.length > 0)
  const objects = all.filter((node) => node.value !== null && typeof node.value === "object" && !Array.isArray(node.value))
  const keyed = inner.filter((node) => typeof node.path[node.path.length - 1] === "string")
  const leaves = inner.filter((node) => typeof node.value === "number" || typeof node.value === "string")
  const options: Array<fc.Arbitrary<Mutated<Json>>> = []
  if (inner.length > 0) {
    options.push(
      fc.tuple(fc.constantFrom(...inner), fc.constantFrom(...OTHER_VALUES)).filter(([node, other]) => jsonType(node.value) !== jsonType(other))
        .map(([node, other]) => ({ value: setAt(base, node.path, other), mutation: "wrong type", name: dotted(node.path) }))
    )
  }
  // A required field left out (top-level ones from the Schema, nested ones as found).
  const required = part.required.filter((key) => typeof base === "object" && base !== null && !Array.isArray(base) && key in base)
  if (required.length > 0 || keyed.length > 0) {
    options.push(
      fc.oneof(
        ...(required.length > 0 ? [fc.constantFrom(...required).map((key): Path => [key])] : []),
        ...(keyed.length > 0 ? [fc.constantFrom(...keyed).map((node) => node.path)] : [])
      ).map((path) => ({ value: setAt(base, path, undefined), mutation: "missing field", name: dotted(path) }))
    )
  }
  if (objects.length > 0) {
    options.push(
      fc.tuple(fc.constantFrom(...objects), unknownKey, fc.constantFrom(...OTHER_VALUES))
        .filter(([node, key]) => !(key in (node.value as object)))
        .map(([node, key, other]) => ({ value: setAt(base, [...node.path, key], other), mutation: "unknown field", name: dotted([...node.path, key]) }))
    )
  }
  if (leaves.length > 0) {
    options.push(
      fc.constantFrom(...leaves).chain((node) =>
        (typeof node.value === "number" ? fc.constantFrom<Json>(...NUMBERS) : fc.oneof(fc.constant<Json>(""), hugeString))
          .map((other) => ({ value: setAt(base, node.path, other), mutation: "out of range", name: dotted(node.path) }))
      )
    )
    options.push(
      fc.tuple(fc.constantFrom(...leaves), hugeString)
        .map(([node, text]) => ({ value: setAt(base, node.path, text), mutation: "huge string", name: dotted(node.path) }))
    )
  }
  options.push(
    fc.constantFrom<Json>([], 42, "text", null, true, [base])
      .map((value) => ({ value, mutation: "not an object", name: "", bodyLevel: true }))
  )
  return fc.oneof(...options)
}

const pick = <A>(pool: ReadonlyArray<A>) => fc.nat({ max: pool.length - 1 }).map((index) => pool[index]!)

/** Unpaired surrogates as U+FFFD, as URLSearchParams does: a URL cannot carry them. */
const wellFormed = (value: string) => value.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, "\ufffd")

/** A path segment as sent: percent-encoded, well-formed. */
const segment = (value: string) => encodeURIComponent(wellFormed(value))

const urlOf = (target: RestTarget, params: Readonly<Record<string, string>>, query: WireQuery) => {
  const path = target.path.replace(/:([A-Za-z]+)/g, (_, name: string) => segment(params[name] ?? ""))
  const search = new URLSearchParams()
  for (const [key, value] of Object.entries(query)) {
    for (const item of typeof value === "string" ? [value] : value) search.append(key, item)
  }
  const text = search.toString()
  return text.length === 0 ? path : `${path}?${text}`
}

/** The query as the server sees it: URLSearchParams turns unpaired surrogates into U+FFFD, one value is a string. */
const asReceived = (query: WireQuery): WireQuery => {
  const received = new Map<string, string | ReadonlyArray<string>>()
  for (const [key, value] of new URLSearchParams(urlOf({ path: "" } as RestTarget, {}, query).slice(1))) {
    const previous = received.get(key)
    received.set(key, previous === undefined ? value : [...(typeof previous === "string" ? [previous] : previous), value])
  }
  return Object.fromEntries(received)
}

/** A record sent back as read names the path's record: a body `id` other than the path's is a 400 (InputChecks.ts); null is no id. */
const samePathAndBodyId = (params: Readonly<Record<string, string>>, body: unknown) =>
  params.id === undefined || typeof body !== "object" || body === null || !("id" in body) || body.id === null || body.id === params.id

const wellFormedParams = (params: Readonly<Record<string, string>>) =>
  Object.fromEntries(Object.entries(params).map(([key, value]) => [key, wellFormed(value)]))

/** NUL, or a surrogate without its pair: the API refuses strings storage cannot hold (ForwardHandlers). */
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/
export const storable = (value: unknown): boolean =>
  typeof value === "string"
    ? !UNSTORABLE.test(value)
    : Array.isArray(value)
    ? value.every(storable)
    : value !== null && typeof value === "object"
    ? Object.entries(value).every(([key, item]) => storable(key) && storable(item))
    : true

/** Every dotted path of a JSON value: the names a 400 about it may give. */
const pathsOf = (value: unknown): Array<string> =>
  value !== null && typeof value === "object" ? nodes(value as Json).map((node) => dotted(node.path)).filter((name) => name.length > 0) : []

const restCase = (target: RestTarget): fc.Arbitrary<RestCase> => {
  const base = fc.record({
    params: target.params === undefined ? fc.constant({}) : pick(target.params.pool),
    query: target.query === undefined ? fc.constant({}) : pick(target.query.pool),
    payload: target.payload === undefined ? fc.constant(undefined) : pick(target.payload.pool)
  })
  type Draft = {
    params: Readonly<Record<string, string>>
    query: WireQuery
    payload: Json | undefined
    raw?: string
    mutation: string
    name: string
    bodyLevel?: boolean
  }
  const mutations = (draft: Draft): fc.Arbitrary<Draft> => {
    const options: Array<fc.Arbitrary<Draft>> = [fc.constant({ ...draft, mutation: "valid", name: "" })]
    const params = target.params
    if (params !== undefined && params.keys.length > 0) {
      // Not "": an empty segment is another URL (the collection's), not an empty id.
      options.push(
        fc.tuple(fc.constantFrom(...params.keys), fc.oneof(shortGarbage.filter((text) => text !== ""), hugeAscii))
          .map(([key, value]) => ({ ...draft, params: { ...draft.params, [key]: value }, mutation: "bad path parameter", name: key }))
      )
    }
    const query = target.query
    if (query === undefined) {
      // An endpoint that declares no query parameters names the one it is sent.
      options.push(
        fc.tuple(unknownKey, shortGarbage)
          .map(([key, value]) => ({ ...draft, query: { [key]: value }, mutation: "undeclared query parameter", name: key }))
      )
    } else {
      options.push(
        fc.tuple(unknownKey, shortGarbage).filter(([key]) => !query.keys.includes(key))
          .map(([key, value]) => ({ ...draft, query: { ...draft.query, [key]: value }, mutation: "unknown query parameter", name: key }))
      )
      if (query.keys.length > 0) {
        options.push(
          fc.tuple(fc.constantFrom(...query.keys), fc.oneof(shortGarbage, hugeAscii))
            .map(([key, value]) => ({ ...draft, query: { ...draft.query, [key]: value }, mutation: "bad query parameter", name: key }))
        )
        options.push(
          fc.tuple(fc.constantFrom(...query.keys), shortGarbage, shortGarbage)
            .map(([key, a, b]) => ({ ...draft, query: { ...draft.query, [key]: [a, b] }, mutation: "repeated query parameter", name: key }))
        )
      }
    }
    const payload = target.payload
    if (payload !== undefined && draft.payload !== undefined) {
      options.push(
        mutateJson(draft.payload, payload).map((mutated) => ({
          ...draft,
          payload: mutated.value,
          mutation: mutated.mutation,
          name: mutated.name,
          ...(mutated.bodyLevel === true ? { bodyLevel: true } : {})
        }))
      )
      const text = JSON.stringify(draft.payload)
      options.push(
        fc.oneof(
          fc.nat({ max: Math.max(0, text.length - 1) }).map((cut) => text.slice(0, cut)),
          fc.constantFrom(`${text},`, `${text}}`, `{${text}`, text.replace(/"/g, "'"), "{name: 1}", "{\"a\":1,}", "\u0000", "\ufeff{}")
        ).map((raw) => ({ ...draft, payload: undefined, raw, mutation: "malformed JSON", name: "", bodyLevel: true }))
      )
    }
    // An endpoint that declares no body says it takes none (fetch sends no body with GET or HEAD);
    // an empty object or blank text is no body too (many clients send `{}`), so only a body with something in it is refused.
    if (target.payload === undefined && target.method !== "GET" && target.method !== "HEAD") {
      options.push(
        fc.constantFrom("{\"a\":1}", "[]", "x", "{} {}")
          .map((raw) => ({ ...draft, raw, mutation: "undeclared body", name: "", bodyLevel: true }))
      )
    }
    // Valid requests get the same weight as all invalid kinds together.
    return options.length === 1 ? options[0]! : fc.oneof({ arbitrary: options[0]!, weight: options.length - 1 }, ...options.slice(1))
  }
  return base.chain((draft) => mutations({ ...draft, mutation: "valid", name: "" })).map((draft) => {
    const received = asReceived(draft.query)
    const raw = draft.raw ?? (draft.payload === undefined ? undefined : JSON.stringify(draft.payload))
    let parsed: unknown
    let parses = raw !== undefined
    try {
      // The server decodes the body as UTF-8 text, which drops a leading BOM (RFC 8259 lets a parser ignore it).
      parsed = raw === undefined ? undefined : JSON.parse(raw.replace(/^\ufeff/, ""))
    } catch {
      parses = false
    }
    const params = wellFormedParams(draft.params)
    const valid = (target.params === undefined || target.params.isValid(params)) &&
      (target.query === undefined ? Object.keys(received).length === 0 : target.query.isValid(received)) &&
      (target.payload === undefined ? raw === undefined : parses && target.payload.isValid(parsed)) &&
      storable(params) && storable(received) && storable(parsed) && samePathAndBodyId(params, parsed)
    return {
      kind: "rest" as const,
      target,
      mutation: draft.mutation,
      method: target.method,
      url: urlOf(target, draft.params, draft.query),
      body: raw,
      expect: {
        valid,
        names: [
          draft.name,
          ...Object.keys(draft.params),
          ...Object.keys(received),
          ...(target.query?.keys ?? []),
          ...(target.payload?.keys ?? []),
          ...pathsOf(parsed)
        ],
        bodyLevel: draft.bodyLevel === true
      }
    }
  })
}

const mcpCase = (target: McpTarget): fc.Arbitrary<McpCase> =>
  pick(target.args.pool).chain((base) =>
    fc.oneof({ arbitrary: fc.constant<Mutated<Json>>({ value: base, mutation: "valid", name: "" }), weight: 6 }, mutateJson(base, target.args as Part<Json>))
  ).map((mutated) => ({
    kind: "mcp" as const,
    target,
    mutation: mutated.mutation,
    arguments: mutated.value,
    expect: {
      valid: target.args.isValid(mutated.value) && storable(mutated.value),
      names: [mutated.name, ...target.args.keys, ...pathsOf(mutated.value)],
      bodyLevel: mutated.bodyLevel === true
    }
  }))

/** Cases spread evenly over the targets: the i-th case is for target i mod n. */
export const casesFor = (targets: ReadonlyArray<Target>, runs: number, seed: number): ReadonlyArray<Case> => {
  const perTarget = Math.ceil(runs / targets.length)
  return targets.flatMap((target, index) =>
    fc.sample(target.kind === "rest" ? restCase(target) : mcpCase(target) as fc.Arbitrary<Case>, { seed: seed + index, numRuns: perTarget })
  )
}
