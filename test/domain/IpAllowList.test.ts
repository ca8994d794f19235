import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"
import { isAllowed, parseIpRange } from "../../src/domain/IpAllowList.ts"

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
    [["10.0.0.0/8"], "", false]
  ]
  for (const [allowed, client, expected] of table) {
    it(`${allowed.join(",")} ${expected ? "admits" : "refuses"} ${client || "(none)"}`, () => {
      assert.strictEqual(isAllowed(ranges(...allowed), client), expected)
    })
  }

  it("refuses what is not a range", () => {
    for (const text of ["10.0.0.0/33", "10.1.2.3/8", "banana", "1.2.3", "2001:db8::/129", ""]) {
      assert.isTrue(Result.isFailure(parseIpRange(text)), text)
    }
  })
})
