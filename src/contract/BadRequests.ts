/**
 * A request that fails its schema, as the 400 that names the first field or
 * parameter at fault in `message` and every one in `errors`: the same words
 * for a REST call, an admin call and an MCP tool's arguments.
 */
import { SchemaIssue } from "effect"
import type { HttpApiError } from "effect/http-api"
import { BadRequest, type FieldProblem } from "../domain/Errors.ts"

const formatIssues = SchemaIssue.makeFormatterStandardSchemaV1()

type Kind = "missing" | "unknown" | "invalid"

/** One leaf of a schema issue: what is wrong, and where. */
interface Problem {
  readonly kind: Kind
  readonly path: ReadonlyArray<string>
  readonly message: string
}

const segment = (key: PropertyKey | { readonly key: PropertyKey }) => typeof key === "object" ? String(key.key) : String(key)

/**
 * Every problem of an issue, in the order the schema found them: a required
 * key absent, a key not in the schema, or a bad value (a check, a type, a
 * union no member of which matched), each at its path.
 */
const problemsOf = (issue: SchemaIssue.Issue, path: ReadonlyArray<string> = []): ReadonlyArray<Problem> => {
  switch (issue._tag) {
    case "Pointer":
      return problemsOf(issue.issue, [...path, ...issue.path.map(segment)])
    case "Encoding":
      return problemsOf(issue.issue, path)
    case "AnyOf":
      // A union that one member explains (the HttpApi's payload, one media type): that member's problems.
      return issue.issues.length === 1 ? problemsOf(issue.issues[0]!, path) : formatted(issue, path)
    case "Composite":
      return issue.issues.flatMap((inner) => problemsOf(inner, path))
    case "Filter":
      // A rule across fields that finds a field missing (a part's material with a model file) says so as a required field does.
      return onlyMissingKeys(issue.issue) ? problemsOf(issue.issue, path) : formatted(issue, path)
    case "MissingKey":
      return [{ kind: "missing", path, message: "Missing required value" }]
    case "UnexpectedKey":
      return [{ kind: "unknown", path, message: "Unknown: not accepted here" }]
    default:
      return formatted(issue, path)
  }
}

/** Whether every leaf of an issue is a required key absent. */
const onlyMissingKeys = (issue: SchemaIssue.Issue): boolean => {
  switch (issue._tag) {
    case "MissingKey":
      return true
    case "Pointer":
      return onlyMissingKeys(issue.issue)
    case "Composite":
      return issue.issues.every(onlyMissingKeys)
    default:
      return false
  }
}

/** A bad value (a check, a type, a union no member of which matched) as the formatter words it, at its path. */
const formatted = (issue: SchemaIssue.Issue, path: ReadonlyArray<string>): ReadonlyArray<Problem> =>
  formatIssues(issue).issues.map((leaf) => ({
    kind: "invalid",
    path: [...path, ...(leaf.path ?? []).map(segment)],
    message: leaf.message
  }))

const LOCATION = {
  Payload: "field",
  Body: "field",
  Query: "query parameter",
  Params: "path parameter",
  Headers: "header",
  ResponseHeaders: "response header"
} as const

type SchemaErrorKind = HttpApiError.HttpApiSchemaError["kind"]

const isBody = (kind: SchemaErrorKind) => kind === "Payload" || kind === "Body"

/**
 * A body field is named by its path (`lines.0.quantity`); a parameter by its name, even when
 * the fault is in one of its repeated values (`?state=done&state=nope` names "state", not "state.1").
 */
const nameOf = (kind: SchemaErrorKind, path: ReadonlyArray<string>) => isBody(kind) ? path.join(".") : path[0]!

/** The sentence naming one problem, as `message` says the first one. */
const sentence = (kind: SchemaErrorKind, problem: Problem) => {
  const where = LOCATION[kind]
  const name = nameOf(kind, problem.path)
  switch (problem.kind) {
    case "missing":
      return `Missing required ${where} "${name}"`
    case "unknown":
      return `Unknown ${where} "${name}"`
    case "invalid":
      return `Invalid value for ${where} "${name}": ${problem.message}`
  }
}

const TYPES: Record<Kind, string> = { missing: "MissingField", unknown: "UnknownField", invalid: "ValidationError" }

/** The `errors` of a 400: each field or parameter at fault once per distinct sentence. */
const listed = (found: ReadonlyArray<{ readonly kind: SchemaErrorKind; readonly problem: Problem }>): ReadonlyArray<FieldProblem> => {
  const errors = new Map<string, FieldProblem>()
  for (const { kind, problem } of found) {
    if (problem.path.length === 0) continue
    const message = sentence(kind, problem)
    errors.set(message, { path: nameOf(kind, problem.path), message })
  }
  return [...errors.values()]
}

/** Problems of several parts of one request (an MCP tool's arguments span path, query and body), as one 400. */
export const badRequestOf = (parts: ReadonlyArray<{ readonly kind: SchemaErrorKind; readonly issue: SchemaIssue.Issue }>): BadRequest => {
  const found = parts.flatMap(({ issue, kind }) => problemsOf(issue).map((problem) => ({ kind, problem })))
  const first = found[0]
  if (first === undefined || first.problem.path.length === 0) {
    const kind = first?.kind ?? "Payload"
    const message = first?.problem.message ?? "unreadable"
    return BadRequest.of(
      isBody(kind) ? `The request body is not a valid JSON object: ${message}` : `Invalid ${LOCATION[kind]}: ${message}`
    )
  }
  return BadRequest.of(sentence(first.kind, first.problem), TYPES[first.problem.kind], listed(found))
}

/** A request that failed its schema, as a 400 naming the first field at fault and listing every one. */
export const schemaErrorToBadRequest = (error: HttpApiError.HttpApiSchemaError): BadRequest => badRequestOf([{ kind: error.kind, issue: error.cause.issue }])
