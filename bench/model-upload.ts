/**
 * Benchmark: the service's memory while it takes a 100 MiB model file
 * (`POST /v1/model-file`, streamed to it in 64 KiB pieces), and the time the
 * upload takes. The upload is read as a stream and written to the database
 * in 1 MiB chunks, so the service's peak RSS during it (of the process and
 * its children: embedded PGlite's database process) should grow by much less
 * than the file. Target: the growth of the peak stays under 2× the file
 * size. Prints the figures; exits non-zero when the target is missed or the
 * upload is not answered with the file's SHA-256.
 *
 *   node bench/model-upload.ts [--storage postgres|pglite] [--mib 100]
 */
import { createHash } from "node:crypto"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { parseArgs } from "node:util"
import { createBenchDatabase } from "./postgres.ts"
import { freePort, startServer } from "./servers.ts"
import { START_ENV, START_NODE_OPTIONS } from "./targets.ts"

const { values } = parseArgs({ options: { storage: { type: "string", default: "postgres" }, mib: { type: "string", default: "100" } } })
const storage = values.storage === "pglite" ? "pglite" : "postgres"
const size = Math.max(1, Number(values.mib)) * 1024 * 1024
const ADMIN_TOKEN = "bench-model-upload-admin-token"
const PIECE = 64 * 1024
const TARGET_RATIO = 2

/** A binary STL header and triangle count, then bytes enough to make `size` (their content is not read on upload). */
const piece = (index: number) => {
  const bytes = Buffer.alloc(PIECE, index % 251)
  if (index === 0) bytes.writeUInt32LE(Math.floor((size - 84) / 50), 80)
  return bytes
}
const pieces = Math.ceil(size / PIECE)
const hash = createHash("sha256")
for (let index = 0; index < pieces; index++) hash.update(piece(index).subarray(0, Math.min(PIECE, size - index * PIECE)))
const sha256 = hash.digest("hex")

const database = storage === "postgres" ? await createBenchDatabase("mfg_bench_upload") : undefined
const dataDir = storage === "pglite" ? Fs.mkdtempSync(Path.join(Os.tmpdir(), "bench-upload-")) : undefined
const port = await freePort()
const server = await startServer({
  name: `service (${storage})`,
  args: [...START_NODE_OPTIONS, "src/main.ts"],
  port,
  env: {
    ...START_ENV,
    PORT: String(port),
    ADMIN_TOKEN,
    REQUEST_LOG: "false",
    RATE_LIMIT: "off",
    MODEL_UPLOAD_MAX_BYTES: String(size + 1024),
    ...(database === undefined ? { DATA_DIR: dataDir! } : { DATABASE_URL: database.url })
  },
  unset: database === undefined ? ["DATABASE_URL"] : [],
  readyPath: "/ready"
})
try {
  const created = await fetch(`${server.baseUrl}/api/v1/secret`, {
    method: "POST",
    headers: { "x-admin-token": ADMIN_TOKEN, "content-type": "application/json" },
    body: JSON.stringify({ appId: "bench-upload", ipAddresses: ["127.0.0.1/32"] })
  })
  const { value: secret } = (await created.json()) as { value: string }
  const idle = server.rssMiB()
  const resettable = server.resetPeakRss()
  let index = 0
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (index >= pieces) return controller.close()
      controller.enqueue(piece(index).subarray(0, Math.min(PIECE, size - index * PIECE)))
      index++
    }
  })
  const startedAt = performance.now()
  const answer = await fetch(`${server.baseUrl}/v1/model-file?fileName=big.stl`, {
    method: "POST",
    headers: { authorization: secret, "content-type": "model/stl", "content-length": String(size) },
    body,
    duplex: "half"
  } as RequestInit)
  const record = (await answer.json()) as { sha256?: string; size?: number }
  const seconds = (performance.now() - startedAt) / 1000
  const peak = server.peakRssMiB()
  const fileMiB = size / 1024 / 1024
  if (answer.status !== 200 || record.sha256 !== sha256 || record.size !== size) {
    throw new Error(`the upload answered ${answer.status} ${JSON.stringify(record)}`)
  }
  if (idle === undefined || peak === undefined) throw new Error("no RSS figures (Linux /proc needed)")
  const growth = peak - idle
  console.log(`storage ${storage}: ${fileMiB.toFixed(0)} MiB uploaded in ${seconds.toFixed(2)} s (${(fileMiB / seconds).toFixed(0)} MiB/s)`)
  console.log(
    `service RSS idle ${idle.toFixed(0)} MiB, peak during the upload ${peak.toFixed(0)} MiB${
      resettable ? "" : " (peak since start: the kernel did not allow a reset)"
    }`
  )
  console.log(`peak growth ${growth.toFixed(0)} MiB = ${(growth / fileMiB).toFixed(2)}x the file (target < ${TARGET_RATIO}x)`)
  if (growth >= TARGET_RATIO * fileMiB) process.exitCode = 1
} finally {
  await server.stop()
  await database?.drop()
  if (dataDir !== undefined) Fs.rmSync(dataDir, { recursive: true, force: true })
}
