/**
 * How a process runs PGlite, for its memory (bench/README.md, "Where the
 * memory goes"): the node flags of a process that runs it, and the Postgres
 * settings it starts with.
 */
import type { PGliteOptions } from "@electric-sql/pglite"
import { PGlite } from "@electric-sql/pglite"
import { PrivateNodeFS } from "./PrivateDataDir.ts"

/**
 * V8 flags of a process that runs PGlite (the database process, and the one
 * that creates a fresh DATA_DIR):
 *
 * - `--liftoff-only`: PGlite's Postgres stays on V8's baseline WebAssembly
 *   compiler. The optimizing compiler, when it takes up the hot functions,
 *   builds one of them (the SQL parser, 105 KB of code) in a 600 MB zone
 *   whose freed pages stay partly resident;
 * - `--max-semi-space-size=4`: the process's own JavaScript (the socket
 *   bridge) is small, and V8 would otherwise grow its young generation to
 *   64 MiB under load.
 */
export const PGLITE_PROCESS_FLAGS: ReadonlyArray<string> = ["--liftoff-only", "--max-semi-space-size=4"]

/**
 * Postgres settings that size PGlite's memory (its defaults are initdb's:
 * shared_buffers 128MB). PGlite's WebAssembly memory only grows, never
 * shrinks, and the buffer pool is touched as it is used, so shared_buffers
 * ends resident for the process's life: 16MB instead of 128MB keeps about
 * 110 MiB less (a database larger than the pool reads through the OS page
 * cache). maintenance_work_mem bounds what an index build (a migration)
 * grows the memory to for good.
 */
const MEMORY_SETTINGS: ReadonlyArray<string> = ["-c", "shared_buffers=16MB", "-c", "maintenance_work_mem=16MB"]

/** PGlite's options for the data directory `pgdata` (DATA_DIR/pgdata), private to the service's user. */
export const pgliteOptions = (pgdata: string): PGliteOptions => ({
  fs: new PrivateNodeFS(pgdata),
  startParams: [...PGlite.defaultStartParams, ...MEMORY_SETTINGS],
  initDbStartParams: [...MEMORY_SETTINGS]
})
