/**
 * One measurement: autocannon (in this process) sends requests over keep-alive
 * connections for a while; the result counts what came back as expected and
 * what did not, with the latency percentiles of every response and the
 * measured server's CPU time and peak RSS over the run.
 */
import autocannon, { type AutocannonRequest } from "autocannon"
import { postgresCpuBetween, postgresCpuSnapshot, type Server } from "./servers.ts"
import { percentile } from "./stats.ts"

export interface RequestSpec {
  readonly method: "GET" | "POST" | "PUT" | "DELETE"
  /** Path and query, from the server's base URL. */
  readonly path: string
  readonly headers: Readonly<Record<string, string>>
  readonly body?: string
}

export interface LoadSpec {
  /** The process under load: its CPU time and RSS are measured. */
  readonly server: Server
  /** Sent in turn by every connection (one request: always that one). */
  readonly requests: ReadonlyArray<RequestSpec>
  /** The status every response must have (200 for a read, 401 for the refusals). */
  readonly expectedStatus: number
  /** Whether a response with the expected status has the expected body. */
  readonly verifyBody?: (body: string) => boolean
  readonly connections: number
  readonly seconds: number
  /**
   * Whether a run without a single completed response is an error (a
   * measurement); a short warm-up of a slow call may see none.
   */
  readonly mustComplete?: boolean
  /** The PostgreSQL database whose backends serving `server` have their CPU time measured too. */
  readonly database?: string
}

export interface Measurement {
  /** Completed responses (whatever their status) per second. */
  readonly requestsPerSecond: number
  /** Milliseconds, over every response. */
  readonly p50: number
  readonly p99: number
  readonly responses: number
  /** Responses with the expected status and body. */
  readonly expected: number
  /** Unexpected statuses, wrong bodies, socket errors and timeouts. */
  readonly errors: number
  /** What the errors were ("" when none). */
  readonly errorDetail: string
  /** The server's CPU time (user + system, all threads) per response, in microseconds. */
  readonly cpuMicros: number
  /** CPU time of the PostgreSQL backends of `database` serving `server`, per response, in microseconds. */
  readonly postgresCpuMicros: number
  /** The server's peak resident set size during the run (MiB). */
  readonly peakRssMiB: number | undefined
}

const RSS_POLL_MS = 100

/** Samples the server's RSS during a run: its VmHWM, reset first, and polled VmRSS as a fallback. */
const watchRss = (server: Server) => {
  const reset = server.resetPeakRss()
  let polled = server.rssMiB() ?? 0
  const timer = setInterval(() => {
    polled = Math.max(polled, server.rssMiB() ?? 0)
  }, RSS_POLL_MS)
  return (): number | undefined => {
    clearInterval(timer)
    const peak = Math.max(polled, server.rssMiB() ?? 0, reset ? server.peakRssMiB() ?? 0 : 0)
    return peak > 0 ? peak : undefined
  }
}

export const runLoad = async (spec: LoadSpec): Promise<Measurement> => {
  const latencies: Array<number> = []
  const unexpected = new Map<string, number>()
  let expected = 0
  let wrongBodies = 0
  const onResponse = (status: number, body: string) => {
    if (status !== spec.expectedStatus) {
      unexpected.set(String(status), (unexpected.get(String(status)) ?? 0) + 1)
    } else if (spec.verifyBody !== undefined && !spec.verifyBody(body)) {
      wrongBodies += 1
    } else {
      expected += 1
    }
  }
  // Fresh objects per run: autocannon keeps its built request on them.
  const requests: Array<AutocannonRequest> = spec.requests.map((request) => ({
    method: request.method,
    path: request.path,
    headers: request.headers,
    ...(request.body === undefined ? {} : { body: request.body }),
    onResponse
  }))

  const cpuBefore = spec.server.cpuSeconds()
  const postgresCpu = () => (spec.database === undefined ? undefined : postgresCpuSnapshot(spec.database, spec.server))
  const postgresBefore = postgresCpu()
  const peakRss = watchRss(spec.server)
  const result = await autocannon({
    url: spec.server.baseUrl,
    connections: spec.connections,
    duration: spec.seconds,
    timeout: 10,
    requests,
    setupClient: (client) => {
      client.on("response", (_status, _bytes, durationMs) => {
        latencies.push(durationMs)
      })
    }
  })
  const peakRssMiB = peakRss()
  const noResponse = result.requests.total === 0 && spec.mustComplete !== false
  const cpuAfter = spec.server.cpuSeconds()
  const postgresAfter = postgresCpu()

  const problems = [
    ...[...unexpected].map(([status, count]) => `${count} x status ${status}`),
    wrongBodies > 0 ? `${wrongBodies} wrong bodies` : "",
    result.errors > 0 ? `${result.errors} socket errors` : "",
    result.timeouts > 0 ? `${result.timeouts} timeouts` : "",
    noResponse ? "no completed request" : ""
  ].filter((problem) => problem.length > 0)
  const responses = result.requests.total
  const perResponse = (before: number | undefined, after: number | undefined) =>
    before === undefined || after === undefined || responses === 0 ? Number.NaN : ((after - before) / responses) * 1e6
  const sorted = Float64Array.from(latencies).sort()
  return {
    requestsPerSecond: responses / result.duration,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    responses,
    expected,
    errors: [...unexpected.values()].reduce((sum, count) => sum + count, 0) + wrongBodies + result.errors + result.timeouts +
      (noResponse ? 1 : 0),
    errorDetail: problems.join(", "),
    cpuMicros: perResponse(cpuBefore, cpuAfter),
    postgresCpuMicros: perResponse(0, postgresCpuBetween(postgresBefore, postgresAfter)),
    peakRssMiB
  }
}

/** A process is quiet when it used at most QUIET_SHARE of a core over QUIET_WINDOW_MS. */
const QUIET_WINDOW_MS = 200
const QUIET_SHARE = 0.1
/** The longest wait for quiet: a process busy on its own for longer is loaded anyway. */
const SETTLE_LIMIT_MS = 20_000

/**
 * Waits until `server` has done the work a load left it: calls still in
 * flight when autocannon stopped, the meter's outcome writes, a traced
 * service's span exports. Otherwise the next measurement, often of another
 * target, would share the machine with that work, in its latencies, its
 * CPU per call and its peak memory. Answers the milliseconds waited (at
 * least one window).
 */
export const settle = async (server: Server): Promise<number> => {
  const startedAt = performance.now()
  let before = server.cpuSeconds()
  while (before !== undefined && performance.now() - startedAt < SETTLE_LIMIT_MS) {
    await new Promise<void>((resolve) => setTimeout(resolve, QUIET_WINDOW_MS))
    const after = server.cpuSeconds()
    if (after === undefined || after - before <= (QUIET_SHARE * QUIET_WINDOW_MS) / 1000) break
    before = after
  }
  return performance.now() - startedAt
}
