/**
 * docs/grafana-dashboard.json against the metrics docs/operations.md lists:
 * a dashboard Grafana imports (a schema version, a Prometheus data source
 * variable, every panel placed on the grid and querying through it), whose
 * every query names a metric of the table under the name the OTLP →
 * Prometheus translation gives it, and that leaves none of them out.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { describe, expect, it } from "vitest"

const ROOT = Path.resolve(import.meta.dirname, "../..")
const dashboard = JSON.parse(Fs.readFileSync(Path.join(ROOT, "docs/grafana-dashboard.json"), "utf8"))
const operations = Fs.readFileSync(Path.join(ROOT, "docs/operations.md"), "utf8")

interface DocumentedMetric {
  readonly name: string
  readonly instrument: string
  /** The OTLP unit; undefined for a counter without one (OTLP's `1`). */
  readonly unit: string | undefined
  readonly prometheus: string
}

/** The rows of the table under "### Metrics": metric, instrument and unit, attributes, Prometheus name. */
const documentedMetrics = (): ReadonlyArray<DocumentedMetric> => {
  const section = operations.slice(operations.indexOf("### Metrics\n"))
  const table = section.slice(0, section.indexOf("\n\n", section.indexOf("| metric")))
  return table.split("\n").filter((line) => line.startsWith("| `")).map((line) => {
    const cells = line.split("|").slice(1, -1).map((cell) => cell.trim())
    const code = (cell: string) => /`([^`]+)`/.exec(cell)?.[1]
    return { name: code(cells[0]!)!, instrument: cells[1]!.split(",")[0]!.trim(), unit: code(cells[1]!), prometheus: code(cells.at(-1)!)! }
  })
}

/** Prometheus's unit words for the OTLP units in use (otlptranslator's table); a `{...}` unit, or `1`, adds none. */
const UNIT_WORDS: Readonly<Record<string, string>> = { s: "seconds", ms: "milliseconds", By: "bytes" }

/**
 * The name the OTLP → Prometheus translation gives a metric, with suffixes
 * and underscore escaping (the Collector's prometheus exporters' and
 * Prometheus's OTLP receiver's default): dots and other characters to `_`,
 * the unit's word appended, `_total` for a counter.
 */
const prometheusName = (metric: DocumentedMetric) => {
  const tokens = metric.name.split(/[^A-Za-z0-9:]+/).filter((token) => token.length > 0)
  const unit = metric.unit === undefined || metric.unit === "1" || /[{}]/.test(metric.unit) ? "" : UNIT_WORDS[metric.unit] ?? metric.unit
  if (unit !== "" && !tokens.includes(unit)) tokens.push(unit)
  if (metric.instrument === "counter") return [...tokens.filter((token) => token !== "total"), "total"].join("_")
  return tokens.join("_")
}

/** PromQL words that are not metric names: aggregations, their modifiers, set operators. */
const KEYWORDS = new Set([
  "sum",
  "min",
  "max",
  "avg",
  "count",
  "stddev",
  "stdvar",
  "topk",
  "bottomk",
  "quantile",
  "group",
  "by",
  "without",
  "on",
  "ignoring",
  "group_left",
  "group_right",
  "and",
  "or",
  "unless",
  "bool",
  "offset"
])

/** The metric names a PromQL expression selects: `name{...}`, bare names, and `__name__` matchers. */
const metricsOf = (expr: string): Array<string> => {
  const names = [...expr.matchAll(/__name__\s*=~?\s*"([^"]*)"/g)].flatMap((match) => match[1]!.split("|"))
  // Grafana's label_values(selector, label): the label is no metric.
  const rest = expr.replace(/^label_values\((.*),\s*[A-Za-z_][A-Za-z0-9_]*\s*\)$/, "$1")
    .replace(/"[^"]*"/g, "\"\"")
    .replace(/\[[^\]]*\]/g, "")
    .replace(/([A-Za-z_:][A-Za-z0-9_:]*)?\{[^}]*\}/g, (_all, name: string | undefined) => {
      if (name !== undefined) names.push(name)
      return " "
    })
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, " ")
  for (const match of rest.matchAll(/([A-Za-z_:][A-Za-z0-9_:]*)\s*(\()?/g)) {
    if (match[2] === undefined && !KEYWORDS.has(match[1]!)) names.push(match[1]!)
  }
  return names
}

interface Panel {
  readonly id: number
  readonly type: string
  readonly title: string
  readonly gridPos: { readonly x: number; readonly y: number; readonly w: number; readonly h: number }
  readonly datasource?: { readonly type: string; readonly uid: string }
  readonly targets?: ReadonlyArray<{ readonly expr: string; readonly refId: string }>
  readonly panels?: ReadonlyArray<Panel>
}

const allPanels = (panels: ReadonlyArray<Panel>): Array<Panel> => panels.flatMap((panel) => [panel, ...allPanels(panel.panels ?? [])])
const panels = allPanels(dashboard.panels)
const queryPanels = panels.filter((panel) => panel.type !== "row")
const variables: ReadonlyArray<{ name: string; type: string; query: unknown }> = dashboard.templating.list
/** Every PromQL expression of the dashboard: its panels' targets and its query variables. */
const expressions = [
  ...queryPanels.flatMap((panel) => (panel.targets ?? []).map((target) => ({ where: panel.title, expr: target.expr }))),
  ...variables.filter((variable) => variable.type === "query").map((variable) => {
    const query = typeof variable.query === "string" ? variable.query : (variable.query as { query: string }).query
    return { where: `$${variable.name}`, expr: query }
  })
]

describe("docs/grafana-dashboard.json", () => {
  it("is a dashboard Grafana imports: a schema version, a Prometheus data source variable, every panel on the grid", () => {
    expect(dashboard.schemaVersion).toBeGreaterThanOrEqual(36)
    expect(typeof dashboard.title).toBe("string")
    expect(dashboard.uid).toMatch(/^[A-Za-z0-9_-]{1,40}$/)
    expect(variables.find((variable) => variable.name === "datasource")).toMatchObject({ type: "datasource", query: "prometheus" })
    expect(new Set(panels.map((panel) => panel.id)).size).toBe(panels.length)
    for (const panel of panels) {
      const { x, y, w, h } = panel.gridPos
      for (const value of [x, y, w, h]) expect(Number.isInteger(value), panel.title).toBe(true)
      expect(x >= 0 && w > 0 && x + w <= 24 && y >= 0 && h > 0, panel.title).toBe(true)
    }
    for (const panel of queryPanels) {
      expect(panel.datasource, panel.title).toEqual({ type: "prometheus", uid: "${datasource}" })
      expect(panel.targets?.length, panel.title).toBeGreaterThan(0)
    }
  })

  it("documents each metric under the name the OTLP → Prometheus translation gives it", () => {
    const documented = documentedMetrics()
    expect(documented.length).toBeGreaterThan(10)
    for (const metric of documented) expect(metric.prometheus, metric.name).toBe(prometheusName(metric))
  })

  it("queries only metrics the table in docs/operations.md lists, and every one of them", () => {
    const series = new Map<string, string>()
    for (const metric of documentedMetrics()) {
      const suffixes = metric.instrument === "histogram" ? ["_bucket", "_sum", "_count"] : [""]
      for (const suffix of suffixes) series.set(metric.prometheus + suffix, metric.name)
    }
    const queried = new Set<string>()
    for (const { where, expr } of expressions) {
      const names = metricsOf(expr)
      expect(names.length, `${where}: ${expr}`).toBeGreaterThan(0)
      for (const name of names) {
        expect(series.has(name), `${where}: ${name} is not in the table of docs/operations.md`).toBe(true)
        queried.add(series.get(name)!)
      }
    }
    expect([...queried].sort()).toEqual(documentedMetrics().map((metric) => metric.name).sort())
  })

  it("documents exactly the metrics the service defines (src: its Effect Metric instruments)", () => {
    const defined = new Set<string>()
    const sources = Fs.readdirSync(Path.join(ROOT, "src"), { recursive: true, encoding: "utf8" }).filter((file) => file.endsWith(".ts"))
    for (const file of sources) {
      const text = Fs.readFileSync(Path.join(ROOT, "src", file), "utf8")
      for (const match of text.matchAll(/Metric\.(?:counter|gauge|histogram)\(\s*"([^"]+)"/g)) defined.add(match[1]!)
      // The model file metrics are made by one helper, named as its arguments.
      if (file.endsWith("ModelMetrics.ts")) { for (const match of text.matchAll(/^\s*"(model\.[a-z_.]+)",/gm)) defined.add(match[1]!) }
    }
    expect([...defined].sort()).toEqual(documentedMetrics().map((metric) => metric.name).sort())
  })

  it("shows every instance: each query filters by $instance and keeps service_instance_id apart", () => {
    expect(variables.find((variable) => variable.name === "instance")).toMatchObject({ type: "query" })
    for (const { where, expr } of expressions.filter((each) => each.where !== "$job" && each.where !== "$instance")) {
      expect(expr, where).toContain("service_instance_id=~\"$instance\"")
      for (const grouping of expr.matchAll(/\b(?:sum|max|min|avg) by \(([^)]*)\)/g)) expect(grouping[1], `${where}: ${expr}`).toContain("service_instance_id")
    }
  })

  it("reads metric names out of PromQL as the checks above need", () => {
    expect(metricsOf("histogram_quantile(0.95, sum by (le, http_route) (rate(a_seconds_bucket{job=~\"$job\"}[$__rate_interval])))"))
      .toEqual(["a_seconds_bucket"])
    expect(metricsOf("sum(rate(a_total[5m])) / sum(b_total) or c")).toEqual(["a_total", "b_total", "c"])
    expect(metricsOf("label_values({__name__=~\"a_count|b_max\"}, job)")).toEqual(["a_count", "b_max"])
  })
})
