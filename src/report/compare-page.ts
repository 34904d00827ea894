import { writeFileSync } from 'node:fs'
import type { Comparison } from '../compare/compare.js'
import type { ComparedRun } from './compare-html.js'
import { renderCompareHtml } from './compare-html.js'

/** Draws the shared charts and writes compare.html; vega loads here, only when a page is asked for. */
export async function writeCompareHtml(
  file: string,
  base: ComparedRun,
  next: ComparedRun,
  comparison: Comparison,
  all: boolean,
): Promise<void> {
  const { renderCompareCharts } = await import('./compare-charts.js')
  const charts = await renderCompareCharts(base.result, next.result)
  writeFileSync(file, renderCompareHtml(base, next, comparison, charts, all))
}
