/** The part of autocannon@9 (which ships no types) that the benchmarks use. */
declare module "autocannon" {
  /** One connection of a run; `response` fires for every response, whatever its status. */
  interface AutocannonClient {
    on(event: "response", listener: (statusCode: number, bytes: number, durationMs: number) => void): unknown
  }

  /** One request of a sequence that each connection sends in turn, cycling. */
  interface AutocannonRequest {
    readonly method?: string
    readonly path?: string
    readonly headers?: Readonly<Record<string, string>>
    readonly body?: string
    /** Called with every response to this request, whatever its status. */
    readonly onResponse?: (status: number, body: string) => void
  }

  interface AutocannonOptions {
    readonly url: string
    readonly connections?: number
    /** Seconds. */
    readonly duration?: number
    readonly method?: string
    readonly headers?: Readonly<Record<string, string>>
    readonly body?: string
    /** Requests sent in turn by every connection instead of `method`, `headers` and `body`. */
    readonly requests?: ReadonlyArray<AutocannonRequest>
    /** Seconds without a response before a request counts as a timeout. */
    readonly timeout?: number
    /** A response whose body fails this counts as a mismatch. */
    readonly verifyBody?: (body: string) => boolean
    /** Called with each connection's client as it is created. */
    readonly setupClient?: (client: AutocannonClient) => void
  }

  interface Histogram {
    readonly average: number
    readonly mean: number
    readonly stddev: number
    readonly min: number
    readonly max: number
    readonly total: number
    readonly p50: number
    readonly p90: number
    readonly p97_5: number
    readonly p99: number
  }

  interface AutocannonResult {
    readonly url: string
    readonly connections: number
    /** Seconds. */
    readonly duration: number
    readonly errors: number
    readonly timeouts: number
    readonly mismatches: number
    readonly non2xx: number
    readonly resets: number
    readonly "2xx": number
    readonly statusCodeStats: Readonly<Record<string, { readonly count: number }>>
    /** Milliseconds. */
    readonly latency: Histogram
    /** Completed requests per one-second sample; `total` is every completed request. */
    readonly requests: Histogram & { readonly sent: number }
    readonly throughput: Histogram
  }

  function autocannon(options: AutocannonOptions): Promise<AutocannonResult>

  export type { AutocannonClient, AutocannonOptions, AutocannonRequest, AutocannonResult }
  export default autocannon
}
