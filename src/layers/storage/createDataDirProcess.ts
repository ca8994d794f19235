/**
 * Creates the database of a fresh DATA_DIR (PGlite's initdb) in a process of
 * its own, started by `openEmbedded` (EmbeddedDatabase.ts) as
 * `node createDataDirProcess.ts <directory>`, and exits: 0 once the
 * database is created and closed, 1 with the reason on stderr.
 *
 * initdb copies PGlite's whole WebAssembly memory to restore it between
 * its steps, and that memory only grows: run in the process that then
 * serves, it left about 150 MiB more resident for the process's life and a
 * high-water mark four times the serving one (bench/README.md, "Where the
 * memory goes"). Here it is all given back when the process exits.
 */
import { PGlite } from "@electric-sql/pglite"
import { pgliteOptions } from "./PgliteSettings.ts"

const directory = process.argv[2]
if (directory === undefined) {
  process.stderr.write("usage: node createDataDirProcess.ts <directory>\n")
  process.exit(1)
}
try {
  const db = await PGlite.create(pgliteOptions(directory))
  await db.close()
  process.exit(0)
} catch (error) {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`)
  process.exit(1)
}
