/**
 * GET /report-metrics?from=&to=: figures over the app's records created in
 * the period (both ends optional and inclusive; a date-only `to` means the
 * end of that day). See docs/workflows-production.md for the model.
 */
import { Effect } from "effect"
import { toRecordFilter } from "../../domain/Resource.ts"
import type { Operation } from "../Operation.ts"
import type { StoredRecord } from "../RecordRepository.ts"
import { ALL, listAll } from "./store.ts"

interface QuoteLine {
  readonly ticketModelId?: string
  readonly total?: number
}

const money = (value: number) => Math.round(value * 100) / 100
const hours = (secondsTotal: number) => Math.round((secondsTotal / 3600) * 1e6) / 1e6
const numberOf = (value: unknown) => (typeof value === "number" && Number.isFinite(value) ? value : 0)

const reportMetrics: Operation = (context, request) =>
  Effect.gen(function*() {
    const from = request.query?.from as string | undefined
    const to = request.query?.to as string | undefined
    const period = toRecordFilter([], {
      ...(from === undefined ? {} : { "createdAt[from]": from }),
      ...(to === undefined ? {} : { "createdAt[to]": to }),
      limit: ALL
    })
    const quotes = yield* listAll("ticketQuote", context.appId, {}, { dates: period.dates })
    const jobs = yield* listAll("serviceJob", context.appId, {}, { dates: period.dates })

    // The technology of each quoted part, read once.
    const partIds = [...new Set(quotes.flatMap((quote) => lines(quote).flatMap((line) => line.ticketModelId ?? [])))]
    const parts = partIds.length === 0 ? [] : yield* listAll("ticketModel", context.appId, {}, { ids: partIds })
    const technologyOf = new Map(parts.map((part) => [String(part.id), String(part.technologyId)]))

    const byTechnology = new Map<string, { quotesSent: number; quotedValue: number; productionSeconds: number }>()
    const entry = (technologyId: string) => {
      let found = byTechnology.get(technologyId)
      if (found === undefined) {
        found = { quotesSent: 0, quotedValue: 0, productionSeconds: 0 }
        byTechnology.set(technologyId, found)
      }
      return found
    }

    let quotedValue = 0
    let accepted = 0
    for (const quote of quotes) {
      quotedValue += numberOf(quote.total)
      if (quote.state === "accepted") accepted += 1
      const technologies = new Set<string>()
      for (const line of lines(quote)) {
        const technologyId = line.ticketModelId === undefined ? undefined : technologyOf.get(line.ticketModelId)
        if (technologyId === undefined) continue
        technologies.add(technologyId)
        entry(technologyId).quotedValue += numberOf(line.total)
      }
      for (const technologyId of technologies) entry(technologyId).quotesSent += 1
    }
    let productionSeconds = 0
    for (const job of jobs) {
      productionSeconds += numberOf(job.totalTime)
      entry(String(job.technologyId)).productionSeconds += numberOf(job.totalTime)
    }

    return {
      from: from ?? null,
      to: to ?? null,
      quotesSent: quotes.length,
      acceptedShare: quotes.length === 0 ? 0 : accepted / quotes.length,
      quotedValue: money(quotedValue),
      productionHours: hours(productionSeconds),
      byTechnology: [...byTechnology.entries()]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([technologyId, figures]) => ({
          technologyId,
          quotesSent: figures.quotesSent,
          quotedValue: money(figures.quotedValue),
          productionHours: hours(figures.productionSeconds)
        }))
    }
  })

const lines = (quote: StoredRecord): ReadonlyArray<QuoteLine> => Array.isArray(quote.lines) ? (quote.lines as ReadonlyArray<QuoteLine>) : []

export const metricsWorkflows = { "reportMetrics.get": reportMetrics } as const
