/**
 * The ZIP a 3MF needs (APPNOTE.TXT, as the 3MF core specification 1.1
 * requires of a consumer): the central directory, plain or ZIP64 (the
 * ZIP64 end-of-central-directory record and locator, and ZIP64 extended
 * information in the central headers), the stored or deflated entries it
 * lists, written in streaming mode (data descriptors) or not. No
 * encryption, no other compression method, no archive split over disks.
 *
 * Sizes and offsets are read from the central directory, never from the
 * local headers (a streamed entry's are zero; a local header may carry a
 * ZIP64 extra field or the 3MF placeholder block 0x9999, whatever its
 * entry's size): a local header only says where its entry's data starts.
 *
 * An entry's content is streamed, never inflated whole: the compressed
 * bytes go to fflate's streaming inflater in small slices, each slice's
 * output is charged to an UnpackBudget (shared by every entry the reader
 * opens), checked against the entry's CRC-32 as it passes (node:zlib's
 * crc32, carried from chunk to chunk), and handed on before the next slice
 * is inflated. The sizes the archive declares are not trusted: the budget
 * counts the bytes produced, and the inflation stops as soon as they pass
 * it, so the memory an entry costs does not follow what it would inflate
 * to. An entry whose bytes do not match its CRC-32 is refused, naming it,
 * once its last byte has passed.
 */
import { Inflate } from "fflate"
import { crc32 } from "node:zlib"
import { type AnalysisLimits, unpacksTooLarge } from "./limits.ts"
import { ModelError } from "./mesh.ts"

const EOCD = 0x06054b50
const ZIP64_EOCD = 0x06064b50
const ZIP64_LOCATOR = 0x07064b50
const CENTRAL = 0x02014b50
const LOCAL = 0x04034b50
/** The header id of the ZIP64 extended information extra field. */
const ZIP64_EXTRA = 0x0001

const SATURATED_16 = 0xffff
const SATURATED_32 = 0xffffffff

/**
 * The most entries an archive may list: what a ZIP without ZIP64 can hold.
 * ZIP64 lifts the format's own limit, not this one: a 3MF has a handful.
 */
export const MAX_ZIP_ENTRIES = 65_535

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
  /** The CRC-32 the central directory declares for the content. */
  readonly crc: number
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

/** A 64-bit field as a number; beyond 2^53 (no file is that large) it cannot be an offset or a size of this file. */
const uint64 = (view: DataView, at: number, what: string): number => {
  const value = view.getBigUint64(at, true)
  if (value > BigInt(Number.MAX_SAFE_INTEGER)) throw bad(`the ZIP64 ${what} (${value}) is past any file`)
  return Number(value)
}

interface Directory {
  readonly count: number
  readonly offset: number
  readonly size: number
  /** Where the records that end the archive start: the central directory must end before. */
  readonly end: number
}

/**
 * The central directory's place and entry count: from the ZIP64 record when
 * a locator precedes the end record (its values are the true ones, whether
 * or not the end record's fields are saturated), else from the end record.
 */
const directoryOf = (view: DataView, eocd: number): Directory => {
  const count = view.getUint16(eocd + 10, true)
  const size = view.getUint32(eocd + 12, true)
  const offset = view.getUint32(eocd + 16, true)
  const deferred = count === SATURATED_16 || size === SATURATED_32 || offset === SATURATED_32
  const locator = eocd - 20
  if (locator >= 0 && view.getUint32(locator, true) === ZIP64_LOCATOR) {
    if (view.getUint32(locator + 16, true) > 1) throw new ModelError({ reason: "the 3MF archive is split over several disks, which is not supported" })
    const record = uint64(view, locator + 8, "end of central directory offset")
    if (record + 56 <= locator && view.getUint32(record, true) === ZIP64_EOCD) {
      return {
        count: uint64(view, record + 32, "entry count"),
        size: uint64(view, record + 40, "central directory size"),
        offset: uint64(view, record + 48, "central directory offset"),
        end: record
      }
    }
    // Bytes that only look like a locator (the end of a comment or a name) do not spoil an archive whose end record is whole.
    if (deferred) throw bad("the ZIP64 end of central directory locator points to no ZIP64 end of central directory record")
  }
  if (deferred) throw bad("the end of central directory defers to a ZIP64 record, and there is no ZIP64 end of central directory locator")
  return { count, size, offset, end: eocd }
}

/** The fields of a central header that its ZIP64 extra field replaces: only the saturated ones, in the order APPNOTE 4.5.3 fixes. */
const widened = (
  view: DataView,
  extraStart: number,
  extraEnd: number,
  name: string,
  fields: { size: number; compressedSize: number; localOffset: number }
) => {
  const wanted = (["size", "compressedSize", "localOffset"] as const).filter((field) => fields[field] === SATURATED_32)
  if (wanted.length === 0) return fields
  for (let at = extraStart; at + 4 <= extraEnd;) {
    const id = view.getUint16(at, true)
    const length = view.getUint16(at + 2, true)
    if (at + 4 + length > extraEnd) break
    if (id === ZIP64_EXTRA) {
      if (length < 8 * wanted.length) throw bad(`the ZIP64 extra field of the entry ${name} is ${length} bytes, too short for its ${wanted.length} sizes`)
      const out = { ...fields }
      wanted.forEach((field, k) => (out[field] = uint64(view, at + 4 + 8 * k, `${field} of the entry ${name}`)))
      return out
    }
    at += 4 + length
  }
  throw bad(`the entry ${name} has a size or offset of 0xFFFFFFFF and no ZIP64 extra field`)
}

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
  const directory = directoryOf(view, eocd)
  if (directory.count > MAX_ZIP_ENTRIES) {
    throw new ModelError({ type: "ModelTooLarge", reason: `the 3MF archive lists ${directory.count} entries, more than ${MAX_ZIP_ENTRIES}` })
  }
  let offset = directory.offset
  if (offset + directory.size > directory.end) throw bad("the central directory lies outside the file")
  const entries = new Map<string, ZipEntry>()
  const decoder = new TextDecoder()
  for (let n = 0; n < directory.count; n++) {
    if (offset + 46 > directory.end || view.getUint32(offset, true) !== CENTRAL) throw bad(`central directory entry ${n + 1} is invalid`)
    const flags = view.getUint16(offset + 8, true)
    const method = view.getUint16(offset + 10, true)
    const crc = view.getUint32(offset + 16, true)
    const nameLength = view.getUint16(offset + 28, true)
    const extraLength = view.getUint16(offset + 30, true)
    const commentLength = view.getUint16(offset + 32, true)
    const extraStart = offset + 46 + nameLength
    if (extraStart + extraLength + commentLength > directory.end) throw bad(`central directory entry ${n + 1} runs past the directory`)
    const name = decoder.decode(bytes.subarray(offset + 46, extraStart))
    if ((flags & 1) !== 0) throw new ModelError({ reason: `the 3MF entry ${name} is encrypted` })
    const sizes = widened(view, extraStart, extraStart + extraLength, name, {
      size: view.getUint32(offset + 24, true),
      compressedSize: view.getUint32(offset + 20, true),
      localOffset: view.getUint32(offset + 42, true)
    })
    entries.set(name, { name, method, crc, ...sizes })
    offset = extraStart + extraLength + commentLength
  }
  return entries
}

/**
 * Streams the content of an entry to `sink`, in chunks, charging `budget`
 * with every byte produced; refuses (ModelTooLarge) as soon as the total
 * passes the limit. An entry that declares more than is left is refused
 * before it is inflated; one that declares less is not believed. Once the
 * last byte has passed, the content's CRC-32 must be the declared one.
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
  let crc = 0
  // What the sink throws is its own (a parse error of the content), not the inflation's.
  let sinkError: unknown = undefined
  const charge = (chunk: Uint8Array) => {
    budget.used += chunk.length
    if (budget.used > limit) throw unpacksTooLarge(budget.limits, `stopped in the entry ${entry.name}`)
    if (chunk.length === 0) return
    crc = crc32(chunk, crc)
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
  } else if (entry.method === 8) {
    const inflater = new Inflate((chunk) => charge(chunk))
    try {
      if (data.length === 0) inflater.push(data, true)
      for (let i = 0; i < data.length; i += INFLATE_SLICE) inflater.push(data.subarray(i, i + INFLATE_SLICE), i + INFLATE_SLICE >= data.length)
    } catch (error) {
      if (error instanceof ModelError || (sinkError !== undefined && error === sinkError)) throw error
      throw bad(`the entry ${entry.name} does not inflate (${error instanceof Error ? error.message : String(error)})`)
    }
  } else {
    throw new ModelError({ reason: `the 3MF entry ${entry.name} uses compression method ${entry.method}; only stored and deflate are supported` })
  }
  if (crc !== entry.crc) {
    const hex = (value: number) => `0x${value.toString(16).padStart(8, "0")}`
    throw bad(`the entry ${entry.name} does not match its CRC-32 (the archive says ${hex(entry.crc)}, its content is ${hex(crc)})`)
  }
}
