/**
 * The IP ranges of an Incoming Secret, and of the trusted proxies. A range
 * is a CIDR (`10.0.0.0/8`, `2001:db8::/32`) or a single address (`/32` or
 * `/128` implied), read by IpAddress.
 *
 * Matching treats an IPv4 client and its IPv4-mapped IPv6 form
 * (`::ffff:10.1.2.3`, as Node reports IPv4 peers on a dual-stack socket) as
 * one client, and `0.0.0.0/0` as "any address", IPv6 included, as the spec
 * promises. A link-local client with its zone (`fe80::1%eth0`, as Node names
 * such a peer) is an address for `0.0.0.0/0` and in no range, `fe80::/10`
 * included, as before IpAddress read the ranges.
 */
import { Result } from "effect"
import { IpNetwork, NetAddress } from "effect/net"
import { carriedIpv4, type IpAddress, type IpRange, isHostAddress, parseIpAddress, parseIpRange } from "./IpAddress.ts"

export { type IpRange, parseIpRange }

/** `0.0.0.0/0`: every address, IPv6 included (the spec's promise). */
export const isAnyAddress = (range: IpRange): boolean => range.prefixLength === 0 && IpNetwork.isIpv4Network(range)

interface Client {
  /** Whether the client is an address at all, zoned IPv6 included: what `0.0.0.0/0` admits. */
  readonly isAddress: boolean
  /** What the ranges are tested with: the address and its other form (IPv4 and IPv4-mapped), none for a zoned one. */
  readonly forms: ReadonlyArray<IpAddress>
}

const parseClient = (clientAddress: string): Client => {
  const parsed = parseIpAddress(clientAddress)
  if (Result.isFailure(parsed)) return { isAddress: isHostAddress(clientAddress), forms: [] }
  const address = parsed.success
  const other = NetAddress.isIpv4Address(address) ? NetAddress.toIpv4Mapped(address) : carriedIpv4(address)
  return { isAddress: true, forms: other === undefined ? [address] : [address, other] }
}

/** Client addresses parsed lately; cleared when full (a client's address repeats from call to call). */
const parsedClients = new Map<string, Client>()
const MAX_PARSED_CLIENTS = 1_024

/**
 * Parsing the client's address was most of a range check, and it made a
 * call refused for its address measurably slower than one refused for its
 * secret: the parse is remembered.
 */
const client = (clientAddress: string): Client => {
  let parsed = parsedClients.get(clientAddress)
  if (parsed === undefined) {
    if (parsedClients.size >= MAX_PARSED_CLIENTS) parsedClients.clear()
    parsed = parseClient(clientAddress)
    parsedClients.set(clientAddress, parsed)
  }
  return parsed
}

/** Whether a client address falls in one of the ranges. */
export const isAllowed = (ranges: ReadonlyArray<IpRange>, clientAddress: string): boolean => {
  const { forms, isAddress } = client(clientAddress)
  if (ranges.some(isAnyAddress)) return isAddress
  for (const range of ranges) {
    for (const address of forms) {
      if (IpNetwork.contains(range, address)) return true
    }
  }
  return false
}
