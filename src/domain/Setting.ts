/**
 * One environment variable, defined once: how it is read and checked, and
 * how the operations guide describes it (type, default, range, meaning).
 * The guide's configuration table is generated from these definitions
 * (`npm run docs:settings`), so what the code accepts and what the table
 * says cannot drift apart.
 *
 * A variable set to the empty string counts as unset (`FOO=` in an
 * environment file). A value that is set and invalid stops the start with a
 * problem naming the variable, the value (never a secret's) and what it must
 * be; `readSettings` reads every variable of a group and reports every
 * problem, not only the first.
 */
import { Config, ConfigProvider, Duration, Effect, Option, Redacted, Result, Schema } from "effect"
import { InvalidConfig, type SettingProblem } from "./Errors.ts"

export interface SettingDoc {
  readonly name: string
  /** What the value is: `integer`, `duration`, `boolean`, `URL`, a list... */
  readonly type: string
  /** The default as the guide says it, or `unset`. */
  readonly defaultText: string
  /** What values of the type are accepted (`0–60000`, `≥ 1`); empty when any is. */
  readonly range: string
  /** What it does (Markdown). */
  readonly meaning: string
}

export interface Setting<A> extends SettingDoc {
  /** Its value from the environment: the default when unset, the problem when invalid. */
  readonly read: Effect.Effect<A, SettingProblem>
}

interface Spec<A> {
  readonly type: string
  readonly range?: string
  readonly meaning: string
  /** A secret's value is never shown in a problem. */
  readonly secret?: boolean
  /** The value of the text, or what is wrong with it ("": it is not of the type and range). */
  readonly parse: (text: string) => Result.Result<A, string>
}

const shown = (spec: Spec<unknown>, text: string) => spec.secret === true ? "(secret, not shown)" : JSON.stringify(text)

const expectation = (spec: Pick<Spec<unknown>, "type" | "range">) =>
  `must be ${spec.type}${spec.range === undefined || spec.range === "" ? "" : ` (${spec.range})`}`

/** The variable's value, Option.none() when unset or empty. */
const readValue = Effect.fnUntraced(function*<A>(name: string, spec: Spec<A>) {
  const text = yield* Config.option(Config.String(name)).pipe(Effect.orElseSucceed(Option.none<string>))
  if (Option.isNone(text) || text.value === "") return Option.none()
  const parsedValue = spec.parse(text.value)
  if (Result.isSuccess(parsedValue)) return Option.some(parsedValue.success)
  const why = parsedValue.failure === "" ? expectation(spec) : parsedValue.failure
  return yield* Effect.fail(InvalidConfig.problem(name, `${name}=${shown(spec, text.value)} is invalid: ${why}`))
})

/** A variable with a default. */
export const setting = <A>(name: string, spec: Spec<A> & { readonly default: A; readonly defaultText: string }): Setting<A> => ({
  name,
  type: spec.type,
  defaultText: spec.defaultText,
  range: spec.range ?? "",
  meaning: spec.meaning,
  read: Effect.map(readValue(name, spec), Option.getOrElse(() => spec.default))
})

/** A variable without a default: Option.none() when unset. */
export const optionalSetting = <A>(name: string, spec: Spec<A> & { readonly defaultText?: string }): Setting<Option.Option<A>> => ({
  name,
  type: spec.type,
  defaultText: spec.defaultText ?? "unset",
  range: spec.range ?? "",
  meaning: spec.meaning,
  read: readValue(name, spec)
})

/** Decodes text with one of Effect's own Config readers (Config.Int, Config.Duration...), as it would read the variable. */
const decoderOf = <A>(reader: (name: string) => Config.Config<A>) => {
  const config = reader("value")
  return (text: string): Result.Result<A, string> =>
    Result.mapError(Effect.runSync(Effect.result(config.parse(ConfigProvider.fromUnknown({ value: text })))), () => "")
}

const decodeInt = decoderOf(Config.Int)
const decodeDuration = decoderOf(Config.Duration)
const decodeBoolean = decoderOf(Config.Boolean)
const decodeNumber = decoderOf(Config.Number)

/** An integer from `min` to `max` (inclusive). */
export const integer = (options: { readonly min: number; readonly max?: number; readonly unit?: string }) => {
  const type = options.unit === undefined ? "integer" : `integer, ${options.unit}`
  const range = options.max === undefined ? `≥ ${options.min}` : `${options.min}–${options.max}`
  return {
    type,
    range,
    parse: (text: string) =>
      Result.flatMap(decodeInt(text), (value) =>
        value < options.min || (options.max !== undefined && value > options.max)
          ? Result.fail(`${expectation({ type, range })}, not ${value}`)
          : Result.succeed(value))
  }
}

/** Units of the compact form, as Duration.format writes them, in the words Effect's Config.Duration reads. */
const COMPACT_UNITS: Readonly<Record<string, string>> = { ms: "millis", s: "seconds", m: "minutes", h: "hours", d: "days" }
const COMPACT_PART = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/

/**
 * A duration in the compact form the guide's table shows (Duration.format's:
 * `3s`, `500ms`, `1m 30s`), each part read by Effect's Config.Duration as
 * `3 seconds`; undefined when `text` is not in that form.
 */
const decodeCompactDuration = (text: string): Result.Result<Duration.Duration, string> | undefined => {
  const parts = text.trim().split(/\s+/).map((part) => COMPACT_PART.exec(part))
  if (parts.length === 0 || parts.some((part) => part === null)) return undefined
  let total = Duration.zero
  for (const part of parts) {
    const decoded = decodeDuration(`${part![1]} ${COMPACT_UNITS[part![2]!]}`)
    if (Result.isFailure(decoded)) return decoded
    total = Duration.sum(total, decoded.success)
  }
  return Result.succeed(total)
}

/**
 * A duration, at least `min`: as Effect reads one (`20 seconds`, `500 millis`,
 * `2 minutes`) or in the compact form of the guide's table (`20s`, `500ms`, `2m`).
 */
export const duration = (options: { readonly min: Duration.Duration }) => ({
  type: "duration",
  range: `≥ ${Duration.format(options.min)}`,
  parse: (text: string) =>
    Result.flatMap(decodeCompactDuration(text) ?? decodeDuration(text), (value) =>
      Duration.isLessThan(value, options.min)
        ? Result.fail(`must be a duration of at least ${Duration.format(options.min)} (\`30s\`, \`30 seconds\`, \`500ms\`)`)
        : Result.succeed(value))
})

export const boolean = { type: "boolean", range: "`true` or `false`", parse: decodeBoolean }

/** A number from `min` to `max` (inclusive), as Effect's Config.Number reads one. */
export const decimal = (options: { readonly min: number; readonly max: number }) => {
  const range = `${options.min}–${options.max}`
  return {
    type: "number",
    range,
    parse: (text: string) =>
      Result.flatMap(
        decodeNumber(text),
        (value) => value < options.min || value > options.max ? Result.fail(`must be a number from ${range}, not ${value}`) : Result.succeed(value)
      )
  }
}

/** One of `values`, exactly. */
export const oneOf = <const V extends string>(values: ReadonlyArray<V>) => ({
  type: "text",
  range: values.map((value) => `\`${value}\``).join(", "),
  parse: (text: string): Result.Result<V, string> => values.includes(text as V) ? Result.succeed(text as V) : Result.fail(`must be one of ${values.join(", ")}`)
})

/**
 * A list of `key=value` pairs, comma separated, each value (and with
 * `decodeKeys`, each key) percent-encoded: the form of the OpenTelemetry
 * variables OTEL_EXPORTER_OTLP_HEADERS and OTEL_RESOURCE_ATTRIBUTES, read by
 * Effect's Config.Record as its OTLP exporters read them.
 */
export const keyValueList = (options: { readonly decodeKeys: boolean }) => {
  const decode = decoderOf((name) =>
    Config.Record(options.decodeKeys ? Schema.StringFromUriComponent : Schema.String, Schema.StringFromUriComponent, name, {
      trim: true,
      keepEmptyValues: true
    })
  )
  return {
    type: "list of key=value",
    range: "comma separated `key=value`, values percent-encoded",
    parse: (text: string): Result.Result<Readonly<Record<string, string>>, string> =>
      Result.mapError(decode(text), () => "must be comma separated key=value pairs whose values are percent-encoded (`a=1,b=x%20y`)")
  }
}

/** Any text. */
export const text = { type: "text", parse: (value: string) => Result.succeed(value) }

/** A secret: never shown, kept Redacted; `problem` says what is wrong with a value, if anything. */
export const secret = (problem?: (value: string) => string | undefined) => ({
  type: "secret text",
  secret: true,
  parse: (value: string): Result.Result<Redacted.Redacted, string> => {
    const wrong = problem?.(value)
    return wrong === undefined ? Result.succeed(Redacted.make(value)) : Result.fail(wrong)
  }
})

/** A URL whose scheme is one of `schemes` (`http:`, `redis:`...); a secret one is kept Redacted. */
export const url = (schemes: ReadonlyArray<string>) => {
  const named = schemes.map((scheme) => `${scheme}//`).join(" or ")
  return {
    type: "URL",
    range: schemes.map((scheme) => `\`${scheme}//\``).join(" or "),
    parse: (value: string): Result.Result<string, string> => {
      const parsedUrl = URL.parse(value)
      if (parsedUrl === null) return Result.fail(`is not a URL (${named}...)`)
      return schemes.includes(parsedUrl.protocol) ? Result.succeed(value) : Result.fail(`must be a ${named} URL`)
    }
  }
}

/** A URL that may carry a password: never shown, kept Redacted. */
export const secretUrl = (schemes: ReadonlyArray<string>) => {
  const plain = url(schemes)
  return { ...plain, secret: true, parse: (value: string) => Result.map(plain.parse(value), Redacted.make) }
}

type Values<S extends Record<string, Setting<unknown>>> = { readonly [K in keyof S]: S[K] extends Setting<infer A> ? A : never }

/** Every setting of a group read, or InvalidConfig listing every problem. */
export const readSettings = Effect.fnUntraced(function*<S extends Record<string, Setting<unknown>>>(settings: S) {
  const values: Record<string, unknown> = {}
  const problems: Array<SettingProblem> = []
  for (const [key, each] of Object.entries(settings)) {
    const result = yield* Effect.result(each.read)
    if (Result.isSuccess(result)) values[key] = result.success
    else problems.push(result.failure)
  }
  if (problems.length > 0) return yield* Effect.fail(InvalidConfig.of(problems))
  return values as Values<S>
})
