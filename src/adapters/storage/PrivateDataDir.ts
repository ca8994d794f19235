/**
 * The embedded store's files kept private to the service's OS user: DATA_DIR
 * and every directory in it 0700, every file 0600, whatever the umask, and a
 * DATA_DIR that others can write refused (docs/operations.md, Storage).
 */
import { NodeFS } from "@electric-sql/pglite/nodefs"
import { Effect, Predicate, Schema } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"

/** DATA_DIR (or a directory in it) is writable by its group or others, or cannot be made private. */
export class DataDirNotPrivate extends Schema.TaggedError<DataDirNotPrivate>()("DataDirNotPrivate", {
  message: Schema.String
}) {}

const GROUP_OR_OTHERS = 0o077
const WRITABLE_BY_GROUP_OR_OTHERS = 0o022

const modeText = (mode: number) => `0${(mode & 0o7777).toString(8).padStart(3, "0")}`

const isMissing = (error: unknown) => (error as NodeJS.ErrnoException).code === "ENOENT"

/**
 * The entries under `root` (not `root` itself) with their modes, without
 * following symbolic links (which are left alone). An entry that disappears
 * while we look (PGlite in another process removing a temporary file) is
 * skipped.
 */
const entriesUnder = (root: string): Array<{ readonly path: string; readonly stats: Fs.Stats }> => {
  const found: Array<{ readonly path: string; readonly stats: Fs.Stats }> = []
  const pending = [root]
  while (pending.length > 0) {
    const dir = pending.pop()!
    let names: Array<string>
    try {
      names = Fs.readdirSync(dir)
    } catch (error) {
      if (isMissing(error)) continue
      throw error
    }
    for (const name of names) {
      const path = Path.join(dir, name)
      let stats: Fs.Stats
      try {
        stats = Fs.lstatSync(path)
      } catch (error) {
        if (isMissing(error)) continue
        throw error
      }
      if (stats.isSymbolicLink()) continue
      found.push({ path, stats })
      if (stats.isDirectory()) pending.push(path)
    }
  }
  return found
}

const notWritableByOthers = (dataDir: string, dirs: ReadonlyArray<{ readonly path: string; readonly stats: Fs.Stats }>) => {
  if (dirs.length === 0) return
  const named = dirs.map(({ path, stats }) => `${path} (mode ${modeText(stats.mode)})`).join(", ")
  throw new DataDirNotPrivate({
    message: `DATA_DIR ${dataDir} is not private: ${named} ${dirs.length === 1 ? "is" : "are"} writable by group or ` +
      `others, who could have added, replaced or removed database files. Check its contents, then run ` +
      `\`chmod 700 ${dirs.map(({ path }) => path).join(" ")}\` and start again ` +
      `(every file in it is then made private at start).`
  })
}

/**
 * Makes DATA_DIR private to this process's OS user, creating it if missing:
 * DATA_DIR and every directory in it 0700, every file 0600 (the owner's bits
 * are kept, the group's and others' removed), whatever the umask and whatever
 * an older version left (0755 directories, 0644 and 0666 files). It refuses,
 * changing nothing, when DATA_DIR or a directory in it is writable by group or
 * others: they could have planted or swapped files, and tightening would hide
 * that. Symbolic links are not followed.
 *
 * It also sets this process's umask to 077, for good (the process never
 * changes it back), so that what it creates with Node's fs is private whatever
 * umask it was started with: the lock file, PGlite's own mkdir of `pgdata`,
 * the socket before its chmod, anything a later PGlite writes that way. The
 * files PGlite writes through Emscripten are kept private by `PrivateNodeFS`,
 * since Emscripten chmods past the umask. Nothing else in the process creates
 * files (it serves HTTP and sockets, logs to stdout, exports telemetry over
 * HTTP), so the umask changes nothing else; with DATABASE_URL this is never
 * called and the umask is left alone.
 */
export const makeDataDirPrivate = (dataDir: string): Effect.Effect<void, DataDirNotPrivate> =>
  Effect.try({
    try: () => {
      process.umask(0o077)
      const root = Path.resolve(dataDir)
      Fs.mkdirSync(root, { recursive: true, mode: 0o700 })
      const rootStats = Fs.statSync(root)
      if (!rootStats.isDirectory()) throw new Error(`${root} is not a directory`)
      // DATA_DIR first, before looking inside: writable by others, nothing in it can be trusted.
      if ((rootStats.mode & WRITABLE_BY_GROUP_OR_OTHERS) !== 0) notWritableByOthers(dataDir, [{ path: root, stats: rootStats }])
      const entries = entriesUnder(root)
      notWritableByOthers(
        dataDir,
        entries.filter(({ stats }) => stats.isDirectory() && (stats.mode & WRITABLE_BY_GROUP_OR_OTHERS) !== 0)
      )
      for (const { path, stats } of [{ path: root, stats: rootStats }, ...entries]) {
        if ((stats.mode & GROUP_OR_OTHERS) === 0) continue
        try {
          Fs.chmodSync(path, stats.mode & 0o700)
        } catch (error) {
          if (!isMissing(error)) throw error
        }
      }
    },
    catch: (error) =>
      error instanceof DataDirNotPrivate ? error : new DataDirNotPrivate({
        message: `DATA_DIR ${dataDir} cannot be made private (directories 0700, files 0600): ${String(error)}`
      })
  })

/** An Emscripten FS operation's attributes: `mode` is the one that matters here. */
type EmscriptenAttributes = { mode?: number | undefined }
type EmscriptenOps = Record<string, ((...args: Array<unknown>) => unknown) | undefined>

/** Emscripten's NODEFS, as far as it is used here: the operations of its nodes and of its open files. */
interface EmscriptenNodeFS {
  readonly node_ops: EmscriptenOps
  readonly stream_ops: EmscriptenOps
}

/** PGlite types its module's NODEFS by Emscripten's declarations, which it does not ship: the shape is checked here. */
const isEmscriptenNodeFS = (nodefs: unknown): nodefs is EmscriptenNodeFS =>
  Predicate.hasProperty(nodefs, "node_ops") && Predicate.isObject(nodefs.node_ops) &&
  Predicate.hasProperty(nodefs, "stream_ops") && Predicate.isObject(nodefs.stream_ops)

/**
 * PGlite's NodeFS, except that nothing it writes is readable, writable or
 * executable by group or others. The umask alone is not enough: Emscripten
 * (PGlite's runtime) chmods a file it creates to the mode the C code asked
 * for, and PGlite's first start unpacks initdb's files with their tar modes
 * (0644, 0666), both past the umask. So the host file system's operations that
 * give a mode (mknod, and setattr on a node or an open file, which become
 * Node's mkdirSync/writeFileSync and chmodSync/fchmodSync) get it without the
 * group's and others' bits.
 */
export class PrivateNodeFS extends NodeFS {
  override async init(...args: Parameters<NodeFS["init"]>): ReturnType<NodeFS["init"]> {
    const { emscriptenOpts } = await super.init(...args)
    return {
      emscriptenOpts: {
        ...emscriptenOpts,
        // After NodeFS's own (which mounts DATA_DIR/pgdata); every node of the mount shares these ops.
        preRun: [...(emscriptenOpts.preRun ?? []), (mod) => {
          const nodefs: unknown = mod.NODEFS
          if (!isEmscriptenNodeFS(nodefs)) throw new Error("PGlite's NODEFS has no node or stream operations: the data directory cannot be kept private")
          privateModes(nodefs.node_ops, "mknod", 2)
          privateModes(nodefs.node_ops, "setattr", 1)
          privateModes(nodefs.stream_ops, "setattr", 1)
        }]
      }
    }
  }
}

/** Wraps `ops[name]` so that its argument `at` (a mode, or attributes with a mode) has no group or other bits. */
const privateModes = (ops: EmscriptenOps, name: string, at: number) => {
  const original = ops[name]
  if (original === undefined) throw new Error(`PGlite's NODEFS has no ${name}: the data directory cannot be kept private`)
  ops[name] = (...args: Array<unknown>) => {
    const value = args[at]
    if (typeof value === "number") args[at] = value & ~GROUP_OR_OTHERS
    else if (typeof (value as EmscriptenAttributes | undefined)?.mode === "number") {
      args[at] = { ...(value as EmscriptenAttributes), mode: (value as { mode: number }).mode & ~GROUP_OR_OTHERS }
    }
    return original(...args)
  }
}
