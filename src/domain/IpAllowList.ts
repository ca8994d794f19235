/**
 * The IP ranges of an Incoming Secret. A range is a CIDR (`10.0.0.0/8`,
 * `2001:db8::/32`) or a single address (`/32` or `/128` implied).
 *
 * Matching treats an IPv4-mapped IPv6 client (`::ffff:10.1.2.3`, as Node
 * reports IPv4 peers on a dual-stack socket) as the IPv4 address it carries,
 * and `0.0.0.0/0` as "any address", IPv6 included, as the spec promises.
 */
import { Result } from "effect"
import { IpNetwork, NetAddress } from "effect/net"
import { isIP } from "node:net"

export type IpRange = IpNetwork.IpNetwork

const MAPPED_PREFIX = "::ffff:"

/** Parses a range, or returns why it is not one. */
export const parseIpRange = (input: string): Result.Result<IpRange, string> => {
  const text = input.trim()
  const withPrefix = text.includes("/") ? text : `${text}/${text.includes(":") ? 128 : 32}`
  return Result.mapError(IpNetwork.fromString(withPrefix), (error) => error.message)
}

/** `0.0.0.0/0`: every address, IPv6 included (the spec's promise). */
export const isAnyAddress = (range: IpRange): boolean => range.prefixLength === 0 && IpNetwork.isIpv4Network(range)

/**
 * The addresses to test for one client: itself and its other form, so an
 * IPv4 client and its IPv4-mapped IPv6 form (`::ffff:a.b.c.d`) are one client.
 */
const parseCandidates = (clientAddress: string): ReadonlyArray<NetAddress.IpAddress> => {
  const parsed = NetAddress.ipFromString(clientAddress)
  if (Result.isFailure(parsed)) return []
  const lower = clientAddress.toLowerCase()
  const other = lower.startsWith(MAPPED_PREFIX) && lower.includes(".")
    ? NetAddress.ipFromString(lower.slice(MAPPED_PREFIX.length))
    : NetAddress.isIpv4Address(parsed.success)
    ? NetAddress.ipFromString(MAPPED_PREFIX + lower)
    : undefined
  return other !== undefined && Result.isSuccess(other) ? [parsed.success, other.success] : [parsed.success]
}

/** Client addresses parsed lately; cleared when full (a client's address repeats from call to call). */
const parsedClients = new Map<string, ReadonlyArray<NetAddress.IpAddress>>()
const MAX_PARSED_CLIENTS = 1_024

/**
 * Parsing the client's address was most of a range check, and it made a
 * call refused for its address measurably slower than one refused for its
 * secret: the parse is now remembered.
 */
const candidates = (clientAddress: string): ReadonlyArray<NetAddress.IpAddress> => {
  let parsed = parsedClients.get(clientAddress)
  if (parsed === undefined) {
    if (parsedClients.size >= MAX_PARSED_CLIENTS) parsedClients.clear()
    parsed = parseCandidates(clientAddress)
    parsedClients.set(clientAddress, parsed)
  }
  return parsed
}

/** Whether a client address falls in one of the ranges. */
export const isAllowed = (ranges: ReadonlyArray<IpRange>, clientAddress: string): boolean => {
  // `0.0.0.0/0` admits every valid address: Node's native check is enough (the usual case, on the hot path).
  if (ranges.some(isAnyAddress)) return isIP(clientAddress) !== 0
  const addresses = candidates(clientAddress)
  if (addresses.length === 0) return false
  for (const range of ranges) {
    for (const address of addresses) {
      if (IpNetwork.contains(range, address)) return true
    }
  }
  return false
}
