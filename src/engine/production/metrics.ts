/**
 * GET /report-metrics?from=&to=: figures over the app's records created in
 * the period (both ends optional and inclusive; a date-only `to` means the
 * end of that day). See docs/workflows-production.md for the model.
 */
import { Effect } from "effect"
import { toDateFilters } from "../../domain/Resource.ts"
import { TicketModel, TicketQuote } from "../../domain/resources/orders.ts"
import { ServiceJob } from "../../domain/resources/production.ts"
import type { GroupHandlers } from "../Operation.ts"
import { listAll } from "./store.ts"

const money = (value: number) => Math.round(value * 100) / 100
const hours = (secondsTotal: number) => Math.round((secondsTotal / 3600) * 1e6) / 1e6

interface Figures {
  quotesSent: number
  quotedValue: number
  productionSeconds: number
}

const getReportMetrics: GroupHandlers<"reportMetrics">["get"] = (context, { query: { from, to } }) =>
  Effect.gen(function*() {
    const dates = toDateFilters({ "createdAt[from]": from, "createdAt[to]": to })
    const quotes = yield* listAll(TicketQuote, context.appId, { dates })
    const jobs = yield* listAll(ServiceJob, context.appId, { dates })

    // The technology of each quoted part, read once.
    const partIds = [...new Set(quotes.flatMap((quote) => quote.lines.flatMap((line) => line.ticketModelId ?? [])))]
    const parts = partIds.length === 0 ? [] : yield* listAll(TicketModel, context.appId, { ids: partIds })
    const technologyOf = new Map(parts.map((part) => [part.id, part.technologyId]))

    const byTechnology = new Map<string, Figures>()
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
      quotedValue += quote.total
      if (quote.state === "accepted") accepted += 1
      const technologies = new Set<string>()
      for (const line of quote.lines) {
        const technologyId = line.ticketModelId === undefined ? undefined : technologyOf.get(line.ticketModelId)
        if (technologyId === undefined) continue
        technologies.add(technologyId)
        entry(technologyId).quotedValue += line.total
      }
      for (const technologyId of technologies) entry(technologyId).quotesSent += 1
    }
    let productionSeconds = 0
    for (const job of jobs) {
      productionSeconds += job.totalTime
      entry(job.technologyId).productionSeconds += job.totalTime
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

export const reportMetricsHandlers: GroupHandlers<"reportMetrics"> = { get: getReportMetrics }
