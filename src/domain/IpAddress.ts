/**
 * IP addresses and ranges, read one way for the whole service: a secret's
 * allowed client ranges and the trusted proxies (IpAllowList), and the
 * addresses the model fetcher refuses (SpecialAddresses). The reading is
 * `effect/net`'s NetAddress and IpNetwork; this module only fixes the choices.
 *
 * - An address is its text alone: a dotted quad without leading zeros, or
 *   RFC 4291 IPv6 (either case, `::`, a trailing dotted quad). Brackets, a
 *   zone identifier, a prefix or surrounding space make it no address.
 * - A range is a CIDR whose host bits are zero (`10.1.2.3/8` is refused, not
 *   widened to `10.0.0.0/8`), or one address, which is its /32 or /128.
 *   Surrounding space is ignored: ranges come from lists typed by people.
 * - An IPv4-mapped address (`::ffff:0:0/96`, `::ffff:10.1.2.3` or
 *   `::ffff:a01:203`) carries an IPv4 address; each check decides what that
 *   means for it.
 */
import { Option, Result } from "effect"
import { IpInterface, IpNetwork, NetAddress } from "effect/net"

export type IpAddress = NetAddress.IpAddress
export type IpRange = IpNetwork.IpNetwork

/** Parses an address, or returns why it is not one. */
export const parseIpAddress = (input: string): Result.Result<IpAddress, string> => Result.mapError(NetAddress.ipFromString(input), (error) => error.message)

/**
 * Parses a range, or returns why it is not one. IpInterface reads the prefix
 * as optional (the address's width when absent); IpNetwork.make then refuses
 * host bits, which IpNetwork.fromString does too but with the prefix required.
 */
export const parseIpRange = (input: string): Result.Result<IpRange, string> =>
  Result.mapError(
    Result.flatMap(IpInterface.fromString(input.trim()), ({ address, prefixLength }) => IpNetwork.make(address, prefixLength)),
    (error) => error.message
  )

/** The IPv4 address an IPv4-mapped address carries; `undefined` for any other address. */
export const carriedIpv4 = (address: IpAddress): NetAddress.Ipv4Address | undefined =>
  NetAddress.isIpv6Address(address) ? Option.getOrUndefined(NetAddress.fromIpv4Mapped(address)) : undefined

/**
 * Whether input names a host as a socket reports it: an address, or an IPv6
 * address with its zone (`fe80::1%eth0`, as Node names a link-local peer).
 * Only "any address" admits a zoned one: no range contains it. (Not
 * NetAddress.isScopedIpv6Literal: that one also wants the canonical spelling.)
 */
export const isHostAddress = (input: string): boolean =>
  Result.isSuccess(NetAddress.ipFromString(input)) || Result.isSuccess(NetAddress.scopedIpv6LiteralFromString(input))
