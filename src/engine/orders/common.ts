/** Small helpers the order workflows share: reading fields of stored records, listing all of a filter. */
import { Effect } from "effect"
import type { EngineRequest } from "../../api/EngineCall.ts"
import { RecordRepository, type StoredRecord } from "../RecordRepository.ts"

/** A path parameter as a string ("" when absent). */
export const param = (request: EngineRequest, name: string) => String(request.params?.[name] ?? "")

/** The request body as a record (the gateway has decoded it against the endpoint's schema). */
export const payloadOf = (request: EngineRequest): StoredRecord =>
  typeof request.payload === "object" && request.payload !== null ? (request.payload as StoredRecord) : {}

export const text = (record: StoredRecord, key: string): string | undefined => {
  const value = record[key]
  return typeof value === "string" ? value : undefined
}

export const numeric = (record: StoredRecord, key: string): number | undefined => {
  const value = record[key]
  return typeof value === "number" && Number.isFinite(value) ? value : undefined
}

export const objectOf = (value: unknown): StoredRecord | undefined =>
  typeof value === "object" && value !== null && !Array.isArray(value) ? (value as StoredRecord) : undefined

export const arrayOf = (value: unknown): ReadonlyArray<unknown> => (Array.isArray(value) ? value : [])

/** Money rounded to cents. */
export const cents = (amount: number) => Math.round(amount * 100) / 100

const PAGE = 1000

/** Every record of `resource` the app sees whose fields equal the given values (paged through). */
export const listAll = (resource: string, appId: string, equals: Readonly<Record<string, string>> = {}) =>
  Effect.gen(function*() {
    const records = yield* RecordRepository
    const filter = Object.entries(equals).map(([field, value]) => ({ field, values: [value] }))
    const all: Array<StoredRecord> = []
    for (let offset = 0;; offset += PAGE) {
      const page = yield* records.list(resource, appId, { equals: filter, dates: [], limit: PAGE, offset })
      all.push(...page)
      if (page.length < PAGE) return all
    }
  })

/** The last path segment of a URL, without query or fragment. */
export const lastSegment = (url: string): string | undefined => {
  const path = url.split(/[?#]/)[0] ?? ""
  const segment = path.split("/").pop()
  if (segment === undefined || segment === "") return undefined
  try {
    return decodeURIComponent(segment)
  } catch {
    return segment
  }
}

/** The file name of a model endpoint: explicit, else the url's last path segment. */
export const fileNameOf = (endpoint: StoredRecord | undefined): string | null => {
  if (endpoint === undefined) return null
  return text(endpoint, "fileName") ?? lastSegment(text(endpoint, "url") ?? "") ?? null
}
