/**
 * The client side of the drills under load: every call answered (or not)
 * with its timing, status and source headers, and never thrown. A call that
 * got no HTTP answer (connection error, the client's timeout) has no status.
 */

export interface Answer {
  /** ms since the drill's epoch */
  readonly startedAt: number
  readonly endedAt: number
  /** undefined: no HTTP answer */
  readonly status: number | undefined
  readonly requestId: string | null
  readonly errorSource: string | null
  readonly errorSourceRequestId: string | null
  readonly body: string
  readonly error?: string
}

export interface Call {
  readonly method: string
  readonly path: string
  readonly headers?: Record<string, string>
  readonly body?: unknown
}

/** A client of `base` whose answers are timed from `epoch` and given up after `timeoutMs`. */
export const timedClient = (base: string, epoch: number, timeoutMs: number) => async (call: Call): Promise<Answer> => {
  const startedAt = Date.now() - epoch
  try {
    const response = await fetch(`${base}${call.path}`, {
      method: call.method,
      headers: { ...call.headers, ...(call.body === undefined ? {} : { "content-type": "application/json" }) },
      ...(call.body === undefined ? {} : { body: JSON.stringify(call.body) }),
      signal: AbortSignal.timeout(timeoutMs)
    })
    const body = await response.text()
    return {
      startedAt,
      endedAt: Date.now() - epoch,
      status: response.status,
      requestId: response.headers.get("x-request-id"),
      errorSource: response.headers.get("x-error-source"),
      errorSourceRequestId: response.headers.get("x-error-source-request-id"),
      body
    }
  } catch (error) {
    return {
      startedAt,
      endedAt: Date.now() - epoch,
      status: undefined,
      requestId: null,
      errorSource: null,
      errorSourceRequestId: null,
      body: "",
      error: String(error)
    }
  }
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

export const isOk = (answer: Answer) => answer.status !== undefined && answer.status >= 200 && answer.status < 300
