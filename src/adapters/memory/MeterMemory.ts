/**
 * Meter in memory: every call recorded in a list that lives as long as the
 * layer, durable at once (nothing to wait for), its outcome added when the
 * call ends. Usage and the request log are read from the list as MeterSql
 * reads its table. For compositions without a database.
 */
import { Effect, Layer } from "effect"
import type { RequestLogEntry } from "../../domain/RequestLog.ts"
import { DEFAULT_PAGE_SIZE, rangeEnd, rangeStart } from "../../domain/Resource.ts"
import type { MeterEvent } from "../../domain/Usage.ts"
import { Meter } from "../../services/Meter.ts"

interface Recorded {
  readonly event: MeterEvent
  outcome?: { readonly status: number; readonly durationMs: number; readonly errorType: string | undefined }
}

const entryOf = ({ event, outcome }: Recorded): RequestLogEntry => ({
  requestId: event.requestId,
  createdAt: event.occurredAt.toISOString(),
  method: event.method,
  route: event.route,
  operation: event.operation,
  status: outcome?.status ?? null,
  errorType: outcome?.errorType ?? null,
  durationMs: outcome?.durationMs ?? null,
  secretId: event.secretId,
  clientAddress: event.clientAddress
})

const within = (values: ReadonlyArray<string> | undefined, value: string) => values === undefined || values.includes(value)

export const MeterMemory = Layer.sync(Meter, () => {
  const calls: Array<Recorded> = []
  const byRequest = new Map<string, Recorded>()
  return Meter.of({
    submit: (event) =>
      Effect.sync(() => {
        const recorded: Recorded = { event }
        calls.push(recorded)
        byRequest.set(event.requestId, recorded)
        return Effect.void
      }),
    complete: (requestId, _occurredAt, status, durationMs, errorType) => {
      const recorded = byRequest.get(requestId)
      if (recorded !== undefined) recorded.outcome = { status, durationMs, errorType }
    },
    usage: (filter) =>
      Effect.sync(() => {
        const counted = new Map<string, { calls: number; outcomeUnknown: number }>()
        for (const { event } of calls) {
          if (filter.appId !== undefined && event.appId !== filter.appId) continue
          if (filter.mode !== undefined && event.mode !== filter.mode) continue
          if (filter.from !== undefined && event.occurredAt < filter.from) continue
          if (filter.to !== undefined && event.occurredAt > filter.to) continue
          const row = counted.get(event.operation) ?? { calls: 0, outcomeUnknown: 0 }
          row.calls++
          counted.set(event.operation, row)
        }
        const byOperation = [...counted].sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0).map(([operation, row]) => ({ operation, ...row }))
        return { total: byOperation.reduce((sum, row) => sum + row.calls, 0), outcomeUnknown: 0, byOperation }
      }),
    requestLog: ({ appId, mode, query, reader }) =>
      Effect.sync(() => {
        const from = query["createdAt[from]"] ?? query.createdAt
        const to = query["createdAt[to]"] ?? query.createdAt
        const matching = calls.filter(({ event, outcome }) =>
          event.appId === appId && event.mode === mode && event.requestId !== reader &&
          within(query.requestId, event.requestId) && within(query.operation, event.operation) &&
          within(query.secretId, event.secretId) &&
          (query.status === undefined || (outcome !== undefined && query.status.includes(String(outcome.status)))) &&
          (from === undefined || event.occurredAt >= rangeStart(from)) && (to === undefined || event.occurredAt <= rangeEnd(to))
        )
        const offset = query.offset ?? 0
        return { items: matching.slice(offset, offset + (query.limit ?? DEFAULT_PAGE_SIZE)).map(entryOf), total: matching.length }
      })
  })
})
