/**
 * One definition per resource drives its HTTP endpoints (src/contract), its
 * storage in the engine (src/engine) and, where it has one, its MCP tool.
 *
 * A definition names the resource and lists its writable fields as Schemas.
 * From it derive: the record as read (id and timestamps added), the body of a
 * create and of a whole-record replace, and the list query with the spec's
 * conventions (repeatable `ids`, one date or a range per date field, equality
 * filters on chosen fields, paging).
 *
 * A replace accepts the record as read (read-modify-write): the `id` (checked
 * against the path's by the gateway), the timestamps and the computed fields
 * are accepted and dropped on decoding, so the engine only ever sees the
 * writable fields.
 */
import { type JsonSchema, Schema, SchemaAST, SchemaGetter, SchemaTransformation, Struct } from "effect"
import { Int32 } from "./Integers.ts"

export const DATE_FIELDS = ["createdAt", "updatedAt"] as const

/** The annotation of a field whose list filter ignores case (an e-mail address: `?email=Buyer@Acme.example`). */
export const CASE_INSENSITIVE = "mfg/caseInsensitive"
export type DateField = (typeof DATE_FIELDS)[number]

/** The longest ISO 8601 date-time: nanoseconds and an offset. */
export const MAX_DATE_LENGTH = 40

/** A date (`2026-11-22`) or an RFC 3339 date-time (`2026-11-22T10:00:00Z`, seconds and offset included): JSON Schema's `date` and `date-time`. */
const ISO_DATE = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2}))?$/

/**
 * What generated values (the schema fuzzer's) look like: real calendar days,
 * with or without a UTC time. The filter's predicate stays the rule.
 */
export const ISO_DATE_SAMPLES = {
  source: "^20[0-9]{2}-(0[1-9]|1[0-2])-(0[1-9]|1[0-9]|2[0-8])(T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]Z)?$",
  flags: ""
}

/**
 * A date filter's value: an ISO 8601 date (`2026-11-22`, a whole UTC day) or
 * date-time (`2026-11-22T10:00:00Z`), so its JSON Schema is either format.
 * The description is on the string itself, where JSON Schema readers look.
 */
const isoDate = (description: string) =>
  Schema.String.annotate({ description, examples: ["2026-11-22", "2026-11-22T10:00:00Z"] }).check(
    Schema.isMaxLength(MAX_DATE_LENGTH),
    isDateOrDateTime()
  )

/**
 * The check of a date or date-time a client writes: an ISO 8601 date or an
 * RFC 3339 date-time, so its JSON Schema is either format, exactly what is
 * accepted (`annotations` describe the field).
 */
export const isDateOrDateTime = (annotations?: Schema.Annotations.Filter) =>
  Schema.makeFilter((text: string) => ISO_DATE.test(text) && !Number.isNaN(Date.parse(text)) ? true : "expected an ISO 8601 date or date-time", {
    toJsonSchema: () => ({ anyOf: [{ format: "date" }, { format: "date-time" }] }),
    arbitraryConstraint: { patterns: [ISO_DATE_SAMPLES] },
    ...annotations
  })

/** An ISO 8601 date (`2026-11-22`) or date-time (`2026-11-22T10:00:00Z`). */
export const IsoDateParam = isoDate("An ISO 8601 date (2026-11-22) or date-time (2026-11-22T10:00:00Z)")

/** The most values one repeatable filter takes (`?ids=a&ids=b…`). */
export const MAX_FILTER_VALUES = 100
/** The longest value a filter compares with: an id, a name, a reference. */
export const MAX_FILTER_VALUE_LENGTH = 200

/**
 * A repeatable query parameter: `?p=a&p=b` or a single `?p=a`, as an array
 * of at most MAX_FILTER_VALUES values (each at most MAX_FILTER_VALUE_LENGTH
 * long when `value` is any string).
 */
export const repeatable = (value: Schema.Codec<string, string>) =>
  Schema.Union([value, Schema.Array(value).check(Schema.isMaxLength(MAX_FILTER_VALUES))]).pipe(
    Schema.decodeTo(
      // The decoded list keeps the bound, for those that take it decoded (an MCP list tool's arguments).
      Schema.Array(Schema.toType(value)).check(Schema.isMaxLength(MAX_FILTER_VALUES)),
      SchemaTransformation.transform<ReadonlyArray<string>, string | ReadonlyArray<string>>({
        decode: (values) => typeof values === "string" ? [values] : values,
        encode: (values) => values
      })
    )
  )

export const FilterText = Schema.String.check(Schema.isMaxLength(MAX_FILTER_VALUE_LENGTH))
const Repeatable = repeatable(FilterText)

export const DEFAULT_PAGE_SIZE = 100
export const MAX_PAGE_SIZE = 1000

/** The paging parameters: integers (the query string's text decodes to them), documented as such in the OpenAPI document. */
export const PageLimit = Int32.check(Schema.isBetween({ minimum: 1, maximum: MAX_PAGE_SIZE }))
  .annotate({ description: `Page size (default ${DEFAULT_PAGE_SIZE})` })
export const PageOffset = Int32.check(Schema.isGreaterThanOrEqualTo(0))
  .annotate({ description: "Records to skip (default 0)" })

const dateQueryFields = <const F extends string>(field: F) =>
  ({
    [field]: Schema.optional(isoDate(
      `Only the records whose ${field} falls on this date (a whole UTC day, 2026-11-22) or is this date-time (2026-11-22T10:00:00Z)`
    )),
    [`${field}[from]`]: Schema.optional(isoDate(`Earliest ${field}, inclusive: a date (from its 00:00 UTC) or a date-time`)),
    [`${field}[to]`]: Schema.optional(isoDate(`Latest ${field}, inclusive: a date (to the end of that UTC day) or a date-time`))
  }) as { readonly [K in F | `${F}[from]` | `${F}[to]`]: Schema.optional<typeof IsoDateParam> }

/** `createdAt` and `updatedAt`, each as one date or a `[from]`/`[to]` range: for every list query. */
export const DateRangeQuery = { ...dateQueryFields("createdAt"), ...dateQueryFields("updatedAt") }

const READ_ONLY = "Read-only, set by the engine: the record as read may carry it back, and it is ignored."
const VERIFIED = "Set by the engine: omit it or send it as read (else a 422 naming it)"

/**
 * A point in time the engine sets (RFC 3339, UTC), as records carry it and
 * a body may carry it back. The format is the string's own, so that the
 * bound's check states `maxLength` beside `type` where every tool reads it.
 */
export const Timestamp = Schema.String.annotate({ format: "date-time" }).check(Schema.isMaxLength(MAX_DATE_LENGTH))
  .annotate({ examples: ["2026-11-22T10:00:00.000Z"] })

/** A record's id as the engine gives it (and as a body may carry it back). */
export const RecordId = Schema.String.check(Schema.isMaxLength(100))

/** The timestamps every record carries. */
export const TIMESTAMPS = {
  createdAt: Timestamp.annotate({ description: "When the engine created the record (UTC)" }),
  updatedAt: Timestamp.annotate({ description: "When the engine last changed the record (UTC)" })
}

/**
 * The values a filter on `field` takes: the field's own when they are a
 * fixed set (a state: an unknown one is a 400 naming the filter, not an empty
 * list), else any string.
 */
const filterValues = (schema: { readonly ast: SchemaAST.AST } | undefined): Schema.Codec<string, string> => {
  const literals = schema === undefined ? undefined : stringLiterals(SchemaAST.toType(schema.ast))
  return literals === undefined ? FilterText : Schema.Literals(literals)
}

/** The strings a schema is one of (an optional field's `undefined` aside), if it is a fixed set of strings. */
const stringLiterals = (ast: SchemaAST.AST): ReadonlyArray<string> | undefined => {
  if (ast._tag === "Literal") return typeof ast.literal === "string" ? [ast.literal] : undefined
  if (ast._tag !== "Union") return undefined
  const members = ast.types.filter((member) => member._tag !== "Undefined").map(stringLiterals)
  return members.length > 0 && members.every((member) => member !== undefined) ? members.flat() : undefined
}

/** Each field optional, and documented as read-only: what a PUT body may carry back from a read. */
const asReadOnly = <F extends Schema.Struct.Fields>(fields: F) =>
  Object.fromEntries(
    Object.entries(fields).map(([key, schema]) => [key, Schema.optional(Schema.toType(schema).annotate({ description: READ_ONLY }))])
  ) as { readonly [K in keyof F]: Schema.optional<Schema.toType<F[K]>> }

/** `fields`' `keys`, in that order, each optional, and documented as held to the engine's values: what a PUT body may carry back from a read. */
const asVerified = <F extends Schema.Struct.Fields, K extends keyof F & string>(fields: F, keys: ReadonlyArray<K>) =>
  Object.fromEntries(
    keys.flatMap((key) => {
      const schema = fields[key]
      return schema === undefined ? [] : [[key, Schema.optional(Schema.toType(schema).annotate({ description: VERIFIED }))]]
    })
  ) as { readonly [P in K]: Schema.optional<Schema.toType<F[P]>> }

/**
 * A body that accepts a record as read: `writable`'s fields, and each of
 * `readOnly`'s as an optional field that decoding drops, so the decoded value
 * is exactly `writable`'s (its checks included). Unknown fields stay a 400.
 */
export const acceptingTheRecord = <Writable extends Schema.Struct<Schema.Struct.Fields>, ReadOnly extends Schema.Struct.Fields>(
  writable: Writable,
  readOnly: ReadOnly
) => {
  const keys = Object.keys(writable.fields)
  const asRead = Schema.Struct(
    { ...asReadOnly(readOnly), ...writable.fields } as Omit<ReturnType<typeof asReadOnly<ReadOnly>>, keyof Writable["fields"]> & Writable["fields"]
  )
  return asRead.pipe(Schema.decodeTo(writable, {
    decode: SchemaGetter.transform((body) =>
      Object.fromEntries(keys.filter((key) => key in body).map((key) => [key, (body as Record<string, unknown>)[key]])) as Writable["Encoded"]
    ),
    // The writable fields as they are: a record as read without its read-only fields.
    encode: SchemaGetter.passthrough({ strict: false })
  }))
}

export const defineResource = <
  const Name extends string,
  const Fields extends Schema.Struct.Fields,
  const Computed extends Schema.Struct.Fields = Record<never, never>,
  const Filter extends (keyof Fields | keyof Computed) & string = never,
  const Completed extends Schema.Struct.Fields = Record<never, never>,
  const Verified extends keyof Computed & string = never
>(spec: {
  readonly name: Name
  readonly path: `/${string}`
  readonly title: string
  readonly fields: Fields
  /**
   * Writable fields as every record has them, where a body's form is looser
   * because the engine completes what it leaves out (a part's technology and
   * material, from its catalogue configuration; a quote line's total): the
   * body's form among `fields`, the record's here.
   */
  readonly completed?: Completed | undefined
  /**
   * Computed fields a replace may carry back, held to the engine's values
   * instead of ignored (a quote's totals): passed to the engine, which
   * refuses a value other than its own (422 naming the field).
   */
  readonly verified?: ReadonlyArray<Verified> | undefined
  /** Read-only fields the engine sets (a number, geometry, production times): in reads, never in a body. */
  readonly computed?: Computed | undefined
  readonly filters: ReadonlyArray<Filter>
  readonly storage?: StorageOptions | undefined
  /** Rules across fields; an issue with a `path` names its field in the 400. */
  readonly validate?: ((input: Schema.Struct.Type<Fields>) => Schema.FilterOutput) | undefined
  /**
   * What JSON Schema can state of `validate`'s rules (the model source's
   * `oneOf`): part of every JSON Schema derived from the input (OpenAPI, MCP);
   * whatever it cannot state is still checked.
   */
  readonly validateJsonSchema?: JsonSchema.JsonSchema | undefined
}) => {
  const described = {
    title: `${spec.title} input`,
    description: `The writable fields of a ${spec.title}. A PUT replaces the whole record.`
  }
  // Annotated before the check, so that the title stays the body's own (an annotation after a check is the check's).
  const fieldsOnly = Schema.Struct(spec.fields).annotate(described)
  const validateJsonSchema = spec.validateJsonSchema
  const validateFields = spec.validate
  // One check for every struct that holds the fields (the body, and the record as read with its id): it reads only
  // them. It takes any input, as a check of a wider struct must, and hands the fields' check what it reads.
  const validate = validateFields === undefined ? undefined : Schema.makeFilter(
    (input: unknown) => validateFields(input as Schema.Struct.Type<Fields>),
    // Looser than the check (a JSON Schema states only part of it), hence an approximation.
    validateJsonSchema === undefined ? undefined : { toJsonSchema: () => [validateJsonSchema, true] as const }
  )
  const input = validate === undefined ? fieldsOnly : fieldsOnly.check(validate)
  // A completed field keeps its place among the fields (a spread overrides a key where it first stood).
  const record = Schema.Struct({
    id: RecordId,
    ...(spec.fields as Omit<Fields, keyof Completed>),
    ...(spec.completed ?? ({} as Completed)),
    ...(spec.computed ?? ({} as Computed)),
    ...TIMESTAMPS
  }).annotate({ title: spec.title })
  const computed = spec.computed ?? ({} as Computed)
  const verified: ReadonlyArray<Verified> = spec.verified ?? []
  const verifiedFields = asVerified(computed, verified)
  const ignored = Struct.omit(computed, verified)
  const withId = Schema.Struct({
    id: Schema.optional(RecordId.annotate({ description: "The record's id, as read: when present it must be the path's" })),
    ...spec.fields,
    ...verifiedFields
  })
  const replaceInput = acceptingTheRecord(
    validate === undefined ? withId : withId.check(validate),
    { ...ignored, ...TIMESTAMPS }
  ).annotate({
    title: `${spec.title} replacement`,
    description: `A whole ${spec.title}: its writable fields, every required one present. The record as read is accepted: ` +
      (verified.length === 0
        ? "its `id` must be the path's, and the timestamps and the fields the engine sets are ignored."
        : `its \`id\` must be the path's, the timestamps and ${Object.keys(ignored).map((key) => `\`${key}\``).join(", ") || "nothing else"} ` +
          `are ignored, and ${verified.map((key) => `\`${key}\``).join(", ")}, when sent, must be the engine's (a 422 names one that is not).`)
  })
  const fieldSchemas: Readonly<Record<string, { readonly ast: SchemaAST.AST }>> = { ...spec.fields, ...spec.computed }
  const filterFields = Object.fromEntries(
    spec.filters.map((field) => [
      field,
      Schema.optional(
        repeatable(filterValues(fieldSchemas[field])).annotate({
          description: `Only the records whose \`${field}\` is one of these values (repeatable)`
        })
      )
    ])
    // Typed as strings: the values of a fixed set are strings too.
  ) as { readonly [K in Filter]: Schema.optional<typeof Repeatable> }
  const listQuery = Schema.Struct({
    ids: Schema.optional(Repeatable.annotate({ description: "Only these ids (repeatable)" })),
    ...filterFields,
    ...DateRangeQuery,
    limit: Schema.optional(PageLimit),
    offset: Schema.optional(PageOffset)
  })
  /** Fields the engine sets: kept from the previous record when a PUT replaces the writable ones. */
  const computedKeys = Object.keys(spec.computed ?? {})
  const writable: Readonly<Record<string, { readonly ast: SchemaAST.AST }>> = { ...spec.fields, ...spec.completed }
  const nullableKeys = Object.entries(writable).filter(([, schema]) => admitsNull(SchemaAST.toType(schema.ast))).map(([key]) => key)
  const caseInsensitiveFilters = spec.filters.filter((field) => {
    const schema = fieldSchemas[field]
    return schema !== undefined && ignoresCase(SchemaAST.toType(schema.ast))
  })
  return { ...spec, storage: spec.storage ?? {}, computedKeys, nullableKeys, caseInsensitiveFilters, input, replaceInput, record, listQuery } as const
}

/** Whether a field's values are annotated to compare without case (CASE_INSENSITIVE), an optional one's included. */
const ignoresCase = (ast: SchemaAST.AST): boolean => ast.annotations?.[CASE_INSENSITIVE] === true || (ast._tag === "Union" && ast.types.some(ignoresCase))

/** Whether a schema's values include null (a member of its unions, at any depth). */
const admitsNull = (ast: SchemaAST.AST): boolean => ast._tag === "Null" || (ast._tag === "Union" && ast.types.some(admitsNull))

/** How the engine stores a resource beyond its fields. */
export interface StorageOptions {
  /** Fields holding the id of another resource: the engine refuses an id the app cannot see. */
  readonly references?: Readonly<Record<string, string>> | undefined
  /** Gives each new record a `number` (`<prefix>-000042`), one of the identifiers a lookup finds. */
  readonly numberPrefix?: string | undefined
  /** Reference data readable by every app (technologies, currencies, colours): apps cannot change it. */
  readonly global?: boolean | undefined
}

/** What every resource definition offers, whatever its fields. */
export interface Resource {
  /** Identifier: the HttpApi group, the operation prefix, the storage discriminator. */
  readonly name: string
  /** Path root under /v1, as in the spec's resource table. */
  readonly path: `/${string}`
  /** Human name for documentation. */
  readonly title: string
  /** Fields a list can be filtered on by equality (repeatable query parameters). */
  readonly filters: ReadonlyArray<string>
  readonly storage: StorageOptions
  readonly computedKeys: ReadonlyArray<string>
  /**
   * Writable fields whose values include null (a reel's `machineId`): every
   * record as read has them, null when they have no value, whichever write
   * left them out (one representation per field).
   */
  readonly nullableKeys: ReadonlyArray<string>
  /** Filters that match without regard to case (an e-mail address). */
  readonly caseInsensitiveFilters: ReadonlyArray<string>
  /** Writable fields: the body of a create. */
  readonly input: Schema.Struct<Schema.Struct.Fields>
  /** The body of a whole-record replace: the writable fields and an optional `id`, or the record as read. */
  readonly replaceInput: Schema.Codec<{ readonly id?: string | undefined }, unknown>
  readonly record: Schema.Struct<Schema.Struct.Fields>
  readonly listQuery: Schema.Struct<Schema.Struct.Fields>
}

/** What a list query means to the engine, independent of HTTP. */
export interface RecordFilter {
  readonly ids?: ReadonlyArray<string> | undefined
  readonly equals: ReadonlyArray<{ readonly field: string; readonly values: ReadonlyArray<string>; readonly ignoreCase?: boolean | undefined }>
  readonly dates: ReadonlyArray<{ readonly field: DateField; readonly from?: Date | undefined; readonly to?: Date | undefined }>
  readonly limit: number
  readonly offset: number
}

const DAY_MS = 86_400_000
const isDateOnly = (text: string) => text.length === 10

/** The first instant an ISO date or date-time `from` names: the start of a day for a date. */
export const rangeStart = (text: string) => new Date(Date.parse(text))
/** The last instant an ISO date or date-time `to` names: the end of that day (inclusive) for a date, as in every list filter. */
export const rangeEnd = (text: string) => new Date(Date.parse(text) + (isDateOnly(text) ? DAY_MS - 1 : 0))

/** The date conditions of a decoded list query (see DateRangeQuery). */
export const toDateFilters = (query: Readonly<Record<string, unknown>>): RecordFilter["dates"] =>
  DATE_FIELDS.flatMap((field) => {
    const text = (key: string) => query[key] as string | undefined
    const on = text(field)
    const from = text(`${field}[from]`)
    const to = text(`${field}[to]`)
    if (on === undefined && from === undefined && to === undefined) return []
    return [{
      field,
      from: from !== undefined ? rangeStart(from) : on !== undefined ? rangeStart(on) : undefined,
      to: to !== undefined ? rangeEnd(to) : on !== undefined ? rangeEnd(on) : undefined
    }]
  })

/** Turns a decoded list query into the engine's filter; the filters named in `ignoringCase` match without regard to case. */
export const toRecordFilter = (
  filters: ReadonlyArray<string>,
  query: Readonly<Record<string, unknown>>,
  ignoringCase: ReadonlyArray<string> = []
): RecordFilter => {
  const strings = (key: string) => query[key] as ReadonlyArray<string> | undefined
  const equals = filters.flatMap((field) => {
    const values = strings(field)
    return values === undefined ? [] : [ignoringCase.includes(field) ? { field, values, ignoreCase: true } : { field, values }]
  })
  const dates = toDateFilters(query)
  return {
    ids: strings("ids"),
    equals,
    dates,
    limit: (query.limit as number | undefined) ?? DEFAULT_PAGE_SIZE,
    offset: (query.offset as number | undefined) ?? 0
  }
}
