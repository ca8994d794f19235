/**
 * The template of a fresh DATA_DIR's database: PGlite's initdb run once, at
 * install time (`npm ci` runs the package's postinstall:
 * `createDataDirProcess.ts --template`), under node_modules/.cache. A fresh
 * DATA_DIR gets a copy of it (about 40 MB, a tenth of a second) instead of
 * an initdb of its own (2–3 s, 540 MiB at its peak). It is made per PGlite
 * version, whose initdb output a later version may not open.
 */
import * as Fs from "node:fs"
import { createRequire } from "node:module"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

/** PGlite's installed version, from its package.json (which its `exports` do not list, so read beside its entry point). */
const pgliteVersion = (): string => {
  const entry = createRequire(import.meta.url).resolve("@electric-sql/pglite")
  const manifest: unknown = JSON.parse(Fs.readFileSync(Path.join(Path.dirname(entry), "..", "package.json"), "utf8"))
  const version = typeof manifest === "object" && manifest !== null && "version" in manifest ? manifest.version : undefined
  if (typeof version !== "string") throw new Error("@electric-sql/pglite's package.json has no version")
  return version
}

export const DATABASE_TEMPLATE = Path.join(
  fileURLToPath(new URL("../../../node_modules/.cache/mfg", import.meta.url)),
  `pgdata-template-pglite-${pgliteVersion()}`
)
