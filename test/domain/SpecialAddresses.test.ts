/**
 * The special-purpose address table (src/domain/SpecialAddresses.ts): every
 * range the model fetcher must refuse, with the names and RFCs a refusal
 * shows; the addresses just outside them, which stay fetchable; the
 * embedded-IPv4 forms (mapped judged, compatible / NAT64 / 6to4 refused);
 * input that is not an IP address; and, against an independent bigint
 * reference of the ranges, random addresses.
 */
import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"
import { IpNetwork, NetAddress } from "effect/net"
import fc from "fast-check"
import { classify, describeSpecial, isFetchable, NOT_AN_IP_ADDRESS, SPECIAL_RANGES } from "../../src/domain/SpecialAddresses.ts"

const refused = (address: string, name?: string) => {
  assert.isFalse(isFetchable(address), `${address} should be refused`)
  const range = classify(address)
  assert.isDefined(range, address)
  if (name !== undefined) assert.strictEqual(range?.name, name, address)
}
const fetchable = (address: string) => {
  assert.isTrue(isFetchable(address), `${address} should be fetchable (${describeSpecial(address)})`)
  assert.isUndefined(classify(address), address)
  assert.isUndefined(describeSpecial(address), address)
  assert.isUndefined(describeSpecial(address), address)
}

describe("special-purpose addresses: IPv4", () => {
  // [range, first address, last address, the name a refusal shows for an address inside]
  const ranges: ReadonlyArray<readonly [string, string, string, string]> = [
    ["0.0.0.0/8", "0.0.0.1", "0.255.255.255", "\"This network\""],
    ["10.0.0.0/8", "10.0.0.0", "10.255.255.255", "Private-Use"],
    ["100.64.0.0/10", "100.64.0.0", "100.127.255.255", "Shared Address Space"],
    ["127.0.0.0/8", "127.0.0.0", "127.255.255.255", "Loopback"],
    ["169.254.0.0/16", "169.254.0.0", "169.254.255.255", "Link Local"],
    ["172.16.0.0/12", "172.16.0.0", "172.31.255.255", "Private-Use"],
    ["192.0.0.0/24", "192.0.0.100", "192.0.0.255", "IETF Protocol Assignments"],
    ["192.0.2.0/24", "192.0.2.0", "192.0.2.255", "Documentation (TEST-NET-1)"],
    ["192.31.196.0/24", "192.31.196.0", "192.31.196.255", "AS112-v4"],
    ["192.52.193.0/24", "192.52.193.0", "192.52.193.255", "AMT"],
    ["192.88.99.0/24", "192.88.99.0", "192.88.99.255", "Deprecated (6to4 Relay Anycast)"],
    ["192.168.0.0/16", "192.168.0.0", "192.168.255.255", "Private-Use"],
    ["192.175.48.0/24", "192.175.48.0", "192.175.48.255", "Direct Delegation AS112 Service"],
    ["198.18.0.0/15", "198.18.0.0", "198.19.255.255", "Benchmarking"],
    ["198.51.100.0/24", "198.51.100.0", "198.51.100.255", "Documentation (TEST-NET-2)"],
    ["203.0.113.0/24", "203.0.113.0", "203.0.113.255", "Documentation (TEST-NET-3)"],
    ["224.0.0.0/4", "224.0.0.0", "239.255.255.255", "Multicast"],
    ["240.0.0.0/4", "240.0.0.0", "255.255.255.254", "Reserved"]
  ]
  for (const [range, first, last, name] of ranges) {
    it(`${range} (${name}) is refused, first to last address`, () => {
      refused(first, name)
      refused(last, name)
    })
  }

  it("the registry's more specific rows name their addresses", () => {
    refused("0.0.0.0", "\"This host on this network\"")
    refused("192.0.0.1", "IPv4 Service Continuity Prefix")
    refused("192.0.0.8", "IPv4 dummy address")
    refused("192.0.0.9", "Port Control Protocol Anycast")
    refused("192.0.0.10", "Traversal Using Relays around NAT Anycast")
    refused("192.0.0.170", "NAT64/DNS64 Discovery")
    refused("192.0.0.171", "NAT64/DNS64 Discovery")
    refused("192.88.99.2", "6a44-relay anycast address")
    refused("255.255.255.255", "Limited Broadcast")
    assert.strictEqual(describeSpecial("127.0.0.1"), "Loopback, RFC 1122")
    assert.strictEqual(describeSpecial("100.64.0.1"), "Shared Address Space, RFC 6598")
    assert.strictEqual(describeSpecial("169.254.169.254"), "Link Local, RFC 3927")
  })

  it("the addresses just outside the ranges, and public ones, are fetchable", () => {
    for (
      const address of [
        "8.8.8.8",
        "1.1.1.1",
        "93.184.216.34",
        "1.0.0.0",
        "9.255.255.255",
        "11.0.0.0",
        "100.63.255.255",
        "100.128.0.0",
        "126.255.255.255",
        "128.0.0.0",
        "169.253.255.255",
        "169.255.0.0",
        "172.15.255.255",
        "172.32.0.0",
        "191.255.255.255",
        "192.0.1.0",
        "192.0.1.255",
        "192.0.3.0",
        "192.31.195.255",
        "192.31.197.0",
        "192.52.192.255",
        "192.52.194.0",
        "192.88.98.255",
        "192.88.100.0",
        "192.167.255.255",
        "192.169.0.0",
        "192.175.47.255",
        "192.175.49.0",
        "198.17.255.255",
        "198.20.0.0",
        "198.51.99.255",
        "198.51.101.0",
        "203.0.112.255",
        "203.0.114.0",
        "223.255.255.255"
      ]
    ) fetchable(address)
  })
})

describe("special-purpose addresses: IPv6", () => {
  // [range, an address inside (first, last or typical), name]
  const ranges: ReadonlyArray<readonly [string, ReadonlyArray<string>, string]> = [
    ["::1/128", ["::1"], "Loopback Address"],
    ["::/128", ["::"], "Unspecified Address"],
    ["::/96 (IPv4-compatible)", ["::0.0.0.2", "::7f00:1", "::127.0.0.1", "::8.8.8.8", "::ffff:ffff"], "IPv4-compatible"],
    ["64:ff9b::/96", ["64:ff9b::", "64:ff9b::8.8.8.8", "64:ff9b::ffff:ffff"], "IPv4-IPv6 Translation (NAT64)"],
    ["64:ff9b:1::/48", ["64:ff9b:1::", "64:ff9b:1::7f00:1", "64:ff9b:1:ffff:ffff:ffff:ffff:ffff"], "IPv4-IPv6 Translation (local-use NAT64)"],
    ["100::/64", ["100::", "100::ffff:ffff:ffff:ffff"], "Discard-Only Address Block"],
    ["100:0:0:1::/64", ["100:0:0:1::1"], "Dummy IPv6 Prefix"],
    ["2001::/23", ["2001:100::1", "2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff"], "IETF Protocol Assignments"],
    ["2001::/32 (Teredo)", ["2001::", "2001:0:4136:e378:8000:63bf:3fff:fdd2", "2001:0:ffff:ffff:ffff:ffff:ffff:ffff"], "TEREDO"],
    ["2001:2::/48", ["2001:2::", "2001:2:0:ffff:ffff:ffff:ffff:ffff"], "Benchmarking"],
    ["2001:10::/28 (ORCHID)", ["2001:10::", "2001:1f:ffff:ffff:ffff:ffff:ffff:ffff"], "Deprecated (previously ORCHID)"],
    ["2001:20::/28 (ORCHIDv2)", ["2001:20::", "2001:2f:ffff:ffff:ffff:ffff:ffff:ffff"], "ORCHIDv2"],
    ["2001:db8::/32", ["2001:db8::", "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff"], "Documentation"],
    ["2002::/16 (6to4)", ["2002::", "2002:7f00:1::", "2002:808:808::1", "2002:ffff:ffff:ffff:ffff:ffff:ffff:ffff"], "6to4"],
    ["3fff::/20", ["3fff::", "3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff"], "Documentation"],
    ["5f00::/16", ["5f00::", "5f00:ffff:ffff:ffff:ffff:ffff:ffff:ffff"], "Segment Routing (SRv6) SIDs"],
    ["fc00::/7", ["fc00::", "fd00::1", "fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"], "Unique-Local"],
    ["fec0::/10", ["fec0::", "feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"], "Site-Local (deprecated)"],
    ["fe80::/10", ["fe80::", "fe80::1", "febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff"], "Link-Local Unicast"],
    ["ff00::/8", ["ff00::", "ff02::1", "ff0e::1", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"], "Multicast"]
  ]
  for (const [range, addresses, name] of ranges) {
    it(`${range} (${name}) is refused`, () => {
      for (const address of addresses) refused(address, name)
    })
  }

  it("the three forms the old check missed are refused, naming the range", () => {
    assert.strictEqual(describeSpecial("::127.0.0.1"), "IPv4-compatible, RFC 4291")
    assert.strictEqual(describeSpecial("::7f00:1"), "IPv4-compatible, RFC 4291")
    assert.strictEqual(describeSpecial("64:ff9b:1::a00:1"), "IPv4-IPv6 Translation (local-use NAT64), RFC 8215")
    assert.strictEqual(describeSpecial("2002:7f00:1::"), "6to4, RFC 3056")
    // And the old ::/127 only: :: and ::1 are their own rows, ::2 IPv4-compatible.
    refused("::2", "IPv4-compatible")
  })

  it("IPv4-mapped addresses are judged by the IPv4 address they carry", () => {
    for (const address of ["::ffff:127.0.0.1", "::ffff:7f00:1", "0:0:0:0:0:ffff:7f00:1", "::FFFF:7F00:1"]) {
      refused(address, "Loopback")
      assert.strictEqual(describeSpecial(address), "IPv4-mapped 127.0.0.1: Loopback, RFC 1122")
    }
    refused("::ffff:10.1.2.3", "Private-Use")
    refused("::ffff:169.254.169.254", "Link Local")
    refused("::ffff:0.0.0.0", "\"This host on this network\"")
    refused("::ffff:255.255.255.255", "Limited Broadcast")
    for (const address of ["::ffff:8.8.8.8", "::ffff:808:808", "::ffff:100.63.255.255", "::ffff:100.128.0.0"]) fetchable(address)
  })

  it("IPv4-compatible, NAT64 and 6to4 forms are refused whatever IPv4 address they carry", () => {
    // 8.8.8.8 is fetchable; the forms carrying it are not (a relay or translator could reach anything).
    for (const address of ["::8.8.8.8", "64:ff9b::8.8.8.8", "64:ff9b:1::808:808", "2002:808:808::"]) refused(address)
  })

  it("IPv6 outside global unicast 2000::/3 is refused (IANA IPv6 Address Space: Reserved by IETF)", () => {
    for (
      const address of ["::ffff:0:7f00:1", "::1:0:0:1", "64:ff9b:2::1", "100:0:0:2::1", "200::1", "1fff:ffff::1", "4000::1", "5eff::1", "e000::1", "fe00::1"]
    ) {
      refused(address, "Reserved by IETF")
    }
  })

  it("the addresses just outside the ranges, and public ones, are fetchable", () => {
    for (
      const address of [
        "2606:4700::1111",
        "2606:4700:4700::1111",
        "2001:4860:4860::8888",
        "2a00:1450:4001:80b::200e",
        "2000::",
        "2000::1",
        "2001:200::",
        "2001:200::1",
        "2001:db7:ffff:ffff:ffff:ffff:ffff:ffff",
        "2001:db9::",
        "2001:200:ffff:ffff:ffff:ffff:ffff:ffff",
        "2003::",
        "2001:ffff::1",
        "2620:4f:7fff:ffff:ffff:ffff:ffff:ffff",
        "2620:4f:8001::",
        "3ffe:ffff::1",
        "3fff:1000::",
        "3fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"
      ]
    ) fetchable(address)
  })
})

describe("special-purpose addresses: input", () => {
  it("what is not an IP address in canonical text is refused", () => {
    for (
      const input of [
        "",
        "localhost",
        "example.com",
        "127.1",
        "0x7f.0.0.1",
        "0177.0.0.1",
        "2130706433",
        "127.000.000.001",
        " 127.0.0.1",
        "127.0.0.1 ",
        "1.2.3.4.5",
        "256.0.0.1",
        "[::1]",
        "fe80::1%eth0",
        "2606:4700::1111%1",
        "::ffff:8.8.8.8/96",
        "1::2::3",
        "12345::",
        "8.8.8.8:80"
      ]
    ) {
      assert.isFalse(isFetchable(input), JSON.stringify(input))
      assert.strictEqual(classify(input), NOT_AN_IP_ADDRESS, JSON.stringify(input))
      assert.strictEqual(describeSpecial(input), "not an IP address")
    }
    assert.strictEqual(describeSpecial("localhost"), "not an IP address")
  })
})

describe("special-purpose addresses: the table", () => {
  const parse = (text: string) => NetAddress.ipFromStringUnsafe(text)

  it("every row is a distinct network with its name, RFC and registry", () => {
    const blocks = SPECIAL_RANGES.map((range) => range.block)
    assert.strictEqual(new Set(blocks).size, blocks.length, "duplicate rows")
    for (const range of SPECIAL_RANGES) {
      // A network as written in the registry: no host bits set.
      assert.isTrue(Result.isSuccess(IpNetwork.fromString(range.block)), range.block)
      assert.match(range.rfc, /^RFC \d+(, RFC \d+)*$/, range.block)
      assert.isAbove(range.name.length, 0, range.block)
      assert.notStrictEqual(range.registry, "none", range.block)
    }
  })

  it("the first and last address of every row are refused", () => {
    for (const range of SPECIAL_RANGES) {
      const network = IpNetwork.fromStringUnsafe(range.block)
      for (const address of [IpNetwork.firstAddress(network), IpNetwork.lastAddress(network)]) {
        assert.isFalse(isFetchable(NetAddress.formatIp(address)), `${NetAddress.formatIp(address)} (${range.block})`)
      }
    }
  })

  it("the embedded-IPv4 treatment is IPv4-mapped's alone", () => {
    assert.deepStrictEqual(
      SPECIAL_RANGES.filter((range) => range.treatment === "embedded-ipv4").map((range) => range.block),
      ["::ffff:0:0/96"]
    )
  })

  // An independent reference: the ranges as bigint intervals, written apart from the table.
  const v4 = (text: string) => BigInt(text.split(".").reduce((n, octet) => n * 256 + Number(octet), 0))
  const cidr4 = (text: string): readonly [bigint, bigint] => {
    const [base, bits] = text.split("/") as [string, string]
    const size = 1n << BigInt(32 - Number(bits))
    return [v4(base), v4(base) + size - 1n]
  }
  const REFERENCE_V4 = [
    "0.0.0.0/8",
    "10.0.0.0/8",
    "100.64.0.0/10",
    "127.0.0.0/8",
    "169.254.0.0/16",
    "172.16.0.0/12",
    "192.0.0.0/24",
    "192.0.2.0/24",
    "192.31.196.0/24",
    "192.52.193.0/24",
    "192.88.99.0/24",
    "192.168.0.0/16",
    "192.175.48.0/24",
    "198.18.0.0/15",
    "198.51.100.0/24",
    "203.0.113.0/24",
    "224.0.0.0/4",
    "240.0.0.0/4"
  ].map(cidr4)
  const referenceV4Refused = (n: bigint) => REFERENCE_V4.some(([low, high]) => n >= low && n <= high)
  const dotted = (n: number) => [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join(".")
  const segments = (words: ReadonlyArray<number>) => words.map((word) => word.toString(16)).join(":")

  // Biased to the ranges' edges, where mistakes are.
  const ipv4 = fc.oneof(
    fc.nat({ max: 0xffffffff }),
    fc.constantFrom(...REFERENCE_V4.flatMap(([low, high]) => [low - 1n, low, high, high + 1n]))
      .filter((n) => n >= 0n && n <= 0xffffffffn)
      .map(Number)
  )

  it("random IPv4 addresses: refused exactly when in a reference range; the IPv4-mapped form agrees", () => {
    fc.assert(
      fc.property(ipv4, (n) => {
        const address = dotted(n)
        const expected = !referenceV4Refused(BigInt(n))
        assert.strictEqual(isFetchable(address), expected, address)
        assert.strictEqual(isFetchable(`::ffff:${address}`), expected, `::ffff:${address}`)
        // The IPv4-mapped address in its other spellings: the same IPv4 address.
        const high = (n >>> 16).toString(16), low = (n & 0xffff).toString(16)
        for (const mapped of [`::ffff:${high}:${low}`, `0:0:0:0:0:FFFF:${high.toUpperCase()}:${low.toUpperCase()}`, `0::ffff:${address}`]) {
          assert.strictEqual(isFetchable(mapped), expected, mapped)
        }
        // The forms that carry it through a relay or translator: always refused.
        for (const carried of [`::${high}:${low}`, `64:ff9b::${high}:${low}`, `64:ff9b:1::${high}:${low}`, `2002:${high}:${low}::1`]) {
          assert.isFalse(isFetchable(carried), carried)
        }
      }),
      { numRuns: 2000 }
    )
  })

  it("random IPv6 addresses: fetchable exactly in 2000::/3 outside its special rows", () => {
    const inside = (words: ReadonlyArray<number>) => {
      const [a = 0, b = 0, c = 0] = words
      // IPv4-mapped: as the IPv4 address.
      if (words.slice(0, 5).every((w) => w === 0) && words[5] === 0xffff) return referenceV4Refused(BigInt(words[6]! * 0x10000 + words[7]!))
      if ((a & 0xe000) !== 0x2000) return true // outside global unicast
      if (a === 0x2001 && b < 0x200) return true // 2001::/23
      if (a === 0x2001 && b === 0xdb8) return true // 2001:db8::/32
      if (a === 0x2002) return true // 2002::/16
      if (a === 0x2620 && b === 0x4f && c === 0x8000) return true // 2620:4f:8000::/48
      if (a === 0x3fff && b < 0x1000) return true // 3fff::/20
      return false
    }
    const word = fc.nat({ max: 0xffff })
    const first = fc.oneof(word, fc.constantFrom(0, 0x1fff, 0x2000, 0x2001, 0x2002, 0x2620, 0x3fff, 0x4000, 0x5f00, 0xfc00, 0xfe80, 0xff00))
    const second = fc.oneof(word, fc.constantFrom(0, 0x1ff, 0x200, 0xdb7, 0xdb8, 0xdb9, 0x4f, 0xfff, 0x1000))
    const third = fc.oneof(word, fc.constantFrom(0, 0x7fff, 0x8000, 0x8001))
    fc.assert(
      fc.property(fc.tuple(first, second, third, fc.array(word, { minLength: 5, maxLength: 5 })), ([a, b, c, rest]) => {
        const words = [a, b, c, ...rest]
        const address = segments(words)
        assert.strictEqual(isFetchable(address), !inside(words), address)
        assert.strictEqual(isFetchable(NetAddress.formatIp(parse(address))), !inside(words), "canonical form")
      }),
      { numRuns: 2000 }
    )
  })
})
