/**
 * The suite's results: per scenario, target and number of connections, the
 * median of the rounds; the ratios between rows with their goals; the text
 * table and the JSON written to bench/results/latest.json.
 */
import { mkdirSync, writeFileSync } from "node:fs"
import * as Path from "node:path"
import type { Measurement } from "./load.ts"
import type { RatioSpec, Scenario, ScenarioId } from "./scenarios.ts"
import { fixed, median, ratioText, renderTable, thousands } from "./stats.ts"

/** Every measurement of one target at one number of connections. */
export interface Cell {
  readonly scenario: Scenario
  readonly target: string
  readonly label: string
  readonly connections: number
  readonly rounds: Array<Measurement>
  /** Errors during the warm-ups (not in the figures, but reported). */
  readonly warmups: Array<Measurement>
}

export interface Row {
  readonly scenario: ScenarioId
  readonly target: string
  readonly label: string
  readonly connections: number
  /** Medians over the rounds, each taken separately. */
  readonly requestsPerSecond: number
  readonly p50Ms: number
  readonly p99Ms: number
  readonly cpuMicrosPerRequest: number
  /** CPU time of the PostgreSQL backends of the benchmark's database per response (all its clients). */
  readonly postgresCpuMicrosPerRequest: number
  /** The largest over the rounds. */
  readonly peakRssMiB: number | null
  /** Every round and warm-up together. */
  readonly errors: number
  readonly errorDetail: ReadonlyArray<string>
  readonly roundsRequestsPerSecond: ReadonlyArray<number>
}

export interface RatioRow {
  readonly label: string
  readonly connections: number
  readonly value: number
  readonly goal: { readonly atLeast: number; readonly stretch?: number } | null
  readonly met: boolean | null
  readonly stretchMet: boolean | null
}

const toRow = (cell: Cell): Row => {
  const { rounds } = cell
  const all = [...rounds, ...cell.warmups]
  const peaks = rounds.flatMap((m) => (m.peakRssMiB === undefined ? [] : [m.peakRssMiB]))
  return {
    scenario: cell.scenario.id,
    target: cell.target,
    label: cell.label,
    connections: cell.connections,
    requestsPerSecond: median(rounds.map((m) => m.requestsPerSecond)),
    p50Ms: median(rounds.map((m) => m.p50)),
    p99Ms: median(rounds.map((m) => m.p99)),
    cpuMicrosPerRequest: median(rounds.map((m) => m.cpuMicros)),
    postgresCpuMicrosPerRequest: median(rounds.map((m) => m.postgresCpuMicros)),
    peakRssMiB: peaks.length === 0 ? null : Math.max(...peaks),
    errors: all.reduce((sum, m) => sum + m.errors, 0),
    errorDetail: all.flatMap((m) => (m.errorDetail === "" ? [] : [m.errorDetail])),
    roundsRequestsPerSecond: rounds.map((m) => m.requestsPerSecond)
  }
}

const ratioRows = (specs: ReadonlyArray<RatioSpec>, rows: ReadonlyArray<Row>): Array<RatioRow> => {
  const find = (end: RatioSpec["numerator"], connections: number) =>
    rows.find((row) => row.scenario === end.scenario && row.target === end.target && row.connections === connections)
  return specs.flatMap((spec) =>
    rows
      .filter((row) => row.scenario === spec.numerator.scenario && row.target === spec.numerator.target)
      .flatMap((numerator) => {
        const denominator = find(spec.denominator, numerator.connections)
        if (denominator === undefined) return []
        const value = numerator.requestsPerSecond / denominator.requestsPerSecond
        return [{
          label: spec.label,
          connections: numerator.connections,
          value,
          goal: spec.goal ?? null,
          met: spec.goal === undefined ? null : value >= spec.goal.atLeast,
          stretchMet: spec.goal?.stretch === undefined ? null : value >= spec.goal.stretch
        }]
      })
  )
}

export interface SuiteResult {
  readonly rows: ReadonlyArray<Row>
  readonly ratios: ReadonlyArray<RatioRow>
}

export const summarize = (cells: ReadonlyArray<Cell>, scenarios: ReadonlyArray<Scenario>): SuiteResult => {
  const rows = cells.map(toRow)
  return { rows, ratios: ratioRows(scenarios.flatMap((scenario) => scenario.ratios), rows) }
}

const goalText = (ratio: RatioRow) =>
  ratio.goal === null
    ? ""
    : ` (goal ${ratio.goal.atLeast.toFixed(1)}: ${ratio.met === true ? "met" : "MISSED"}` +
      (ratio.goal.stretch === undefined ? ")" : `; stretch ${ratio.goal.stretch.toFixed(1)}: ${ratio.stretchMet === true ? "met" : "not met"})`)

const ratioCell = (ratio: RatioRow) => `${ratio.label} ${ratioText(ratio.value)}${goalText(ratio)}`

/**
 * The named ratios on their own lines, one figure per number of connections:
 * the block a reader compares between runs (each ratio's peer is measured in
 * the same run, so the machine's speed of the day cancels out).
 */
export const renderSummary = (result: SuiteResult, labels: ReadonlyArray<{ readonly label: string; readonly scenario: ScenarioId }>): string => {
  const width = Math.max(...labels.map(({ label }) => label.length))
  return labels.map(({ label, scenario }) => {
    const ratios = result.ratios.filter((ratio) => ratio.label === label)
    const figures = ratios.length === 0
      ? `not measured (the ${scenario} scenario did not run)`
      : ratios.map((ratio) => `${ratio.connections} conn${ratio.connections === 1 ? "" : "s"} ${ratioText(ratio.value)}${goalText(ratio)}`)
        .join(";  ")
    return `  ${label.padEnd(width)}  ${figures}`
  }).join("\n")
}

/** The table: one line per scenario, target and connections; ratios on the line of their numerator. */
export const renderResult = (result: SuiteResult, specs: ReadonlyArray<RatioSpec>): string => {
  const ratiosOf = (row: Row) =>
    result.ratios
      .filter((ratio) =>
        ratio.connections === row.connections &&
        specs.some((spec) => spec.label === ratio.label && spec.numerator.scenario === row.scenario && spec.numerator.target === row.target)
      )
      .map(ratioCell)
      .join("; ")
  const header = ["scenario", "target", "conns", "req/s", "p50 ms", "p99 ms", "errors", "CPU us/req", "PG CPU us/req", "peak RSS MiB", "ratios (req/s)"]
  const lines = result.rows.map((row) => [
    row.scenario,
    row.label,
    String(row.connections),
    thousands(row.requestsPerSecond),
    fixed(row.p50Ms, 2),
    fixed(row.p99Ms, 2),
    String(row.errors),
    fixed(row.cpuMicrosPerRequest, 0),
    fixed(row.postgresCpuMicrosPerRequest, 0),
    fixed(row.peakRssMiB ?? undefined, 0),
    ratiosOf(row)
  ])
  const table = renderTable(header, lines, 2, [header.length - 1])
  const errors = result.rows.filter((row) => row.errors > 0).map((row) =>
    `errors in ${row.scenario} / ${row.label} at ${row.connections}: ${[...new Set(row.errorDetail)].join("; ")}`
  )
  return [table, ...errors].join("\n")
}

export const RESULTS_FILE = Path.join(import.meta.dirname, "results", "latest.json")

/** Writes the run (settings and results) as JSON; the path written. */
export const writeResult = (run: Readonly<Record<string, unknown>>, result: SuiteResult): string => {
  mkdirSync(Path.dirname(RESULTS_FILE), { recursive: true })
  writeFileSync(RESULTS_FILE, `${JSON.stringify({ ...run, rows: result.rows, ratios: result.ratios }, null, 2)}\n`)
  return RESULTS_FILE
}
