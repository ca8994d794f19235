/**
 * The suite's targets that are not ratios of req/s (issue 19), read off one
 * run: the authenticated read's p99 at 32 connections against the pg
 * peer's (on PostgreSQL), the service's peak resident memory over the suite (its server and,
 * on PGlite, its database process), and its start-up high-water mark.
 */
import { fixed, thousands } from "./stats.ts"
import type { Row } from "./suite-report.ts"
import type { Storage } from "./targets.ts"

/** Peak resident memory of the service over the suite, per storage (MiB). */
const PEAK_RSS_GOAL_MIB: Readonly<Record<Storage, number>> = { postgres: 300, pglite: 600 }
/** The start-up high-water mark, server and database process together; a goal on PGlite only (MiB). */
const STARTUP_GOAL_MIB: Readonly<Partial<Record<Storage, number>>> = { pglite: 600 }
const P99_CONNECTIONS = 32

export interface Goal {
  readonly label: string
  readonly measured: string
  /** null: measured, without a goal (or not measured in this run). */
  readonly met: boolean | null
}

const verdict = (met: boolean | null) => met === null ? "" : met ? ": met" : ": MISSED"

export const renderGoals = (goals: ReadonlyArray<Goal>): string => goals.map((goal) => `  ${goal.label}: ${goal.measured}${verdict(goal.met)}`).join("\n")

/**
 * `serviceRows`: the rows measured on the service's own process (its peak
 * RSS counts its database process on PGlite); `startupPeakMiB`: its
 * processes' high-water marks summed when /ready first answered.
 */
export const checkGoals = (
  rows: ReadonlyArray<Row>,
  serviceRows: ReadonlyArray<Row>,
  storage: Storage,
  startupPeakMiB: number | undefined
): ReadonlyArray<Goal> => {
  const goals: Array<Goal> = []
  const at = (target: string) => rows.find((row) => row.scenario === "read" && row.target === target && row.connections === P99_CONNECTIONS)
  const service = at("service")
  const peer = at("peer")
  if (service !== undefined && peer !== undefined) {
    // A goal on PostgreSQL, the peer's own storage; on PGlite the figure is shown without a verdict.
    goals.push({
      label: storage === "postgres"
        ? `p99 of the read at ${P99_CONNECTIONS} connections, at most the pg peer's`
        : `p99 of the read at ${P99_CONNECTIONS} connections on ${storage} (the pg peer on PostgreSQL)`,
      measured: `${fixed(service.p99Ms, 2)} ms against ${fixed(peer.p99Ms, 2)} ms`,
      met: storage === "postgres" ? service.p99Ms <= peer.p99Ms : null
    })
  }
  const peaks = serviceRows.flatMap((row) => row.peakRssMiB === null ? [] : [row.peakRssMiB])
  if (peaks.length > 0) {
    const peak = Math.max(...peaks)
    const worst = serviceRows.find((row) => row.peakRssMiB === peak)!
    goals.push({
      label: `peak RSS of the service under the suite, at most ${PEAK_RSS_GOAL_MIB[storage]} MiB on ${storage}`,
      measured: `${thousands(peak)} MiB (${worst.scenario}, ${worst.label}, ${worst.connections} connections)`,
      met: peak <= PEAK_RSS_GOAL_MIB[storage]
    })
  }
  if (startupPeakMiB !== undefined) {
    const goal = STARTUP_GOAL_MIB[storage]
    goals.push({
      label: goal === undefined ? "start-up high-water mark" : `start-up high-water mark, at most ${goal} MiB on ${storage}`,
      measured: `${thousands(startupPeakMiB)} MiB`,
      met: goal === undefined ? null : startupPeakMiB <= goal
    })
  }
  return goals
}
