/**
 * ZIP archives written for the tests and the benchmark (writers.ts builds
 * 3MF files on it): stored or deflated entries, in the forms the world
 * writes them, so that the reader (zip.ts) meets each:
 *
 * - plain ZIP;
 * - ZIP64 end records only: the ZIP64 end-of-central-directory record and
 *   locator, the classic end record's fields saturated (0xFFFF, 0xFFFFFFFF),
 *   the headers 32-bit;
 * - ZIP64 throughout: that, and every local and central header's sizes and
 *   offset saturated with a ZIP64 extra field, small entries too (as
 *   lib3mf and streaming writers do);
 * - streamed: the sizes and CRC-32 after each entry's data (a data
 *   descriptor), zero in its local header.
 *
 * An entry may lie (a declared size that is not its own), come already
 * deflated (a bomb built without inflating it), or be corrupted after its
 * CRC-32 was taken (`corruptEntry`).
 */
import { crc32, deflateRawSync } from "node:zlib"

export interface ZipEntryInput {
  readonly name: string
  readonly content: string | Uint8Array
  /** Already deflated (raw DEFLATE) content, written as is: `content` is then ignored, and `crc` is the content's CRC-32. */
  readonly deflated?: Uint8Array
  readonly crc?: number
  /** The unpacked size the headers declare, when it should not be the true one (a lie). */
  readonly declaredSize?: number
}

export interface ZipOptions {
  /** Deflated unless stored. */
  readonly stored?: boolean
  /** ZIP64: the end records only, or the extra fields in every header too. */
  readonly zip64?: "end-records" | "extra-fields"
  /** Streaming mode: sizes and CRC-32 in a data descriptor after each entry. */
  readonly dataDescriptor?: boolean
}

const SATURATED_32 = 0xffffffff

const header = (size: number, fill: (view: DataView) => void): Uint8Array => {
  const bytes = new Uint8Array(size)
  fill(new DataView(bytes.buffer))
  return bytes
}

const concat = (parts: ReadonlyArray<Uint8Array>): Uint8Array => {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0))
  let at = 0
  for (const part of parts) {
    out.set(part, at)
    at += part.length
  }
  return out
}

/** A ZIP64 extended information extra field holding these 64-bit values. */
const zip64Extra = (values: ReadonlyArray<number>) =>
  header(4 + 8 * values.length, (view) => {
    view.setUint16(0, 0x0001, true)
    view.setUint16(2, 8 * values.length, true)
    values.forEach((value, k) => view.setBigUint64(4 + 8 * k, BigInt(value), true))
  })

/** A ZIP archive of the entries (deflated unless `stored`), plain unless the options say otherwise. */
export const zip = (entries: ReadonlyArray<ZipEntryInput>, options: boolean | ZipOptions = false): Uint8Array => {
  const { stored = false, zip64, dataDescriptor = false } = typeof options === "boolean" ? { stored: options } : options
  const wide = zip64 === "extra-fields"
  const version = zip64 === undefined ? 20 : 45
  const flags = dataDescriptor ? 0x0008 : 0
  const locals: Array<Uint8Array> = []
  const centrals: Array<Uint8Array> = []
  let offset = 0
  for (const entry of entries) {
    const name = new TextEncoder().encode(entry.name)
    const content = entry.deflated !== undefined
      ? new Uint8Array(0)
      : typeof entry.content === "string"
      ? new TextEncoder().encode(entry.content)
      : entry.content
    const method = entry.deflated !== undefined ? 8 : stored ? 0 : 8
    const data = entry.deflated ?? (stored ? content : new Uint8Array(deflateRawSync(content)))
    const crc = entry.deflated !== undefined ? (entry.crc ?? 0) : crc32(content)
    const size = entry.declaredSize ?? content.length
    const localExtra = wide ? zip64Extra(dataDescriptor ? [0, 0] : [size, data.length]) : new Uint8Array(0)
    const local = header(30 + name.length, (view) => {
      view.setUint32(0, 0x04034b50, true)
      view.setUint16(4, version, true)
      view.setUint16(6, flags, true)
      view.setUint16(8, method, true)
      view.setUint32(14, dataDescriptor ? 0 : crc, true)
      view.setUint32(18, wide ? SATURATED_32 : dataDescriptor ? 0 : data.length, true)
      view.setUint32(22, wide ? SATURATED_32 : dataDescriptor ? 0 : size, true)
      view.setUint16(26, name.length, true)
      view.setUint16(28, localExtra.length, true)
    })
    local.set(name, 30)
    const descriptor = !dataDescriptor ? new Uint8Array(0) : header(zip64 === undefined ? 16 : 24, (view) => {
      view.setUint32(0, 0x08074b50, true)
      view.setUint32(4, crc, true)
      if (zip64 === undefined) {
        view.setUint32(8, data.length, true)
        view.setUint32(12, size, true)
      } else {
        view.setBigUint64(8, BigInt(data.length), true)
        view.setBigUint64(16, BigInt(size), true)
      }
    })
    const centralExtra = wide ? zip64Extra([size, data.length, offset]) : new Uint8Array(0)
    const central = header(46 + name.length, (view) => {
      view.setUint32(0, 0x02014b50, true)
      view.setUint16(4, version, true)
      view.setUint16(6, version, true)
      view.setUint16(8, flags, true)
      view.setUint16(10, method, true)
      view.setUint32(16, crc, true)
      view.setUint32(20, wide ? SATURATED_32 : data.length, true)
      view.setUint32(24, wide ? SATURATED_32 : size, true)
      view.setUint16(28, name.length, true)
      view.setUint16(30, centralExtra.length, true)
      view.setUint32(42, wide ? SATURATED_32 : offset, true)
    })
    central.set(name, 46)
    locals.push(local, localExtra, data, descriptor)
    centrals.push(central, centralExtra)
    offset += local.length + localExtra.length + data.length + descriptor.length
  }
  const centralSize = centrals.reduce((sum, part) => sum + part.length, 0)
  const ends: Array<Uint8Array> = []
  if (zip64 !== undefined) {
    const record = offset + centralSize
    ends.push(
      header(56, (view) => {
        view.setUint32(0, 0x06064b50, true)
        view.setBigUint64(4, 44n, true)
        view.setUint16(12, version, true)
        view.setUint16(14, version, true)
        view.setBigUint64(24, BigInt(entries.length), true)
        view.setBigUint64(32, BigInt(entries.length), true)
        view.setBigUint64(40, BigInt(centralSize), true)
        view.setBigUint64(48, BigInt(offset), true)
      }),
      header(20, (view) => {
        view.setUint32(0, 0x07064b50, true)
        view.setBigUint64(8, BigInt(record), true)
        view.setUint32(16, 1, true)
      })
    )
  }
  ends.push(header(22, (view) => {
    view.setUint32(0, 0x06054b50, true)
    view.setUint16(8, zip64 === undefined ? entries.length : 0xffff, true)
    view.setUint16(10, zip64 === undefined ? entries.length : 0xffff, true)
    view.setUint32(12, zip64 === undefined ? centralSize : SATURATED_32, true)
    view.setUint32(16, zip64 === undefined ? offset : SATURATED_32, true)
  }))
  return concat([...locals, ...centrals, ...ends])
}

/**
 * The archive with `find` replaced by `replace` (as long) in the stored
 * entry `name`'s data, its CRC-32 left as it was: one damaged entry, whose
 * content still reads (a digit changed, say).
 */
export const corruptEntry = (archive: Uint8Array, name: string, find: string, replace: string): Uint8Array => {
  if (find.length !== replace.length) throw new Error("corruptEntry: the replacement must be as long as what it replaces")
  const view = new DataView(archive.buffer, archive.byteOffset, archive.length)
  const wanted = new TextEncoder().encode(name)
  for (let at = 0; at + 30 <= archive.length && view.getUint32(at, true) === 0x04034b50;) {
    const nameLength = view.getUint16(at + 26, true)
    const start = at + 30 + nameLength + view.getUint16(at + 28, true)
    const entryName = archive.subarray(at + 30, at + 30 + nameLength)
    if (entryName.length === wanted.length && entryName.every((byte, k) => byte === wanted[k])) {
      const text = new TextDecoder("latin1").decode(archive.subarray(start))
      const found = text.indexOf(find)
      if (found < 0) throw new Error(`corruptEntry: "${find}" is not in ${name}`)
      const out = archive.slice()
      out.set(new TextEncoder().encode(replace), start + found)
      return out
    }
    // Entries written here are stored with their sizes in the local header (no descriptor, no ZIP64 extra).
    at = start + view.getUint32(at + 18, true)
  }
  throw new Error(`corruptEntry: no stored entry ${name}`)
}
