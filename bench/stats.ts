/** Figures and text tables shared by the benchmarks. */

export const median = (values: ReadonlyArray<number>): number => {
  if (values.length === 0) return Number.NaN
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}

/** The p-th percentile (0–100) of sorted values, nearest rank. */
export const percentile = (sorted: Float64Array, p: number): number =>
  sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!

export const fixed = (value: number | undefined, digits: number) => value !== undefined && Number.isFinite(value) ? value.toFixed(digits) : "-"

export const thousands = (value: number) => (Number.isFinite(value) ? Math.round(value).toLocaleString("en-US") : "-")

/** `a / b` as `0.76x`, or `-` when either is missing. */
export const ratioText = (ratio: number | undefined) => (ratio !== undefined && Number.isFinite(ratio) ? `${ratio.toFixed(2)}x` : "-")

/**
 * A plain-text table: the first `leftAligned` columns, and those listed in
 * `alsoLeft`, padded on the right (names, text); the others on the left
 * (figures).
 */
export const renderTable = (
  header: ReadonlyArray<string>,
  rows: ReadonlyArray<ReadonlyArray<string>>,
  leftAligned = 1,
  alsoLeft: ReadonlyArray<number> = []
): string => {
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] ?? "").length)))
  const left = (column: number) => column < leftAligned || alsoLeft.includes(column)
  const line = (cells: ReadonlyArray<string>) =>
    cells
      .map((cell, column) => (left(column) ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!)))
      .join("  ")
      .trimEnd()
  return [line(header), widths.map((width) => "-".repeat(width)).join("  "), ...rows.map(line)].join("\n")
}
