/**
 * The two baselines of bench/auth-read.ts, each a bare `node:http` server
 * answering `GET /v1/customer/<id>` for one secret:
 *
 *   node bench/baselines.ts ceiling   authentication in memory, a fixed record
 *   node bench/baselines.ts pg-peer   per call: look the secret up, meter the
 *                                     call (autocommit INSERT), read the record
 *
 * Environment: PORT, HOST (127.0.0.1); for `ceiling` BENCH_SECRET_ID,
 * BENCH_SECRET_HASH (hex SHA-256 of the value), BENCH_APP_ID, BENCH_IP_RANGES
 * (comma-separated CIDRs) and BENCH_RECORD (JSON); for `pg-peer`
 * DATABASE_URL, whose `bench_secret`, `bench_meter` and `bench_record`
 * tables bench/auth-read.ts has created and filled.
 *
 * Logs "Listening on http://HOST:PORT" when ready; stops on SIGTERM, SIGINT
 * or when its stdin closes (the benchmark that started it is gone).
 */
import { randomUUID } from "node:crypto"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import pg from "pg"
import { hashMatches, ipAllowed, type Ipv4Range, parseRange, presentedSecret, sha256 } from "./auth.ts"

const NOT_AUTHORIZED = JSON.stringify({ code: 401, message: "Not Authorized" })
const DUMMY_HASH = sha256("no such secret")
const ROUTE_PREFIX = "/v1/customer/"

const required = (name: string): string => {
  const value = process.env[name]
  if (value === undefined || value === "") throw new Error(`${name} is required`)
  return value
}

const send = (response: ServerResponse, status: number, body: string, headers: Record<string, string> = {}) => {
  response.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(body), ...headers })
  response.end(body)
}

const notAuthorized = (response: ServerResponse) =>
  send(response, 401, NOT_AUTHORIZED, { "www-authenticate": "Bearer realm=\"v1\"", "cache-control": "no-store" })

/** The record id of `GET /v1/customer/<id>`, or undefined for any other request. */
const recordId = (request: IncomingMessage): string | undefined => {
  const url = request.url ?? ""
  if (request.method !== "GET" || !url.startsWith(ROUTE_PREFIX)) return undefined
  const end = url.indexOf("?")
  const id = decodeURIComponent(url.slice(ROUTE_PREFIX.length, end === -1 ? undefined : end))
  return id.length > 0 && id.length <= 100 && !id.includes("/") ? id : undefined
}

type Handler = (request: IncomingMessage, response: ServerResponse) => void

/** Authentication in memory, one fixed record: what a call costs with no storage at all. */
const ceiling = (): { readonly handler: Handler; readonly close: () => Promise<void> } => {
  const secrets = new Map<string, { readonly appId: string; readonly hash: Buffer; readonly ranges: ReadonlyArray<Ipv4Range> }>()
  secrets.set(required("BENCH_SECRET_ID"), {
    appId: required("BENCH_APP_ID"),
    hash: Buffer.from(required("BENCH_SECRET_HASH"), "hex"),
    ranges: required("BENCH_IP_RANGES").split(",").map(parseRange)
  })
  const record = JSON.parse(required("BENCH_RECORD")) as { readonly id: string }
  const records = new Map<string, unknown>([[record.id, record]])

  return {
    handler: (request, response) => {
      const id = recordId(request)
      if (id === undefined) return send(response, 404, JSON.stringify({ code: 404, message: "Not Found" }))
      const presented = presentedSecret(request)
      if (presented === undefined) return notAuthorized(response)
      const secret = secrets.get(presented.id)
      const matches = hashMatches(secret?.hash ?? DUMMY_HASH, presented.value)
      if (secret === undefined || !matches || !ipAllowed(secret.ranges, request.socket.remoteAddress)) {
        return notAuthorized(response)
      }
      const found = records.get(id)
      send(response, 200, found === undefined ? "" : JSON.stringify(found), { "x-request-id": randomUUID() })
    },
    close: async () => {}
  }
}

interface SecretRow {
  readonly app_id: string
  readonly secret_hash: string
  readonly ip_ranges: ReadonlyArray<string>
}

/** The service's database work per call, written directly on `pg`: lookup, durable meter row, record read. */
const pgPeer = (): { readonly handler: Handler; readonly close: () => Promise<void> } => {
  const pool = new pg.Pool({ connectionString: required("DATABASE_URL"), max: 20, application_name: "bench-pg-peer" })
  pool.on("error", (error) => console.error("pg pool:", error.message))

  const serve = async (request: IncomingMessage, response: ServerResponse) => {
    const id = recordId(request)
    if (id === undefined) return send(response, 404, JSON.stringify({ code: 404, message: "Not Found" }))
    const presented = presentedSecret(request)
    if (presented === undefined) return notAuthorized(response)
    const secrets = await pool.query<SecretRow>({
      name: "bench_secret_by_id",
      text: "SELECT app_id, secret_hash, ip_ranges FROM bench_secret WHERE id = $1",
      values: [presented.id]
    })
    const secret = secrets.rows[0]
    const matches = hashMatches(secret === undefined ? DUMMY_HASH : Buffer.from(secret.secret_hash, "hex"), presented.value)
    if (secret === undefined || !matches || !ipAllowed(secret.ip_ranges.map(parseRange), request.socket.remoteAddress)) {
      return notAuthorized(response)
    }
    const requestId = randomUUID()
    // Autocommit: the row is committed (durable, synchronous_commit) before the record is read.
    await pool.query({
      name: "bench_meter_insert",
      text: `INSERT INTO bench_meter (request_id, app_id, secret_id, operation, method, route, occurred_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      values: [requestId, secret.app_id, presented.id, "customer.get", "GET", "/customer/:id", new Date()]
    })
    const records = await pool.query<{ readonly data: unknown }>({
      name: "bench_record_by_id",
      text: "SELECT data FROM bench_record WHERE resource = $1 AND id = $2 AND app_id = $3",
      values: ["customer", id, secret.app_id]
    })
    const found = records.rows[0]
    send(response, 200, found === undefined ? "" : JSON.stringify(found.data), { "x-request-id": requestId })
  }

  return {
    handler: (request, response) => {
      serve(request, response).catch((error: unknown) => {
        console.error("pg-peer:", error instanceof Error ? error.message : error)
        if (!response.headersSent) send(response, 503, JSON.stringify({ code: 503, message: "Service Unavailable" }))
        else response.destroy()
      })
    },
    close: () => pool.end()
  }
}

const mode = process.argv[2]
const target = mode === "ceiling" ? ceiling() : mode === "pg-peer" ? pgPeer() : undefined
if (target === undefined) {
  console.error("usage: node bench/baselines.ts ceiling|pg-peer")
  process.exit(2)
}

const port = Number(required("PORT"))
const host = process.env["HOST"] ?? "127.0.0.1"
const server = createServer({ keepAliveTimeout: 60_000 }, target.handler)

let stopping = false
const stop = () => {
  if (stopping) return
  stopping = true
  server.close()
  server.closeAllConnections()
  target.close().then(
    () => process.exit(0),
    () => process.exit(1)
  )
}
process.on("SIGTERM", stop)
process.on("SIGINT", stop)
process.stdin.on("close", stop)
process.stdin.on("end", stop)
process.stdin.resume()

server.listen(port, host, () => {
  console.log(`Listening on http://${host}:${port}`)
})
