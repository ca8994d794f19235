/**
 * Special-purpose IP addresses: the addresses a server must not be made to
 * connect to on a caller's behalf (SSRF), because they are this host,
 * the operator's own networks, or not ordinary unicast destinations at all.
 *
 * ONE table, `SPECIAL_RANGES`, transcribed from the IANA registries, each row
 * with the registry's name and RFC(s):
 *
 * - IANA IPv4 Special-Purpose Address Registry
 *   (https://www.iana.org/assignments/iana-ipv4-special-registry), all rows;
 * - IANA IPv6 Special-Purpose Address Registry
 *   (https://www.iana.org/assignments/iana-ipv6-special-registry), all rows;
 * - IPv4 multicast, 224.0.0.0/4 (IANA IPv4 Multicast Address Space Registry,
 *   https://www.iana.org/assignments/multicast-addresses);
 * - every block of the IANA IPv6 Address Space registry
 *   (https://www.iana.org/assignments/ipv6-address-space) that is not Global
 *   Unicast 2000::/3: the "Reserved by IETF" blocks, multicast ff00::/8 and
 *   deprecated site-local fec0::/10, plus the deprecated IPv4-compatible
 *   prefix ::/96 that registry's notes name. Unique-local and link-local are
 *   in the special-purpose registry already.
 *
 * Policy, decided here once:
 *
 * - Every row is refused, whatever the registry's "Globally Reachable" column
 *   says: the globally reachable ones (anycast relays, AS112, AMT, ORCHIDv2,
 *   DETs, well-known NAT64) are protocol infrastructure, never a file host.
 * - IPv4-mapped ::ffff:0:0/96 is the only row judged by the address it
 *   carries: it is how a dual-stack socket names an IPv4 peer, so
 *   ::ffff:8.8.8.8 is 8.8.8.8 (fetchable) and ::ffff:127.0.0.1 is loopback.
 * - IPv4-compatible ::/96 (deprecated by RFC 4291), NAT64 64:ff9b::/96 and
 *   64:ff9b:1::/48, 6to4 2002::/16 and Teredo 2001::/32 are refused outright:
 *   each can lead to an IPv4 address through a relay or translator the
 *   operator may run, and no real file host is reached only that way.
 * - IPv6 outside 2000::/3 is refused (the Address Space rows), so a block
 *   IANA adds later outside global unicast is refused already.
 * - Input that is not an IP address in canonical text (dotted quad, RFC 4291
 *   IPv6, no zone identifier) is refused.
 *
 * The table and the addresses are read by IpAddress, as every range of the
 * service is. The table is read once, indexed by first octet and ordered
 * most specific first: the first row containing an address names it
 * (192.0.0.9 is "Port Control Protocol Anycast", not "IETF Protocol Assignments").
 */
import { Result } from "effect"
import { IpNetwork, NetAddress } from "effect/net"
import { carriedIpv4, parseIpAddress, parseIpRange } from "./IpAddress.ts"

/** The registry a row is transcribed from. */
export type Registry =
  | "iana-ipv4-special-registry"
  | "iana-ipv6-special-registry"
  | "multicast-addresses"
  | "ipv6-address-space"
  /** Only `NOT_AN_IP_ADDRESS`: no registry row. */
  | "none"

/** One row of the table. */
export interface SpecialRange {
  /** The block in CIDR notation. */
  readonly block: string
  /** Its name in the registry. */
  readonly name: string
  /** The RFC(s) the registry cites for it. */
  readonly rfc: string
  readonly registry: Registry
  /**
   * `refuse`: never fetched. `embedded-ipv4` (the IPv4-mapped row only):
   * judged by the IPv4 address it carries.
   */
  readonly treatment: "refuse" | "embedded-ipv4"
}

const row = (
  block: string,
  name: string,
  rfc: string,
  registry: Registry,
  treatment: SpecialRange["treatment"] = "refuse"
): SpecialRange => ({ block, name, rfc, registry, treatment })

const v4 = (block: string, name: string, rfc: string) => row(block, name, rfc, "iana-ipv4-special-registry")
const v6 = (block: string, name: string, rfc: string) => row(block, name, rfc, "iana-ipv6-special-registry")
const v6Space = (block: string, name: string, rfc: string) => row(block, name, rfc, "ipv6-address-space")

/** The table: every range an address is refused for. */
export const SPECIAL_RANGES: ReadonlyArray<SpecialRange> = [
  // --- IANA IPv4 Special-Purpose Address Registry (all rows) ---
  v4("0.0.0.0/8", "\"This network\"", "RFC 791"),
  v4("0.0.0.0/32", "\"This host on this network\"", "RFC 1122"),
  v4("10.0.0.0/8", "Private-Use", "RFC 1918"),
  v4("100.64.0.0/10", "Shared Address Space", "RFC 6598"),
  v4("127.0.0.0/8", "Loopback", "RFC 1122"),
  v4("169.254.0.0/16", "Link Local", "RFC 3927"),
  v4("172.16.0.0/12", "Private-Use", "RFC 1918"),
  v4("192.0.0.0/24", "IETF Protocol Assignments", "RFC 6890"),
  v4("192.0.0.0/29", "IPv4 Service Continuity Prefix", "RFC 7335"),
  v4("192.0.0.8/32", "IPv4 dummy address", "RFC 7600"),
  v4("192.0.0.9/32", "Port Control Protocol Anycast", "RFC 7723"),
  v4("192.0.0.10/32", "Traversal Using Relays around NAT Anycast", "RFC 8155"),
  v4("192.0.0.170/32", "NAT64/DNS64 Discovery", "RFC 8880, RFC 7050"),
  v4("192.0.0.171/32", "NAT64/DNS64 Discovery", "RFC 8880, RFC 7050"),
  v4("192.0.2.0/24", "Documentation (TEST-NET-1)", "RFC 5737"),
  v4("192.31.196.0/24", "AS112-v4", "RFC 7535"),
  v4("192.52.193.0/24", "AMT", "RFC 7450"),
  v4("192.88.99.0/24", "Deprecated (6to4 Relay Anycast)", "RFC 7526"),
  v4("192.88.99.2/32", "6a44-relay anycast address", "RFC 6751"),
  v4("192.168.0.0/16", "Private-Use", "RFC 1918"),
  v4("192.175.48.0/24", "Direct Delegation AS112 Service", "RFC 7534"),
  v4("198.18.0.0/15", "Benchmarking", "RFC 2544"),
  v4("198.51.100.0/24", "Documentation (TEST-NET-2)", "RFC 5737"),
  v4("203.0.113.0/24", "Documentation (TEST-NET-3)", "RFC 5737"),
  v4("240.0.0.0/4", "Reserved", "RFC 1112"),
  v4("255.255.255.255/32", "Limited Broadcast", "RFC 8190, RFC 919"),
  // --- IANA IPv4 Multicast Address Space Registry ---
  row("224.0.0.0/4", "Multicast", "RFC 5771", "multicast-addresses"),

  // --- IANA IPv6 Special-Purpose Address Registry (all rows) ---
  v6("::1/128", "Loopback Address", "RFC 4291"),
  v6("::/128", "Unspecified Address", "RFC 4291"),
  row("::ffff:0:0/96", "IPv4-mapped Address", "RFC 4291", "iana-ipv6-special-registry", "embedded-ipv4"),
  v6("64:ff9b::/96", "IPv4-IPv6 Translation (NAT64)", "RFC 6052"),
  v6("64:ff9b:1::/48", "IPv4-IPv6 Translation (local-use NAT64)", "RFC 8215"),
  v6("100::/64", "Discard-Only Address Block", "RFC 6666"),
  v6("100:0:0:1::/64", "Dummy IPv6 Prefix", "RFC 9780"),
  v6("2001::/23", "IETF Protocol Assignments", "RFC 2928"),
  v6("2001::/32", "TEREDO", "RFC 4380, RFC 8190"),
  v6("2001:1::1/128", "Port Control Protocol Anycast", "RFC 7723"),
  v6("2001:1::2/128", "Traversal Using Relays around NAT Anycast", "RFC 8155"),
  v6("2001:1::3/128", "DNS-SD Service Registration Protocol Anycast", "RFC 9665"),
  v6("2001:2::/48", "Benchmarking", "RFC 5180"),
  v6("2001:3::/32", "AMT", "RFC 7450"),
  v6("2001:4:112::/48", "AS112-v6", "RFC 7535"),
  v6("2001:10::/28", "Deprecated (previously ORCHID)", "RFC 4843"),
  v6("2001:20::/28", "ORCHIDv2", "RFC 7343"),
  v6("2001:30::/28", "Drone Remote ID Protocol Entity Tags (DETs) Prefix", "RFC 9374"),
  v6("2001:db8::/32", "Documentation", "RFC 3849"),
  v6("2002::/16", "6to4", "RFC 3056"),
  v6("2620:4f:8000::/48", "Direct Delegation AS112 Service", "RFC 7534"),
  v6("3fff::/20", "Documentation", "RFC 9637"),
  v6("5f00::/16", "Segment Routing (SRv6) SIDs", "RFC 9602"),
  v6("fc00::/7", "Unique-Local", "RFC 4193, RFC 8190"),
  v6("fe80::/10", "Link-Local Unicast", "RFC 4291"),

  // --- IANA IPv6 Address Space: everything outside Global Unicast 2000::/3 ---
  v6Space("::/96", "IPv4-compatible", "RFC 4291"),
  v6Space("::/8", "Reserved by IETF", "RFC 4291"),
  v6Space("100::/8", "Reserved by IETF", "RFC 4291"),
  v6Space("200::/7", "Reserved by IETF", "RFC 4048"),
  v6Space("400::/6", "Reserved by IETF", "RFC 4291"),
  v6Space("800::/5", "Reserved by IETF", "RFC 4291"),
  v6Space("1000::/4", "Reserved by IETF", "RFC 4291"),
  v6Space("4000::/3", "Reserved by IETF", "RFC 4291"),
  v6Space("6000::/3", "Reserved by IETF", "RFC 4291"),
  v6Space("8000::/3", "Reserved by IETF", "RFC 4291"),
  v6Space("a000::/3", "Reserved by IETF", "RFC 4291"),
  v6Space("c000::/3", "Reserved by IETF", "RFC 4291"),
  v6Space("e000::/4", "Reserved by IETF", "RFC 4291"),
  v6Space("f000::/5", "Reserved by IETF", "RFC 4291"),
  v6Space("f800::/6", "Reserved by IETF", "RFC 4291"),
  v6Space("fe00::/9", "Reserved by IETF", "RFC 4291"),
  v6Space("fec0::/10", "Site-Local (deprecated)", "RFC 3879"),
  v6Space("ff00::/8", "Multicast", "RFC 4291")
]

// ---------------------------------------------------------------------------
// The table, parsed once

interface Compiled {
  readonly network: IpNetwork.IpNetwork
  readonly range: SpecialRange
}

/** Whether a row is the IPv4-mapped block `::ffff:0:0/96`, the only one whose addresses carry an IPv4 address (`carriedIpv4`). */
const isIpv4MappedBlock = (network: IpNetwork.IpNetwork) => network.prefixLength === 96 && carriedIpv4(network.address) !== undefined

const compile = (range: SpecialRange): Compiled => {
  // A malformed row (host bits set, bad prefix) fails the module's load: a bug, caught by any test.
  const parsed = parseIpRange(range.block)
  if (Result.isFailure(parsed)) throw new Error(`SpecialAddresses: ${range.block}: ${parsed.failure}`)
  const network = parsed.success
  if (range.treatment === "embedded-ipv4" && !isIpv4MappedBlock(network)) {
    throw new Error(`SpecialAddresses: ${range.block} is not the IPv4-mapped block, its addresses carry no IPv4 address`)
  }
  return { network, range }
}

/** Most specific first: the first row containing an address is the one naming it. */
const mostSpecificFirst = (a: Compiled, b: Compiled) => b.network.prefixLength - a.network.prefixLength

const firstOctet = (address: NetAddress.IpAddress): number =>
  (NetAddress.isIpv4Address(address) ? NetAddress.ipv4ToOctets(address)[0] : NetAddress.ipv6ToOctets(address)[0]) ?? 0

/**
 * The rows by the first octet of the addresses they hold (a row shorter than
 * /8 is in each bucket it spans), most specific first: an address is tested
 * against the few rows of its bucket only (8.8.8.8 against none, 2606:4700::1111
 * against 2620:4f:8000::/48 alone) instead of the whole table.
 */
const byFirstOctet = (rows: ReadonlyArray<Compiled>): ReadonlyArray<ReadonlyArray<Compiled>> => {
  const buckets = Array.from({ length: 256 }, (): Array<Compiled> => [])
  for (const row of [...rows].sort(mostSpecificFirst)) {
    const last = firstOctet(IpNetwork.lastAddress(row.network))
    for (let octet = firstOctet(IpNetwork.firstAddress(row.network)); octet <= last; octet++) buckets[octet]!.push(row)
  }
  return buckets
}

const COMPILED = SPECIAL_RANGES.map(compile)
const IPV4_BUCKETS = byFirstOctet(COMPILED.filter((row) => IpNetwork.isIpv4Network(row.network)))
const IPV6_BUCKETS = byFirstOctet(COMPILED.filter((row) => IpNetwork.isIpv6Network(row.network)))

const rowOf = (address: NetAddress.IpAddress): SpecialRange | undefined => {
  const rows = (NetAddress.isIpv4Address(address) ? IPV4_BUCKETS : IPV6_BUCKETS)[firstOctet(address)] ?? []
  for (const row of rows) {
    if (IpNetwork.contains(row.network, address)) return row.range
  }
  return undefined
}

interface Found {
  readonly range: SpecialRange
  /** The IPv4 address an IPv4-mapped address carries, which `range` is about. */
  readonly carried?: NetAddress.Ipv4Address
}

type Lookup = Found | "ordinary" | "unparsable"

const lookup = (address: string): Lookup => {
  const parsed = parseIpAddress(address)
  if (Result.isFailure(parsed)) return "unparsable"
  const range = rowOf(parsed.success)
  if (range === undefined) return "ordinary"
  // Every row but the IPv4-mapped one refuses as itself; that one is judged by the IPv4 address an address carries.
  const carried = range.treatment === "embedded-ipv4" ? carriedIpv4(parsed.success) : undefined
  if (carried === undefined) return { range }
  const inner = rowOf(carried)
  return inner === undefined ? "ordinary" : { range: inner, carried }
}

// ---------------------------------------------------------------------------
// The checks

/** What `classify` answers for input that is not an IP address: refused like a special range. */
export const NOT_AN_IP_ADDRESS: SpecialRange = Object.freeze({
  block: "",
  name: "not an IP address",
  rfc: "",
  registry: "none",
  treatment: "refuse"
})

/**
 * The special-purpose range an address falls in (for an IPv4-mapped address,
 * the range of the IPv4 address it carries); `NOT_AN_IP_ADDRESS` for input
 * that is not an IP address; `undefined` only for an ordinary, fetchable address.
 */
export const classify = (address: string): SpecialRange | undefined => {
  const found = lookup(address)
  return found === "ordinary" ? undefined : found === "unparsable" ? NOT_AN_IP_ADDRESS : found.range
}

/** Whether an address may be connected to on a caller's behalf: an IP address in no special-purpose range. */
export const isFetchable = (address: string): boolean => lookup(address) === "ordinary"

/**
 * Why an address is refused, for a message: `IPv4-compatible, RFC 4291`,
 * `IPv4-mapped 127.0.0.1: Loopback, RFC 1122`, `not an IP address`;
 * `undefined` when it is fetchable.
 */
export const describeSpecial = (address: string): string | undefined => {
  const found = lookup(address)
  if (found === "ordinary") return undefined
  if (found === "unparsable") return NOT_AN_IP_ADDRESS.name
  const what = `${found.range.name}, ${found.range.rfc}`
  return found.carried === undefined ? what : `IPv4-mapped ${NetAddress.formatIp(found.carried)}: ${what}`
}
