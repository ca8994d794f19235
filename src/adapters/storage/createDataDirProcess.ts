/**
 * Creates an embedded database (PGlite's initdb) in a process of its own and
 * exits: 0 once the database is created and closed, 1 with the reason on
 * stderr.
 *
 *   node createDataDirProcess.ts <directory>   a fresh DATA_DIR's database (openEmbedded, EmbeddedDatabase.ts)
 *   node createDataDirProcess.ts --template    the template fresh DATA_DIRs are copied from (npm's postinstall)
 *
 * initdb copies PGlite's whole WebAssembly memory to restore it between
 * its steps, so creating a database peaks at about 540 MiB: in its own
 * process that memory is given back when it exits, and made once at install
 * time it is not made while the service starts (bench/README.md, "Where the
 * memory goes").
 */
import { PGlite } from "@electric-sql/pglite"
import * as Fs from "node:fs"
import { DATABASE_TEMPLATE } from "./DatabaseTemplate.ts"
import { pgliteOptions } from "./PgliteSettings.ts"

const create = async (directory: string) => {
  const db = await PGlite.create(pgliteOptions(directory))
  await db.close()
}

const [argument] = process.argv.slice(2)
try {
  if (argument === undefined) throw new Error("usage: node createDataDirProcess.ts <directory> | --template")
  if (argument !== "--template") await create(argument)
  else if (!Fs.existsSync(DATABASE_TEMPLATE)) {
    // Made beside it, then renamed: an install cut short leaves no half-made template to copy.
    const making = `${DATABASE_TEMPLATE}.new`
    Fs.rmSync(making, { recursive: true, force: true })
    Fs.mkdirSync(making, { recursive: true, mode: 0o700 })
    await create(making)
    Fs.renameSync(making, DATABASE_TEMPLATE)
  }
  process.exit(0)
} catch (error) {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`)
  process.exit(1)
}
