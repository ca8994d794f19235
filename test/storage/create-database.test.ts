/**
 * A fresh DATA_DIR's database: copied from the install's template, or, with
 * no template, made by initdb in a process of its own; either way private to
 * the service's user and opened like any other, and a creation cut short
 * (a `pgdata.new` left behind) is made again rather than opened.
 */
import { Effect } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { DATABASE_TEMPLATE } from "../../src/adapters/storage/DatabaseTemplate.ts"
import { createDatabase, openEmbedded } from "../../src/adapters/storage/EmbeddedDatabase.ts"

const scratch = Fs.mkdtempSync(Path.join(Os.tmpdir(), "mfg-create-database-"))
afterAll(() => Fs.rmSync(scratch, { recursive: true, force: true }))

/** Every entry under `dir` that group or others may use, as `mode path`. */
const notPrivate = (dir: string): Array<string> =>
  Fs.readdirSync(dir, { recursive: true, withFileTypes: true }).flatMap((entry) => {
    const path = Path.join(entry.parentPath, entry.name)
    const mode = Fs.lstatSync(path).mode & 0o777
    return (mode & 0o077) === 0 ? [] : [`${mode.toString(8)} ${path}`]
  })

/** A fresh DATA_DIR whose database `createDatabase` makes from `template`; what a query answers once it is open. */
const createAndOpen = (name: string, template: string, leftover = false) =>
  Effect.runPromise(Effect.scoped(Effect.gen(function*() {
    const dataDir = Path.join(scratch, name)
    Fs.mkdirSync(dataDir, { mode: 0o700 })
    const pgdata = Path.join(dataDir, "pgdata")
    // A creation cut short: half a database in pgdata.new, which must not survive.
    if (leftover) Fs.mkdirSync(Path.join(`${pgdata}.new`, "base"), { recursive: true })
    yield* createDatabase(pgdata, template)
    const bridge = yield* openEmbedded(dataDir, { share: false, waitForLock: false })
    const answer = yield* Effect.promise(() => bridge.db.query<{ answer: number }>("SELECT 41 + 1 AS answer"))
    return { pgdata, answer: answer.rows[0]?.answer }
  })))

describe("a fresh DATA_DIR's database", () => {
  it("is copied from the install's template (npm's postinstall made it), private, and opens", async () => {
    expect(Fs.existsSync(Path.join(DATABASE_TEMPLATE, "PG_VERSION")), `the template ${DATABASE_TEMPLATE} (npm ci makes it)`).toBe(true)
    const { pgdata, answer } = await createAndOpen("from-template", DATABASE_TEMPLATE, true)
    expect(answer).toBe(42)
    expect(Fs.existsSync(`${pgdata}.new`)).toBe(false)
    expect(Fs.readdirSync(pgdata).length).toBeGreaterThan(10)
    expect(notPrivate(pgdata)).toEqual([])
  })

  it("without a template, is made by initdb in a process of its own, private, and opens", async () => {
    const { pgdata, answer } = await createAndOpen("without-template", Path.join(scratch, "no-template-here"), true)
    expect(answer).toBe(42)
    expect(Fs.existsSync(`${pgdata}.new`)).toBe(false)
    expect(Fs.readFileSync(Path.join(pgdata, "PG_VERSION"), "utf8").trim()).toMatch(/^\d+$/)
    expect(notPrivate(pgdata)).toEqual([])
  }, 60_000)
})
