/**
 * The per-call authentication work of the baselines, written directly on
 * node: the Authorization header, the secret value's form, SHA-256 and a
 * constant-time compare, and an IPv4 CIDR allow-list. It mirrors what the
 * service checks (src/gateway/request/CallerIdentity.ts, src/adapters/sql/SecretStoreSql.ts,
 * src/domain/IpAllowList.ts) without any framework.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto"
import type { IncomingMessage } from "node:http"

export const SECRET_VALUE_PATTERN = /^([0-9a-f]{24})\.([A-Za-z0-9_-]{43})$/
const MAX_CREDENTIAL_LENGTH = 256
const PRINTABLE_ASCII = /^[\x21-\x7e]+$/
const BEARER = /^bearer +/i

export const sha256 = (value: string): Buffer => createHash("sha256").update(value).digest()

/** A fresh secret in the service's form: `<24 hex id>.<43 base64url chars>`. */
export const issueSecret = () => {
  const id = randomBytes(12).toString("hex")
  const value = `${id}.${randomBytes(32).toString("base64url")}`
  return { id, value, hashHex: sha256(value).toString("hex") }
}

/** The presented secret (id and whole value), from `Authorization: <SECRET>` or `Bearer <SECRET>`. */
export const presentedSecret = (request: IncomingMessage): { readonly id: string; readonly value: string } | undefined => {
  // Node keeps only the first of repeated headers: count them in the raw list, as the service does.
  let header: string | undefined
  const raw = request.rawHeaders
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i]!.length === 13 && raw[i]!.toLowerCase() === "authorization") {
      if (header !== undefined) return undefined
      header = raw[i + 1]!
    }
  }
  if (header === undefined) return undefined
  const value = header.trim().replace(BEARER, "")
  if (value.length === 0 || value.length > MAX_CREDENTIAL_LENGTH || !PRINTABLE_ASCII.test(value)) return undefined
  const match = SECRET_VALUE_PATTERN.exec(value)
  return match === null ? undefined : { id: match[1]!, value }
}

/** Whether the presented value hashes to the stored hash (constant time). */
export const hashMatches = (storedHash: Buffer, presented: string): boolean => {
  const presentedHash = sha256(presented)
  return storedHash.length === presentedHash.length && timingSafeEqual(storedHash, presentedHash)
}

/** An IPv4 range as network and mask (unsigned 32-bit). */
export interface Ipv4Range {
  readonly network: number
  readonly mask: number
}

const parseIpv4 = (text: string): number | undefined => {
  const parts = text.split(".")
  if (parts.length !== 4) return undefined
  let value = 0
  for (const part of parts) {
    if (!/^\d{1,3}$/.test(part)) return undefined
    const octet = Number(part)
    if (octet > 255) return undefined
    value = value * 256 + octet
  }
  return value
}

/** `10.0.0.0/8` or a single address; IPv6 ranges are not needed by the benchmark. */
export const parseRange = (text: string): Ipv4Range => {
  const [address = "", bits = "32"] = text.trim().split("/")
  const parsed = parseIpv4(address)
  const prefix = Number(bits)
  if (parsed === undefined || !Number.isInteger(prefix) || prefix < 0 || prefix > 32) {
    throw new Error(`not an IPv4 range: ${text}`)
  }
  const mask = prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0
  return { network: (parsed & mask) >>> 0, mask }
}

/** Whether the client (as Node reports it, IPv4-mapped IPv6 included) is in one of the ranges; `0.0.0.0/0` admits any address. */
export const ipAllowed = (ranges: ReadonlyArray<Ipv4Range>, clientAddress: string | undefined): boolean => {
  if (clientAddress === undefined) return false
  const text = clientAddress.toLowerCase().startsWith("::ffff:") ? clientAddress.slice(7) : clientAddress
  const address = parseIpv4(text)
  for (const range of ranges) {
    if (range.mask === 0) return true
    if (address !== undefined && ((address & range.mask) >>> 0) === range.network) return true
  }
  return false
}
