import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"
import { IpNetwork } from "effect/net"
import { isAllowed, isAnyAddress, parseIpRange } from "../../src/domain/IpAllowList.ts"

const ranges = (...texts: Array<string>) =>
  texts.map((text) => {
    const parsed = parseIpRange(text)
    if (Result.isFailure(parsed)) throw new Error(parsed.failure)
    return parsed.success
  })

describe("IP allow-list", () => {
  const table: ReadonlyArray<readonly [Array<string>, string, boolean]> = [
    [["0.0.0.0/0"], "8.8.8.8", true],
    [["0.0.0.0/0"], "2001:db8::1", true],
    [["0.0.0.0/0"], "::1", true],
    [["10.0.0.0/8"], "10.200.3.4", true],
    [["10.0.0.0/8"], "11.0.0.1", false],
    [["10.0.0.0/8"], "::ffff:10.200.3.4", true],
    [["10.0.0.0/8"], "::ffff:11.0.0.1", false],
    [["10.0.0.0/8"], "2001:db8::1", false],
    [["203.0.113.7/32"], "203.0.113.7", true],
    [["203.0.113.7/32"], "203.0.113.8", false],
    [["203.0.113.7"], "203.0.113.7", true],
    [["2001:db8::/32"], "2001:db8:ffff::5", true],
    [["2001:db8::/32"], "2001:db9::1", false],
    [["2001:db8::/32"], "10.0.0.1", false],
    [["2001:db8::5/128"], "2001:db8::5", true],
    [["2001:db8::5/128"], "2001:db8::6", false],
    [["::/0"], "2001:db8::6", true],
    [["::ffff:10.0.0.0/104"], "10.9.9.9", true],
    [["::ffff:10.0.0.0/104"], "11.9.9.9", false],
    [["192.168.0.0/16", "2001:db8::/32"], "2001:db8::1", true],
    [["10.0.0.0/8"], "not-an-address", false],
    [["0.0.0.0/0"], "not-an-address", false],
    [["0.0.0.0/0"], "", false],
    [["10.0.0.0/8"], "", false],
    // An IPv4-mapped client is its IPv4 address however it is spelled (NetAddress.fromIpv4Mapped).
    [["10.0.0.0/8"], "::FFFF:10.200.3.4", true],
    [["10.0.0.0/8"], "::ffff:ac8:304", true],
    [["10.0.0.0/8"], "0:0:0:0:0:ffff:10.200.3.4", true],
    [["10.0.0.0/8"], "::ffff:b00:1", false],
    [["::ffff:10.0.0.0/104"], "::ffff:a09:909", true],
    // Only the mapped block carries an IPv4 address: IPv4-compatible and NAT64 forms are IPv6 clients.
    [["10.0.0.0/8"], "::10.200.3.4", false],
    [["10.0.0.0/8"], "64:ff9b::10.200.3.4", false],
    [["10.0.0.0/8"], "::ffff:0:10.200.3.4", false],
    // A link-local peer with its zone, as Node names it: an address for `0.0.0.0/0`, in no range.
    [["0.0.0.0/0"], "fe80::1%eth0", true],
    [["0.0.0.0/0"], "fe80::1%2", true],
    [["0.0.0.0/0"], "::ffff:10.1.2.3%eth0", true],
    [["fe80::/10"], "fe80::1%eth0", false],
    [["::/0"], "fe80::1%eth0", false],
    [["0.0.0.0/0"], "fe80::1%", false],
    [["0.0.0.0/0"], "10.1.2.3%eth0", false],
    // Not canonical text: refused whatever the ranges.
    [["0.0.0.0/0"], "010.1.2.3", false],
    [["10.0.0.0/8"], "010.1.2.3", false],
    [["0.0.0.0/0"], " 10.1.2.3", false],
    [["0.0.0.0/0"], "[::1]", false],
    [["0.0.0.0/0"], "10.1.2.3/32", false],
    [["0.0.0.0/0"], "127.1", false]
  ]
  for (const [allowed, client, expected] of table) {
    it(`${allowed.join(",")} ${expected ? "admits" : "refuses"} ${client || "(none)"}`, () => {
      assert.strictEqual(isAllowed(ranges(...allowed), client), expected)
    })
  }

  it("refuses what is not a range", () => {
    for (
      const text of [
        "10.0.0.0/33",
        "10.1.2.3/8",
        "banana",
        "1.2.3",
        "2001:db8::/129",
        "",
        // Host bits set: refused, not widened to the network.
        "2001:db8::1/32",
        "::ffff:10.0.0.0/8",
        // Leading zeros, in an octet or a prefix.
        "01.2.3.4",
        "10.0.0.0/08",
        "2001:db8::/032",
        "10.0.0.0/+8",
        "10.0.0.0/8/8",
        "10.0.0.0/",
        "/8",
        "10.0.0.0 /8",
        "[::1]",
        "[::1]/128",
        "fe80::1%eth0",
        "fe80::/10%eth0"
      ]
    ) {
      assert.isTrue(Result.isFailure(parseIpRange(text)), text)
    }
  })

  it("reads a range in its canonical form: an address is its /32 or /128, surrounding space ignored", () => {
    const cases: ReadonlyArray<readonly [string, string]> = [
      ["1.2.3.4", "1.2.3.4/32"],
      [" 1.2.3.4 ", "1.2.3.4/32"],
      ["\t10.0.0.0/8\n", "10.0.0.0/8"],
      ["0.0.0.0/0", "0.0.0.0/0"],
      ["2001:DB8::/32", "2001:db8::/32"],
      ["2001:0db8:0:0::1", "2001:db8::1/128"],
      ["::", "::/128"],
      ["::ffff:a00:0/104", "::ffff:10.0.0.0/104"]
    ]
    for (const [text, canonical] of cases) {
      const parsed = parseIpRange(text)
      assert.isTrue(Result.isSuccess(parsed), text)
      if (Result.isSuccess(parsed)) assert.strictEqual(IpNetwork.format(parsed.success), canonical, text)
    }
  })

  it("0.0.0.0/0 is \"any address\"; ::/0 is a range, holding IPv4 clients by their mapped form", () => {
    assert.isTrue(isAnyAddress(ranges("0.0.0.0/0")[0]!))
    assert.isFalse(isAnyAddress(ranges("::/0")[0]!))
    assert.isFalse(isAnyAddress(ranges("0.0.0.0/1")[0]!))
    assert.isTrue(isAllowed(ranges("::/0"), "8.8.8.8"))
    assert.isFalse(isAllowed(ranges("::/0"), "fe80::1%eth0"))
  })
})
