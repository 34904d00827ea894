/**
 * Which table columns fit a terminal: the most telling first (the level, its requests, success,
 * TTFT, TPOT, the verdict, throughput, E2E), then the rest in table order while they fit. The shown
 * ones keep the table's order; the left-out ones are named so `--wide` can bring them back.
 */

export interface FitColumn {
  /** Short name for the "left out" line: "ITL", "server TTFT". */
  name: string
  /** Lower = shown first; the table's order breaks ties. */
  priority: number
  /** Every line of the heading and of each cell (cells may span lines). */
  texts: readonly string[]
}

/** cli-table3 draws "│ " before and " " after every cell, and one "│" closes the row. */
const CELL_CHROME = 3
const ROW_CLOSE = 1

/** The characters a column takes in the drawn table. */
export function columnWidth(column: FitColumn): number {
  let widest = 0
  for (const text of column.texts)
    for (const line of text.split('\n')) widest = Math.max(widest, [...line].length)
  return widest + CELL_CHROME
}

/**
 * The indexes of the columns to show within `width` characters (in table order) and the names of
 * those left out. The first column (the level) is always shown, however narrow the terminal.
 */
export function fitColumns(
  columns: readonly FitColumn[],
  width: number,
): { shown: number[]; omitted: string[] } {
  const order = columns
    .map((column, index) => ({ column, index }))
    .sort((a, b) => a.column.priority - b.column.priority || a.index - b.index)
  const chosen = new Set<number>()
  let used = ROW_CLOSE
  for (const { column, index } of order) {
    const needed = columnWidth(column)
    // In priority order, strictly: a narrow minor column never shows while a telling one is left out.
    if (chosen.size > 0 && used + needed > width) break
    chosen.add(index)
    used += needed
  }
  const shown = columns.map((_, index) => index).filter((index) => chosen.has(index))
  const omitted = columns.filter((_, index) => !chosen.has(index)).map((column) => column.name)
  return { shown, omitted }
}
