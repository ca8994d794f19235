/**
 * Input the schemas accept but the service still refuses, each as a 400
 * naming the field: a string storage cannot hold (a NUL character, an
 * unpaired UTF-16 surrogate: PostgreSQL's text and jsonb refuse both), and a
 * whole-record PUT whose body is another record than its path's.
 */
import type { DecodedInput } from "../../contract/EngineCall.ts"
import { BadRequest } from "../../domain/Errors.ts"

/** NUL, or a surrogate without its pair. */
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/

/** The path of the first string (value or key) in `value` that storage cannot hold. */
const unstorablePath = (value: unknown, path: ReadonlyArray<string | number> = []): ReadonlyArray<string | number> | undefined => {
  if (typeof value === "string") return UNSTORABLE.test(value) ? path : undefined
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) {
      const found = unstorablePath(item, [...path, index])
      if (found !== undefined) return found
    }
    return undefined
  }
  if (value !== null && typeof value === "object") {
    for (const [key, item] of Object.entries(value)) {
      if (UNSTORABLE.test(key)) return [...path, key]
      const found = unstorablePath(item, [...path, key])
      if (found !== undefined) return found
    }
  }
  return undefined
}

const PARTS = [["params", "path parameter"], ["query", "query parameter"], ["payload", "field"]] as const

/**
 * The 400 for input holding a string PostgreSQL cannot store (NUL, an unpaired
 * surrogate), naming the field or parameter; undefined when there is none.
 * A parameter is named by its key, a body field by its path (`lines.0.description`).
 */
export const unstorableInput = (request: DecodedInput): BadRequest | undefined => {
  for (const [part, where] of PARTS) {
    const path = unstorablePath(request[part])
    if (path === undefined) continue
    const name = part === "payload" ? path.join(".") : String(path[0] ?? "")
    const what = "contains a NUL character or an unpaired UTF-16 surrogate, which cannot be stored"
    if (name.length === 0) return BadRequest.of(`The request body ${what}`)
    const message = `Invalid value for ${where} "${name}": ${what}`
    return BadRequest.of(message, "ValidationError", [{ path: name, message }])
  }
  return undefined
}

/**
 * The 400 for a whole-record PUT whose body names another record than its
 * path (a record read from one id and sent to another); undefined otherwise.
 */
export const mismatchedId = (request: DecodedInput): BadRequest | undefined => {
  const pathId = (request.params as { readonly id?: unknown } | undefined)?.id
  const bodyId = (request.payload as { readonly id?: unknown } | undefined)?.id
  if (pathId === undefined || bodyId === undefined || bodyId === pathId) return undefined
  const message = `Invalid value for field "id": the body is record ${String(bodyId)}, the path ${String(pathId)}`
  return BadRequest.of(message, "ValidationError", [{ path: "id", message }])
}
