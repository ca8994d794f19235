/**
 * Where the service's memory goes (bench/README.md, "Where the memory goes").
 *
 *   node bench/memory.ts [--storage postgres|pglite] [--scenarios read,mcp,part] [--connections 32]
 *                        [--seconds 15] [--warmup 3] [--idle 10] [--inspect] [--snapshot] [--allocations] [--promoted]
 *                        [--node-option <flag>]... [--env NAME=value]...
 *
 * Starts the service (and, for `part`, the fixture host) and reads, per
 * process (the server and, on PGlite, its database process):
 *
 * - start-up: the high-water mark (VmHWM) from the start to /ready;
 * - idle: the RSS after --idle seconds without calls;
 * - each scenario (bench/scenarios.ts, the service's own targets): --seconds
 *   of load at --connections after --warmup seconds unmeasured: req/s, p50,
 *   p99, and each process's peak RSS (VmHWM, reset first);
 * - after the load, and idle again.
 *
 * Each sample says where the resident memory is (/proc/<pid>/smaps): the
 * node binary and libraries (files), executable anonymous memory (JIT and
 * WebAssembly code), malloc's main arena ([heap]), and the rest (V8's heap,
 * other malloc arenas, WebAssembly memory, thread stacks). With --inspect
 * the processes run with `--inspect=127.0.0.1:0` (through NODE_OPTIONS, so
 * the database process too) and every sample adds what V8 says: the JS
 * heap by space (committed / used), external and ArrayBuffer memory,
 * WebAssembly memories, and the idle sample is taken again after a full GC
 * (what of the RSS was garbage). --snapshot (implies --inspect) writes a
 * heap snapshot of each process after the load to bench/results/heap/ and
 * prints its largest constructors and largest objects with what holds them.
 * --allocations (implies --inspect) samples the server's allocations during
 * each measured load (bench/allocation-profile.ts: dead objects included)
 * and prints the bytes allocated per request, by area, by allocating
 * function and by the nearest frame of the service's own code; --promoted
 * (implies --allocations) counts only what survived a scavenge, the objects
 * that bring the next full collection closer.
 * The service runs as `npm start` runs it (bench/targets.ts, START_ENV and
 * START_NODE_OPTIONS); --node-option adds a flag to the server's node after
 * those (repeatable; V8 takes the last of a flag given twice), e.g.
 * `--node-option=--max-semi-space-size=8`, and --env sets a variable of the
 * service's processes, e.g. `--env MALLOC_ARENA_MAX=` to compare without
 * npm start's.
 */
import { createWriteStream, mkdirSync, readFileSync } from "node:fs"
import { loadavg } from "node:os"
import * as Path from "node:path"
import { type AllocationSummary, sampleAllocations } from "./allocation-profile.ts"
import { summarizeSnapshot } from "./heap-snapshot.ts"
import { connectInspector, type Inspector, inspectorUrls } from "./inspector.ts"
import { type Measurement, type RequestSpec, runLoad } from "./load.ts"
import { listOf, parseFlags, positiveNumber, usageError } from "./options.ts"
import { type BenchDatabase, createBenchDatabase } from "./postgres.ts"
import { buildScenarios, checkScenario, type PreparedService, prepareService, type Target } from "./scenarios.ts"
import { freePort, processTree, readStatusMiB, resetPeakRss, type Server, startServer } from "./servers.ts"
import { fixed, renderTable, thousands } from "./stats.ts"
import { BenchmarkInvalid, cleanupOnExit, startService, type Storage } from "./targets.ts"

const SCENARIOS = ["read", "mcp", "part"] as const
const USAGE = "usage: node bench/memory.ts [--storage postgres|pglite] [--scenarios read,mcp,part] [--connections 32] " +
  "[--seconds 15] [--warmup 3] [--idle 10] [--inspect] [--snapshot] [--allocations] [--promoted] [--node-option <flag>]... [--env NAME=value]..."

const flags = parseFlags({
  storage: { type: "string", default: "postgres" },
  scenarios: { type: "string", default: SCENARIOS.join(",") },
  connections: { type: "string", default: "32" },
  seconds: { type: "string", default: "15" },
  warmup: { type: "string", default: "3" },
  idle: { type: "string", default: "10" },
  inspect: { type: "boolean", default: false },
  snapshot: { type: "boolean", default: false },
  allocations: { type: "boolean", default: false },
  promoted: { type: "boolean", default: false },
  "node-option": { type: "string", multiple: true, default: [] },
  env: { type: "string", multiple: true, default: [] }
}, USAGE)
if (flags.storage !== "postgres" && flags.storage !== "pglite") usageError("--storage must be postgres or pglite", USAGE)
const storage = flags.storage as Storage
const scenarioIds = listOf("scenarios", flags.scenarios, SCENARIOS, USAGE)
const connections = positiveNumber("connections", flags.connections, true, USAGE)
const seconds = positiveNumber("seconds", flags.seconds, false, USAGE)
const warmup = positiveNumber("warmup", flags.warmup, false, USAGE)
const idleSeconds = positiveNumber("idle", flags.idle, false, USAGE)
const sampleAllocationsToo = flags.allocations || flags.promoted
const inspect = flags.inspect || flags.snapshot || sampleAllocationsToo
const extraEnv = Object.fromEntries(flags.env.map((assignment) => {
  const at = assignment.indexOf("=")
  if (at < 1) usageError(`--env takes NAME=value, not ${JSON.stringify(assignment)}`, USAGE)
  return [assignment.slice(0, at), assignment.slice(at + 1)]
}))
const HEAP_DIR = Path.join(import.meta.dirname, "results", "heap")
const BENCH_DATABASE = "mfg_bench_memory"

const MiB = 1024 * 1024
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

// ---------------------------------------------------------------- what a process holds

/** Resident MiB by kind of mapping (/proc/<pid>/smaps). */
interface Resident {
  readonly rss: number
  readonly files: number
  readonly code: number
  readonly mallocHeap: number
  readonly anonymous: number
}

const readResident = (pid: number): Resident | undefined => {
  let text: string
  try {
    text = readFileSync(`/proc/${pid}/smaps`, "utf8")
  } catch {
    return undefined
  }
  const totals = { rss: 0, files: 0, code: 0, mallocHeap: 0, anonymous: 0 }
  let kind: keyof typeof totals = "anonymous"
  for (const line of text.split("\n")) {
    const mapping = /^[0-9a-f]+-[0-9a-f]+ (\S+) \S+ \S+ \S+\s*(.*)$/.exec(line)
    if (mapping !== null) {
      const [, perms = "", path = ""] = mapping
      kind = path.startsWith("/") ? "files" : path === "[heap]" ? "mallocHeap" : perms.includes("x") ? "code" : "anonymous"
      continue
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line)
    if (rss !== null) {
      const mib = Number(rss[1]) / 1024
      totals[kind] += mib
      totals.rss += mib
    }
  }
  return totals
}

const threadsOf = (pid: number) => {
  try {
    return Number(/^Threads:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? Number.NaN)
  } catch {
    return Number.NaN
  }
}

/** What V8 says about its heap, in MiB: [committed, used] per space. */
interface JsHeap {
  readonly pid: number
  readonly heapTotal: number
  readonly heapUsed: number
  readonly external: number
  readonly arrayBuffers: number
  readonly spaces: Readonly<Record<string, readonly [number, number]>>
  readonly bytecode: number
  readonly code: number
  readonly scriptSource: number
  readonly malloced: number
  readonly wasmMemories: ReadonlyArray<number>
}

const JS_HEAP = `(() => {
  const v8 = process.getBuiltinModule("v8")
  const mib = (bytes) => bytes / ${MiB}
  const usage = process.memoryUsage()
  const codeStats = v8.getHeapCodeStatistics()
  return {
    pid: process.pid,
    heapTotal: mib(usage.heapTotal), heapUsed: mib(usage.heapUsed), external: mib(usage.external), arrayBuffers: mib(usage.arrayBuffers),
    spaces: Object.fromEntries(v8.getHeapSpaceStatistics().map((space) => [space.space_name, [mib(space.space_size), mib(space.space_used_size)]])),
    bytecode: mib(codeStats.bytecode_and_metadata_size), code: mib(codeStats.code_and_metadata_size),
    scriptSource: mib(codeStats.external_script_source_size), malloced: mib(v8.getHeapStatistics().malloced_memory)
  }
})()`

/** Every live WebAssembly.Memory's size in MiB (PGlite's Postgres runs in one). */
const wasmMemories = async (inspector: Inspector): Promise<ReadonlyArray<number>> => {
  const prototype = await inspector.send<{ readonly result: { readonly objectId: string } }>("Runtime.evaluate", {
    expression: "WebAssembly.Memory.prototype"
  })
  const found = await inspector.send<{ readonly objects: { readonly objectId: string } }>("Runtime.queryObjects", {
    prototypeObjectId: prototype.result.objectId
  })
  const sizes = await inspector.send<{ readonly result: { readonly value: ReadonlyArray<number> } }>("Runtime.callFunctionOn", {
    objectId: found.objects.objectId,
    functionDeclaration: `function() { return this.map((memory) => memory.buffer.byteLength / ${MiB}) }`,
    returnByValue: true
  })
  return sizes.result.value
}

const readJsHeap = async (inspector: Inspector): Promise<JsHeap> => ({
  ...(await inspector.evaluate<Omit<JsHeap, "wasmMemories">>(JS_HEAP)),
  wasmMemories: await wasmMemories(inspector)
})

// ---------------------------------------------------------------- samples

interface ProcessSample {
  readonly process: string
  readonly pid: number
  readonly resident: Resident | undefined
  readonly threads: number
  /** The peak since the last reset (start-up, or the load). */
  readonly peak: number | undefined
  readonly js: JsHeap | undefined
}

interface Sample {
  readonly phase: string
  readonly processes: ReadonlyArray<ProcessSample>
}

/** The server's process tree: the server first, then its database process (PGlite). */
const roleOf = (index: number) => (index === 0 ? "server" : "database process")

let inspectors = new Map<number, Inspector>()

/** Connects to every process's inspector once its URL is in the output (each process prints one). */
const connectAll = async (server: Server) => {
  const expected = processTree(server.pid).length
  const deadline = Date.now() + 10_000
  let urls = inspectorUrls(server.output())
  while (urls.length < expected && Date.now() < deadline) {
    await sleep(100)
    urls = inspectorUrls(server.output())
  }
  const connected = new Map<number, Inspector>()
  for (const url of urls) {
    const inspector = await connectInspector(url)
    connected.set(await inspector.evaluate<number>("process.pid"), inspector)
  }
  inspectors = connected
}

const sample = async (phase: string, server: Server): Promise<Sample> => {
  const processes: Array<ProcessSample> = []
  for (const [index, pid] of processTree(server.pid).entries()) {
    const inspector = inspectors.get(pid)
    processes.push({
      process: roleOf(index),
      pid,
      resident: readResident(pid),
      threads: threadsOf(pid),
      peak: readStatusMiB(pid, "VmHWM"),
      js: inspector === undefined ? undefined : await readJsHeap(inspector)
    })
  }
  return { phase, processes }
}

const collectGarbage = async () => {
  for (const inspector of inspectors.values()) await inspector.send("HeapProfiler.collectGarbage")
}

/** Writes a heap snapshot of `pid` to bench/results/heap/ and returns the file. */
const writeSnapshot = async (pid: number, label: string): Promise<string | undefined> => {
  const inspector = inspectors.get(pid)
  if (inspector === undefined) return undefined
  mkdirSync(HEAP_DIR, { recursive: true })
  const file = Path.join(HEAP_DIR, `${label}.${storage}.${pid}.heapsnapshot`)
  const out = createWriteStream(file)
  const stop = inspector.on("HeapProfiler.addHeapSnapshotChunk", (params: { readonly chunk: string }) => out.write(params.chunk))
  await inspector.send("HeapProfiler.takeHeapSnapshot", { reportProgress: false })
  stop()
  await new Promise<void>((resolve) => out.end(resolve))
  return file
}

// ---------------------------------------------------------------- output

const mib = (value: number | undefined) => fixed(value, 0)

const residentTable = (samples: ReadonlyArray<Sample>) =>
  renderTable(
    ["phase", "process", "RSS MiB", "peak MiB", "threads", "files", "code", "[heap]", "anonymous"],
    samples.flatMap((entry) =>
      entry.processes.map((one) => [
        entry.phase,
        one.process,
        mib(one.resident?.rss),
        mib(one.peak),
        String(one.threads),
        mib(one.resident?.files),
        mib(one.resident?.code),
        mib(one.resident?.mallocHeap),
        mib(one.resident?.anonymous)
      ])
    ),
    2
  )

const space = (js: JsHeap, name: string) => {
  const [committed = 0, used = 0] = js.spaces[name] ?? []
  return `${fixed(committed, 0)}/${fixed(used, 0)}`
}

const spaceSum = (js: JsHeap, names: ReadonlyArray<string>) => {
  const [committed, used] = names.reduce(([c, u], name) => [c + (js.spaces[name]?.[0] ?? 0), u + (js.spaces[name]?.[1] ?? 0)], [0, 0])
  return `${fixed(committed, 0)}/${fixed(used, 0)}`
}

const jsTable = (samples: ReadonlyArray<Sample>) =>
  renderTable(
    [
      "phase",
      "process",
      "heap total/used",
      "new",
      "old",
      "code+trusted",
      "large objects",
      "external",
      "ArrayBuffers",
      "malloced",
      "bytecode",
      "code",
      "sources",
      "WebAssembly memory"
    ],
    samples.flatMap((entry) =>
      entry.processes.flatMap((one) => {
        const js = one.js
        if (js === undefined) return []
        return [[
          entry.phase,
          one.process,
          `${fixed(js.heapTotal, 0)}/${fixed(js.heapUsed, 0)}`,
          space(js, "new_space"),
          space(js, "old_space"),
          spaceSum(js, ["code_space", "trusted_space", "code_large_object_space", "trusted_large_object_space"]),
          spaceSum(js, ["large_object_space", "new_large_object_space"]),
          mib(js.external),
          mib(js.arrayBuffers),
          mib(js.malloced),
          fixed(js.bytecode, 1),
          fixed(js.code, 1),
          fixed(js.scriptSource, 1),
          js.wasmMemories.length === 0 ? "-" : js.wasmMemories.map((size) => fixed(size, 0)).join(" + ")
        ]]
      })
    ),
    2
  )

interface LoadRow {
  readonly scenario: string
  readonly target: string
  readonly measurement: Measurement
  readonly peaks: ReadonlyArray<number | undefined>
  readonly allocations: AllocationSummary | undefined
}

const loadTable = (rows: ReadonlyArray<LoadRow>) =>
  renderTable(
    ["scenario", "target", "conns", "req/s", "p50 ms", "p99 ms", "errors", "CPU us/req", "peak RSS MiB (server + database process)"],
    rows.map((row) => [
      row.scenario,
      row.target,
      String(connections),
      thousands(row.measurement.requestsPerSecond),
      fixed(row.measurement.p50, 2),
      fixed(row.measurement.p99, 2),
      String(row.measurement.errors),
      fixed(row.measurement.cpuMicros, 0),
      row.peaks.map(mib).join(" + ")
    ]),
    2
  )

const ALLOCATION_SITES = 25

const printAllocations = (row: LoadRow, summary: AllocationSummary) => {
  const perRequest = (bytes: number) => bytes / row.measurement.responses / 1024
  console.log(
    `\n${flags.promoted ? "promoted (survived a scavenge)" : "allocated"} by the server under ${row.scenario} (${row.target}): ${
      fixed(perRequest(summary.totalBytes), 1)
    } KB per request ` +
      `(${thousands(row.measurement.responses)} responses)`
  )
  for (
    const [title, sites] of [
      ["by area", summary.byArea],
      ["by allocating function", summary.bySelf],
      ["by the nearest frame of src/", summary.bySourceFrame]
    ] as const
  ) {
    console.log(`\n${title}, KB per request\n`)
    console.log(renderTable(
      ["KB/req", "share", "site"],
      sites.slice(0, ALLOCATION_SITES).map((site) => [
        fixed(perRequest(site.bytes), 2),
        `${fixed((site.bytes / summary.totalBytes) * 100, 1)} %`,
        site.site
      ])
    ))
  }
}

// ---------------------------------------------------------------- run

let database: BenchDatabase | undefined
const { cleanup, interrupted } = cleanupOnExit(BENCH_DATABASE, () => database)

const loadTargets = (prepared: PreparedService, fixtureHost: Server | undefined): ReadonlyArray<{ id: string; target: Target }> => {
  const targets: Array<{ id: string; target: Target }> = []
  for (const id of scenarioIds) {
    if (id === "read") {
      const path = `/v1/customer/${encodeURIComponent(prepared.customer.id)}`
      const request: RequestSpec = { method: "GET", path, headers: { authorization: `Bearer ${prepared.secret}` } }
      const needle = `"id":"${prepared.customer.id}"`
      targets.push({
        id,
        target: {
          key: "service",
          label: "service",
          server: prepared.server,
          requests: [request],
          expectedStatus: 200,
          verifyBody: (body) => body.includes(needle)
        }
      })
      continue
    }
    const [scenario] = buildScenarios([id], { service: prepared, ...(fixtureHost === undefined ? {} : { fixtureHost }) })
    for (const target of scenario!.targets) targets.push({ id, target })
  }
  return targets
}

const main = async () => {
  const [loadBefore = 0] = loadavg()
  console.log(
    `bench memory: storage ${storage}, ${scenarioIds.join(", ")} at ${connections} connections, ${seconds} s each` +
      (inspect ? ", inspector on" : "") + (flags["node-option"].length > 0 ? `, server node options ${flags["node-option"].join(" ")}` : "") +
      (flags.env.length > 0 ? `, environment ${flags.env.join(" ")}` : "")
  )
  console.log(`load average before: ${fixed(loadBefore, 2)}${loadBefore > 1 ? "  (WARNING: the machine is busy; req/s will be noisy)" : ""}`)
  database = await createBenchDatabase(BENCH_DATABASE)
  const fixtureHost = scenarioIds.includes("part")
    ? await freePort().then((port) => startServer({ name: "fixture host", args: ["bench/fixture-host.ts"], port, env: { PORT: String(port) } }))
    : undefined
  const server = await startService({
    name: `service (${storage})`,
    storage,
    databaseUrl: database.url,
    nodeOptions: flags["node-option"],
    env: {
      MODEL_FETCH_ALLOW_PRIVATE: "true",
      ...extraEnv,
      ...(inspect ? { NODE_OPTIONS: [process.env["NODE_OPTIONS"] ?? "", "--inspect=127.0.0.1:0"].join(" ").trim() } : {})
    }
  })
  const samples: Array<Sample> = []
  // Before anything else touches it: the peak of the start itself.
  samples.push({
    phase: "start-up",
    processes: processTree(server.pid).map((pid, index) => ({
      process: roleOf(index),
      pid,
      resident: readResident(pid),
      threads: threadsOf(pid),
      peak: readStatusMiB(pid, "VmHWM"),
      js: undefined
    }))
  })
  if (inspect) await connectAll(server)
  const prepared = await prepareService(server)
  const targets = loadTargets(prepared, fixtureHost)
  for (const id of new Set(targets.map((entry) => entry.id))) {
    const [scenario] = id === "read" ? [] : buildScenarios([id as "mcp" | "part"], { service: prepared, ...(fixtureHost === undefined ? {} : { fixtureHost }) })
    if (scenario !== undefined) await checkScenario(scenario)
  }

  for (const pid of processTree(server.pid)) resetPeakRss(pid)
  await sleep(idleSeconds * 1000)
  samples.push(await sample("idle", server))
  if (inspect) {
    await collectGarbage()
    await sleep(500)
    samples.push(await sample("idle, after a full GC", server))
  }

  const snapshots: Array<{ readonly when: string; readonly process: string; readonly file: string }> = []
  const rows: Array<LoadRow> = []
  for (const { id, target } of targets) {
    if (interrupted()) return
    const spec = { ...target, connections, database: BENCH_DATABASE }
    await runLoad({ ...spec, seconds: warmup, mustComplete: false })
    let during: Promise<Sample> | undefined
    let duringSnapshot: Promise<string | undefined> | undefined
    const timer = inspect
      ? setTimeout(() => {
        during = sample(`${id}: under load`, server)
        if (flags.snapshot) duringSnapshot = during.then(() => writeSnapshot(server.pid, `server-under-${id}-load`))
      }, seconds * 800)
      : undefined
    const serverInspector = sampleAllocationsToo ? inspectors.get(server.pid) : undefined
    const stopSampling = serverInspector === undefined ? undefined : await sampleAllocations(serverInspector, flags.promoted)
    const measurement = await runLoad({ ...spec, seconds })
    const allocations = await stopSampling?.()
    clearTimeout(timer)
    const peaks = processTree(server.pid).map((pid) => readStatusMiB(pid, "VmHWM"))
    rows.push({ scenario: id, target: target.label, measurement, peaks, allocations })
    if (during !== undefined) samples.push({ ...(await during) })
    const underLoad = await duringSnapshot
    if (underLoad !== undefined) snapshots.push({ when: `under the ${id} load`, process: "server", file: underLoad })
    samples.push(await sample(`${id}: just after`, server))
    console.log(
      `${id.padEnd(5)} ${target.label.padEnd(30)} ${thousands(measurement.requestsPerSecond).padStart(7)} req/s  ` +
        `p99 ${fixed(measurement.p99, 2)} ms  peak ${peaks.map(mib).join(" + ")} MiB` +
        (measurement.errors > 0 ? `  ERRORS: ${measurement.errorDetail}` : "")
    )
  }

  for (const pid of processTree(server.pid)) resetPeakRss(pid)
  await sleep(idleSeconds * 1000)
  samples.push(await sample("idle again", server))

  if (flags.snapshot) {
    for (const [index, pid] of processTree(server.pid).entries()) {
      const file = await writeSnapshot(pid, roleOf(index).replace(/\s+/g, "-"))
      if (file !== undefined) snapshots.push({ when: "after the loads", process: roleOf(index), file })
    }
  }

  console.log(`\nload average after: ${fixed(loadavg()[0], 2)}\n`)
  console.log(loadTable(rows))
  console.log(`\nresident memory, MiB (peak: since the start for start-up, else since the phase began)\n`)
  console.log(residentTable(samples))
  if (inspect) {
    console.log(`\nV8, MiB (committed/used)\n`)
    console.log(jsTable(samples))
  }
  for (const row of rows) if (row.allocations !== undefined) printAllocations(row, row.allocations)
  for (const { when, process: name, file } of snapshots) {
    const summary = summarizeSnapshot(file)
    console.log(
      `\nheap snapshot of the ${name} ${when} (${file}): ${fixed(summary.totalBytes / MiB, 1)} MiB in ` +
        `${thousands(summary.objects)} objects\n`
    )
    console.log(renderTable(
      ["constructor or kind", "count", "self MiB", "share"],
      summary.groups.map((group) => [
        group.name,
        thousands(group.count),
        fixed(group.selfBytes / MiB, 2),
        `${fixed((group.selfBytes / summary.totalBytes) * 100, 1)} %`
      ])
    ))
    console.log(`\nlargest objects and what holds them:`)
    for (const held of summary.largest) console.log(`  ${fixed(held.selfBytes / MiB, 2)} MiB ${held.name}  ← ${held.path.join("  ← ")}`)
  }
  if (rows.some((row) => row.measurement.errors > 0)) process.exitCode = 1
}

try {
  await main()
} catch (error) {
  console.error(`\nBENCHMARK FAILED: ${error instanceof Error ? error.message : String(error)}`)
  if (!(error instanceof BenchmarkInvalid) && error instanceof Error && error.stack !== undefined) console.error(error.stack)
  process.exitCode = 1
} finally {
  for (const inspector of inspectors.values()) inspector.close()
  if (!interrupted()) await cleanup()
}
