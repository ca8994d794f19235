/**
 * The JSON Schemas of the tools as `tools/list` carries them: the same
 * fields, in fewer bytes. Every tool's schemas are self-contained (MCP
 * clients must not follow a `$ref` out of them), so a record answered by
 * three tools is described three times; an agent reads all nine tools at
 * once, so what is said once is not said again:
 *
 * - an optional value written `anyOf [X, {type: null}]` is X with `type:
 *   [X's type, "null"]`, where every keyword of X applies to its own type
 *   only (no const or composition, which would refuse the null), and an
 *   enum takes `null` among its values; a field's one check (`allOf [X]`) is
 *   X's keywords on the field;
 * - an output schema states the record's structure (every field, its type,
 *   format, enum, whether it is required), not what the input schemas and
 *   descriptions of the same list say of its values (descriptions, examples,
 *   lengths, patterns, bounds, the sizes of lists and maps): a client still
 *   checks that `structuredContent` has every field, of its type, and the
 *   agent reads what a field means in the input schemas and the tool
 *   descriptions;
 * - what repeats within one schema is said once in its own `$defs` (tools.ts:
 *   a named schema an answer holds more than once, a list's date filters),
 *   and a read-only field of a record as read is `readOnly: true`.
 */

type Json = Readonly<Record<string, unknown>>

const isJson = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value)

/** `f` applied to every schema object of `schema`, innermost first. */
const everyObject = (schema: unknown, f: (node: Json) => Json): unknown => {
  if (Array.isArray(schema)) return schema.map((item) => everyObject(item, f))
  if (!isJson(schema)) return schema
  return f(Object.fromEntries(Object.entries(schema).map(([key, value]) => [key, everyObject(value, f)])))
}

/** Keywords of a schema that constrain more than its own type: they would refuse a `null` beside it. */
const BEYOND_TYPE = ["enum", "const", "anyOf", "allOf", "oneOf", "not", "$ref", "if"]

const isNullType = (member: unknown) => isJson(member) && member.type === "null" && Object.keys(member).length === 1

/** Alternatives of formats only (a date or a date-time): a format says nothing of a null, so a null passes them. */
const formatsOnly = (value: unknown) => Array.isArray(value) && value.every((member) => isJson(member) && Object.keys(member).every((key) => key === "format"))

/** Whether `value`'s keywords apply to its own type only, so that a null beside it passes them. */
const ofItsTypeOnly = (value: Json) => BEYOND_TYPE.every((keyword) => !(keyword in value) || (keyword === "anyOf" && formatsOnly(value.anyOf)))

/** Whether `value` is a set of values of its type (an `enum`) and nothing beyond its type else: a null joins the set. */
const enumOnly = ({ enum: values, ...rest }: Json) => Array.isArray(values) && ofItsTypeOnly(rest)

/**
 * `anyOf [X, {type: null}]` (a null named twice counting once) as X with
 * `type: [X's type, "null"]`, where that says the same: X's keywords apply
 * to its own type only, or X is an `enum`, which takes `null` as one more
 * of its values.
 */
const nullableType = (node: Json): Json => {
  const all = node.anyOf
  if (!Array.isArray(all)) return node
  const members = [...all.filter((member) => !isNullType(member)), ...(all.some(isNullType) ? [{ type: "null" }] : [])]
  if (members.length !== 2) return node
  const value = isNullType(members[1]) ? members[0] : undefined
  if (!isJson(value) || typeof value.type !== "string") return node
  const { anyOf: _, ...outer } = node
  if (ofItsTypeOnly(value)) return { ...value, ...outer, type: [value.type, "null"] }
  if (enumOnly(value)) return { ...value, ...outer, type: [value.type, "null"], enum: [...(value.enum as Array<unknown>), null] }
  return node
}

/** Keywords that describe and do not constrain: where a field's check has its own, the check's (annotated later) win. */
const ANNOTATIONS = new Set(["title", "description", "examples"])

/** `allOf [X]` (the one check of a field) as X's keywords on the field itself, where none constrains the field already. */
const singleAllOf = (node: Json): Json => {
  const members = node.allOf
  if (!Array.isArray(members) || members.length !== 1 || !isJson(members[0])) return node
  const only = members[0]
  if (Object.keys(only).some((key) => key in node && key !== "allOf" && !ANNOTATIONS.has(key))) return node
  const { allOf: _, ...outer } = node
  return { ...outer, ...only }
}

/** A schema with every optional value of a simple type written as a type list, and every lone check merged into its field. */
export const compactNullables = (schema: Json): Json => everyObject(schema, (node) => nullableType(singleAllOf(node))) as Json

/**
 * An input schema as `tools/list` carries it: compactNullables applied; the
 * examples of its arguments kept, not those of their parts (an argument's
 * example shows its parts); the items of a described list not described again.
 */
export const inputStructure = (schema: Json): Json => {
  const trim = (value: unknown, depth: number): unknown => {
    if (Array.isArray(value)) return value.map((item) => trim(item, depth))
    if (!isJson(value)) return value
    const node = Object.fromEntries(
      Object.entries(value).map(([key, inner]) => {
        if (key === "properties" && isJson(inner)) {
          return [key, Object.fromEntries(Object.entries(inner).map(([name, property]) => [name, trim(property, depth + 1)]))]
        }
        return [key, trim(inner, depth)]
      })
    ) as Json
    const described = typeof node.description === "string" && isJson(node.items) && typeof node.items.description === "string"
    const { description: _itemText, ...items } = described ? node.items as Json : {}
    const { examples: _examples, ...withoutExamples } = node
    const kept = depth > 1 && "examples" in node ? withoutExamples : node
    return described ? { ...kept, items } : kept
  }
  return compactNullables(trim(schema, 0) as Json)
}

/** What an output schema leaves to the input schemas and descriptions of the same list: annotations, and the bounds of values and sizes. */
const SAID_ELSEWHERE = new Set([
  "title",
  "description",
  "examples",
  "minLength",
  "maxLength",
  "pattern",
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "multipleOf",
  "minItems",
  "maxItems",
  "uniqueItems",
  "minProperties",
  "maxProperties",
  "propertyNames"
])

const structureOf = (node: Json): Json => {
  const kept = Object.entries(node).filter(([key, value]) =>
    // A property named like a keyword is a field, not a keyword: `properties` keeps every key.
    !SAID_ELSEWHERE.has(key) && !(key === "additionalProperties" && value === true)
  )
  return Object.fromEntries(kept)
}

/**
 * An output schema as `tools/list` carries it: the structure of the answer
 * (compactNullables applied), without annotations and input constraints.
 */
export const outputStructure = (schema: Json): Json => {
  const strip = (value: unknown, inProperties: boolean): unknown => {
    if (Array.isArray(value)) return value.map((item) => strip(item, false))
    if (!isJson(value)) return value
    const entries = Object.entries(value).map(([key, inner]) => [key, strip(inner, !inProperties && (key === "properties" || key === "$defs"))])
    const node = Object.fromEntries(entries) as Json
    return inProperties ? node : structureOf(node)
  }
  return compactNullables(strip(schema, false) as Json)
}
