/** Command-line values of the benchmarks: a bad one prints the usage and exits with 2. */
import { parseArgs, type ParseArgsOptionsConfig } from "node:util"

export const usageError = (message: string, usage: string): never => {
  console.error(`${message}\n${usage}`)
  process.exit(2)
}

export const positiveNumber = (name: string, text: string, integer: boolean, usage: string): number => {
  const value = Number(text)
  if (!Number.isFinite(value) || value <= 0 || (integer && !Number.isInteger(value))) {
    usageError(`--${name} must be a positive ${integer ? "integer" : "number"}, not ${JSON.stringify(text)}`, usage)
  }
  return value
}

/** A comma-separated list whose every item is one of `allowed`, in the order given, without repeats. */
export const listOf = <A extends string>(name: string, text: string, allowed: ReadonlyArray<A>, usage: string): Array<A> => {
  const items = [...new Set(text.split(",").map((item) => item.trim()).filter((item) => item.length > 0))]
  const unknown = items.filter((item) => !(allowed as ReadonlyArray<string>).includes(item))
  if (items.length === 0 || unknown.length > 0) {
    usageError(`--${name}: ${unknown.length > 0 ? `unknown ${unknown.join(", ")}` : "empty"} (one or more of ${allowed.join(",")})`, usage)
  }
  return items as Array<A>
}

const HELP = { help: { type: "boolean", short: "h", default: false } } as const

/**
 * The command line parsed against `options`, strictly and without
 * positionals; `-h`/`--help` prints `usage` and exits 0, anything unknown
 * prints what and the usage, and exits 2.
 */
export const parseFlags = <const O extends ParseArgsOptionsConfig>(options: O, usage: string) => {
  const parse = () =>
    parseArgs<{ options: O & typeof HELP; strict: true; allowPositionals: false }>({
      options: { ...options, ...HELP },
      strict: true,
      allowPositionals: false
    })
  let parsed: ReturnType<typeof parse>
  try {
    parsed = parse()
  } catch (error) {
    return usageError(error instanceof Error ? error.message : String(error), usage)
  }
  const { values } = parsed
  if ((values as { readonly help?: boolean }).help === true) {
    console.log(usage)
    process.exit(0)
  }
  return values
}
