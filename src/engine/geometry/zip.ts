/**
 * The little of ZIP a 3MF needs: the central directory, and the stored or
 * deflated entries it lists (no ZIP64, no encryption).
 *
 * An entry's content is streamed, never inflated whole: the compressed
 * bytes go to fflate's streaming inflater in small slices, each slice's
 * output is charged to an UnpackBudget (shared by every entry the reader
 * opens) and handed on before the next slice is inflated. The sizes the
 * archive declares are not trusted: the budget counts the bytes produced,
 * and the inflation stops as soon as they pass it, so the memory an entry
 * costs does not follow what it would inflate to.
 */
import { Inflate } from "fflate"
import { type AnalysisLimits, unpacksTooLarge } from "./limits.ts"
import { ModelError } from "./mesh.ts"

const EOCD = 0x06054b50
const CENTRAL = 0x02014b50
const LOCAL = 0x04034b50

/**
 * Compressed bytes inflated at a time: deflate expands at most 1032 to 1,
 * so one slice produces at most ~16 MiB before the budget is checked again.
 */
const INFLATE_SLICE = 16 * 1024
/** Bytes of a stored entry handed on at a time. */
const STORED_SLICE = 64 * 1024

export interface ZipEntry {
  readonly name: string
  readonly method: number
  readonly compressedSize: number
  /** The size the central directory declares: a claim, not trusted. */
  readonly size: number
  readonly localOffset: number
}

/** What the entries read from one archive have produced, against the limit. */
export interface UnpackBudget {
  readonly limits: AnalysisLimits
  used: number
}

export const unpackBudget = (limits: AnalysisLimits): UnpackBudget => ({ limits, used: 0 })

export const isZip = (bytes: Uint8Array) => bytes.length >= 4 && bytes[0] === 0x50 && bytes[1] === 0x4b && bytes[2] === 0x03 && bytes[3] === 0x04

const bad = (reason: string) => new ModelError({ reason: `the 3MF archive is damaged: ${reason}` })

/** The entries of the archive, by name. */
export const readZip = (bytes: Uint8Array): ReadonlyMap<string, ZipEntry> => {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length)
  // The end-of-central-directory record: the last 22 bytes, plus a comment of up to 65535.
  let eocd = -1
  for (let i = bytes.length - 22; i >= Math.max(0, bytes.length - 22 - 65535); i--) {
    if (view.getUint32(i, true) === EOCD) {
      eocd = i
      break
    }
  }
  if (eocd < 0) throw bad("no end of central directory (truncated?)")
  const count = view.getUint16(eocd + 10, true)
  const size = view.getUint32(eocd + 12, true)
  let offset = view.getUint32(eocd + 16, true)
  if (offset === 0xffffffff || count === 0xffff) throw new ModelError({ reason: "ZIP64 archives are not supported" })
  if (offset + size > eocd) throw bad("the central directory lies outside the file")
  const entries = new Map<string, ZipEntry>()
  const decoder = new TextDecoder()
  for (let n = 0; n < count; n++) {
    if (offset + 46 > bytes.length || view.getUint32(offset, true) !== CENTRAL) throw bad(`central directory entry ${n + 1} is invalid`)
    const flags = view.getUint16(offset + 8, true)
    const method = view.getUint16(offset + 10, true)
    const compressedSize = view.getUint32(offset + 20, true)
    const uncompressed = view.getUint32(offset + 24, true)
    const nameLength = view.getUint16(offset + 28, true)
    const extraLength = view.getUint16(offset + 30, true)
    const commentLength = view.getUint16(offset + 32, true)
    const localOffset = view.getUint32(offset + 42, true)
    const name = decoder.decode(bytes.subarray(offset + 46, offset + 46 + nameLength))
    if ((flags & 1) !== 0) throw new ModelError({ reason: `the 3MF entry ${name} is encrypted` })
    entries.set(name, { name, method, compressedSize, size: uncompressed, localOffset })
    offset += 46 + nameLength + extraLength + commentLength
  }
  return entries
}

/**
 * Streams the content of an entry to `sink`, in chunks, charging `budget`
 * with every byte produced; refuses (ModelTooLarge) as soon as the total
 * passes the limit. An entry that declares more than is left is refused
 * before it is inflated; one that declares less is not believed.
 */
export const streamEntry = (bytes: Uint8Array, entry: ZipEntry, budget: UnpackBudget, sink: (chunk: Uint8Array) => void): void => {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length)
  const at = entry.localOffset
  if (at + 30 > bytes.length || view.getUint32(at, true) !== LOCAL) throw bad(`the entry ${entry.name} has no local header`)
  const start = at + 30 + view.getUint16(at + 26, true) + view.getUint16(at + 28, true)
  const end = start + entry.compressedSize
  if (end > bytes.length) throw bad(`the entry ${entry.name} runs past the end of the file`)
  const limit = budget.limits.maxUnpackedBytes
  if (entry.size > limit - budget.used) throw unpacksTooLarge(budget.limits, `the entry ${entry.name} declares ${entry.size} bytes`)
  // What the sink throws is its own (a parse error of the content), not the inflation's.
  let sinkError: unknown = undefined
  const charge = (chunk: Uint8Array) => {
    budget.used += chunk.length
    if (budget.used > limit) throw unpacksTooLarge(budget.limits, `stopped in the entry ${entry.name}`)
    if (chunk.length === 0) return
    try {
      sink(chunk)
    } catch (error) {
      sinkError = error
      throw error
    }
  }
  const data = bytes.subarray(start, end)
  if (entry.method === 0) {
    for (let i = 0; i < data.length; i += STORED_SLICE) charge(data.subarray(i, i + STORED_SLICE))
    return
  }
  if (entry.method !== 8) {
    throw new ModelError({ reason: `the 3MF entry ${entry.name} uses compression method ${entry.method}; only stored and deflate are supported` })
  }
  const inflater = new Inflate((chunk) => charge(chunk))
  try {
    if (data.length === 0) inflater.push(data, true)
    for (let i = 0; i < data.length; i += INFLATE_SLICE) inflater.push(data.subarray(i, i + INFLATE_SLICE), i + INFLATE_SLICE >= data.length)
  } catch (error) {
    if (error instanceof ModelError || (sinkError !== undefined && error === sinkError)) throw error
    throw bad(`the entry ${entry.name} does not inflate (${error instanceof Error ? error.message : String(error)})`)
  }
}
