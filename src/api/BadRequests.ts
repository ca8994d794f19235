/**
 * A request that fails its schema, as the 400 that names the first field or
 * parameter at fault: the same words for a REST call, an admin call and an
 * MCP tool's arguments.
 */
import { SchemaIssue } from "effect"
import type { HttpApiError } from "effect/http-api"
import { BadRequest } from "../domain/Errors.ts"

const formatIssues = SchemaIssue.makeFormatterStandardSchemaV1()

/**
 * What is wrong at the first problem: a required key absent, a key not in the
 * schema, or a bad value. Wrappers (pointers, composites, codec steps) are
 * followed down to the first leaf.
 */
const problemKind = (issue: SchemaIssue.Issue): "missing" | "unknown" | "invalid" => {
  if (issue._tag === "MissingKey") return "missing"
  if (issue._tag === "UnexpectedKey") return "unknown"
  if ("issue" in issue) return problemKind(issue.issue)
  if ("issues" in issue && issue.issues.length > 0) return problemKind(issue.issues[0]!)
  return "invalid"
}

const LOCATION = {
  Payload: "field",
  Body: "field",
  Query: "query parameter",
  Params: "path parameter",
  Headers: "header",
  ResponseHeaders: "response header"
} as const

/** A request that failed its schema, as a 400 naming the first field at fault. */
export const schemaErrorToBadRequest = (error: HttpApiError.HttpApiSchemaError): BadRequest => {
  const where = LOCATION[error.kind]
  const [first] = formatIssues(error.cause.issue).issues
  if (first === undefined || first.path === undefined || first.path.length === 0) {
    return BadRequest.of(
      error.kind === "Payload" || error.kind === "Body"
        ? `The request body is not a valid JSON object: ${first?.message ?? "unreadable"}`
        : `Invalid ${where}: ${first?.message ?? "unreadable"}`
    )
  }
  const segments = first.path.map((key) => (typeof key === "object" ? String(key.key) : String(key)))
  // A body field is named by its path (`lines.0.quantity`); a parameter by its name, even when
  // the fault is in one of its repeated values (`?state=done&state=nope` names "state", not "state.1").
  const name = error.kind === "Payload" || error.kind === "Body" ? segments.join(".") : segments[0]!
  switch (problemKind(error.cause.issue)) {
    case "missing":
      return BadRequest.of(`Missing required ${where} "${name}"`, "MissingField")
    case "unknown":
      return BadRequest.of(`Unknown ${where} "${name}"`, "UnknownField")
    case "invalid":
      return BadRequest.of(`Invalid value for ${where} "${name}": ${first.message}`)
  }
}
