/**
 * The little of ZIP a 3MF needs: the central directory, and the stored or
 * deflated entries it lists (no ZIP64, no encryption).
 */
import { inflateRawSync } from "node:zlib"
import { ModelError } from "./mesh.ts"

const EOCD = 0x06054b50
const CENTRAL = 0x02014b50
const LOCAL = 0x04034b50

export interface ZipEntry {
  readonly name: string
  readonly method: number
  readonly compressedSize: number
  readonly size: number
  readonly localOffset: number
}

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

/** The content of an entry; `limit` bounds what it may inflate to. */
export const entryBytes = (bytes: Uint8Array, entry: ZipEntry, limit: number): Uint8Array => {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length)
  const at = entry.localOffset
  if (at + 30 > bytes.length || view.getUint32(at, true) !== LOCAL) throw bad(`the entry ${entry.name} has no local header`)
  const start = at + 30 + view.getUint16(at + 26, true) + view.getUint16(at + 28, true)
  const end = start + entry.compressedSize
  if (end > bytes.length) throw bad(`the entry ${entry.name} runs past the end of the file`)
  if (entry.size > limit) throw new ModelError({ reason: `the 3MF entry ${entry.name} unpacks to ${entry.size} bytes, over the limit of ${limit}` })
  const data = bytes.subarray(start, end)
  if (entry.method === 0) return data
  if (entry.method !== 8) throw new ModelError({ reason: `the 3MF entry ${entry.name} uses compression method ${entry.method}; only stored and deflate are supported` })
  try {
    return inflateRawSync(data, { maxOutputLength: Math.max(limit, 1) })
  } catch (error) {
    throw bad(`the entry ${entry.name} does not inflate (${error instanceof Error ? error.message : String(error)})`)
  }
}
