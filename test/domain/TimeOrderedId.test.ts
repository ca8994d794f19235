import { describe, expect, it } from "@effect/vitest"
import { timeOrderedUuid } from "../../src/domain/TimeOrderedId.ts"

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

describe("timeOrderedUuid", () => {
  it("is a version 7 UUID whose first 48 bits are the time in milliseconds", () => {
    const before = Date.now()
    const id = timeOrderedUuid()
    const after = Date.now()
    expect(id).toMatch(V7)
    const time = parseInt(id.slice(0, 8) + id.slice(9, 13), 16)
    expect(time).toBeGreaterThanOrEqual(before)
    expect(time).toBeLessThanOrEqual(after)
  })

  it("sorts ids made in a later millisecond after earlier ones, as text, and never repeats", async () => {
    const first = Array.from({ length: 1000 }, timeOrderedUuid)
    await new Promise((resolve) => setTimeout(resolve, 5))
    const later = timeOrderedUuid()
    for (const id of first) expect(id < later).toBe(true)
    expect(new Set(first).size).toBe(first.length)
  })
})
