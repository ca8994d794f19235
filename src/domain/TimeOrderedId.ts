/**
 * Time-ordered UUIDs (version 7, RFC 9562): the first 48 bits are the Unix
 * time in milliseconds, the rest random (74 bits), so ids made later sort
 * later, as text too.
 *
 * Used for the ids a table is keyed by (the meter's request ids, the
 * engine's record ids): a new row's key then lands at the right-hand end of
 * the primary key's index instead of on a random page of it, which keeps the
 * index compact and its recent pages in memory. They still reveal nothing
 * but the time of creation, which every row records anyway.
 */
import { randomUUID } from "node:crypto"

/** A version 7 UUID, in the usual lower-case 8-4-4-4-12 form. */
export const timeOrderedUuid = (): string => {
  // The random bits, version and variant of a v4 UUID from Node's pooled entropy; then the time over
  // its first 48 bits, and the version nibble set to 7.
  const random = randomUUID()
  const time = Date.now().toString(16).padStart(12, "0")
  return `${time.slice(0, 8)}-${time.slice(8, 12)}-7${random.slice(15)}`
}
