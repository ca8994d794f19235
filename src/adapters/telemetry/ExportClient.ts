/**
 * The HTTP client of the OTLP exporters: each export request bounded by
 * OTEL_EXPORTER_OTLP_TIMEOUT (or the signal's own), and each failed one
 * (no answer in time, no connection, an answer that is not a 2xx) counted in
 * `telemetry.export.failures` and said in a WARN line at most once a minute,
 * with the endpoint (scheme, host, port and path: never credentials or a
 * query) and the reason in a few words, and how many failed since the last
 * line. Without it a collector that is down, or a backend that refuses the
 * headers, would go unnoticed: Effect's exporter drops the batch, logs at
 * DEBUG and pauses for a minute.
 *
 * Effect's exporter retries a request that failed for a transient reason;
 * each attempt is an export request here, and is counted.
 */
import { Cause, Duration, Effect } from "effect"
import { HttpClient, HttpClientError } from "effect/http"
import { causeInWords } from "../../platform/Readiness.ts"
import type { TelemetryInstruments } from "../../platform/telemetry/Instruments.ts"

/** At most one WARN line per this interval, for every exporter of the process. */
const WARNING_INTERVAL_MS = 60_000

export type Signal = "traces" | "metrics"

/** The URL as a log line may show it: no user, password or query. */
export const endpointShown = (url: string) => {
  const parsed = URL.parse(url)
  return parsed === null ? "(invalid URL)" : `${parsed.protocol}//${parsed.host}${parsed.pathname}`
}

/** A failed export's reason in words and its `error.type`: the status code, `timeout` or `unreachable`. */
const failureOf = (error: unknown, timeoutMs: number): { readonly reason: string; readonly type: string } => {
  if (HttpClientError.isHttpClientError(error) && Cause.isTimeoutError(error.cause)) {
    return { reason: `no answer within ${timeoutMs} ms (OTEL_EXPORTER_OTLP_TIMEOUT)`, type: "timeout" }
  }
  if (HttpClientError.isHttpClientError(error) && error.response !== undefined) {
    return { reason: `the receiver answered ${error.response.status}`, type: String(error.response.status) }
  }
  return { reason: causeInWords(error, "the request failed"), type: "unreachable" }
}

/** Counts and reports failed exports; one per process, shared by the exporters. */
export const exportFailureReporter = (instruments: TelemetryInstruments) => {
  let lastWarningAt = Number.NEGATIVE_INFINITY
  let failuresSinceWarning = 0
  return (signal: Signal, url: string, failure: { readonly reason: string; readonly type: string }) =>
    Effect.suspend(() => {
      instruments.exportFailure(signal, failure.type)
      failuresSinceWarning++
      const now = Date.now()
      if (now - lastWarningAt < WARNING_INTERVAL_MS) return Effect.void
      const failures = failuresSinceWarning
      failuresSinceWarning = 0
      lastWarningAt = now
      return Effect.logWarning(`telemetry export failed: ${failure.reason}`).pipe(
        Effect.annotateLogs({ signal, endpoint: endpointShown(url), reason: failure.reason, failures })
      )
    })
}

export type ExportFailureReporter = ReturnType<typeof exportFailureReporter>

/** `client` for the exporter of `signal` at `url`: bounded by `timeoutMs`, its failures reported. */
export const exportClient = (
  client: HttpClient.HttpClient,
  options: { readonly signal: Signal; readonly url: string; readonly timeoutMs: number; readonly report: ExportFailureReporter }
): HttpClient.HttpClient =>
  HttpClient.transform(client, (response, request) =>
    response.pipe(
      Effect.timeout(Duration.millis(options.timeoutMs)),
      Effect.mapError((error) =>
        Cause.isTimeoutError(error)
          ? new HttpClientError.HttpClientError({
            reason: new HttpClientError.TransportError({ request, cause: error, description: "no answer in time" })
          })
          : error
      ),
      Effect.tap((answer) =>
        answer.status >= 200 && answer.status < 300
          ? Effect.void
          : options.report(options.signal, options.url, { reason: `the receiver answered ${answer.status}`, type: String(answer.status) })
      ),
      Effect.tapError((error) => options.report(options.signal, options.url, failureOf(error, options.timeoutMs)))
    ))
