/**
 * The operations guide's configuration table is the settings' definitions:
 * a variable added, or a default or range changed, in code without
 * `npm run docs:settings` fails here.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Fs from "node:fs"
import { OPERATIONS_GUIDE, withCurrentTable } from "../../scripts/settings-table.ts"
import { ALL_SETTINGS } from "../../src/services/Settings.ts"

describe("docs/operations.md configuration table", () => {
  it("is the one the settings' definitions make (npm run docs:settings)", () => {
    const guide = Fs.readFileSync(OPERATIONS_GUIDE, "utf8")
    assert.strictEqual(guide, withCurrentTable(guide), "run `npm run docs:settings`")
  })

  it("lists every variable the architecture names", () => {
    const names = ALL_SETTINGS.map((setting) => setting.name)
    for (const name of ["PORT", "HOST", "DATA_DIR", "DATABASE_URL", "DATABASE_CONNECT_TIMEOUT", "MAX_BODY_BYTES", "RATE_LIMIT", "REDIS_URL", "CORS_ORIGINS"]) {
      assert.include(names, name)
    }
    assert.strictEqual(new Set(names).size, names.length, "each variable once")
  })
})
