/**
 * The composing example (docs/composing.md) is a test: its suite runs here,
 * and the page shows the example's file as it is.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Fs from "node:fs"
import * as Path from "node:path"
import "../../examples/composing.ts"

const ROOT = Path.join(import.meta.dirname, "../..")
const read = (path: string) => Fs.readFileSync(Path.join(ROOT, path), "utf8")

describe("docs/composing.md", () => {
  it("shows examples/composing.ts verbatim, in under 60 lines", () => {
    const example = read("examples/composing.ts")
    assert.include(read("docs/composing.md"), "```ts\n" + example + "```\n")
    assert.isBelow(example.trimEnd().split("\n").length, 60)
  })
})
