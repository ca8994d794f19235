import { assert, describe, it } from "@effect/vitest"
import { setRecent } from "../../src/domain/RecentMap.ts"

describe("setRecent", () => {
  it("keeps at most the bound, dropping the entry set least recently", () => {
    const map = new Map<string, number>()
    setRecent(map, "a", 1, 2)
    setRecent(map, "b", 2, 2)
    // Setting "a" again makes it the most recent: "b" is the one dropped next.
    setRecent(map, "a", 3, 2)
    setRecent(map, "c", 4, 2)
    assert.deepStrictEqual([...map], [["a", 3], ["c", 4]])
  })
})
