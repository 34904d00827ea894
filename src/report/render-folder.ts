import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { renderCharts } from './charts.js'
import { renderHtml } from './html.js'
import { renderMarkdown } from './markdown.js'
import type { BenchResult } from './result-json.js'

export const SUMMARY_FILE = 'summary.md'
export const HTML_FILE = 'report.html'

/** Everything a person looks at, from the summary: summary.md, charts/*.svg and report.html. */
export async function writeReports(dir: string, result: BenchResult): Promise<void> {
  writeFileSync(join(dir, SUMMARY_FILE), renderMarkdown(result))
  const charts = await renderCharts(result)
  mkdirSync(join(dir, 'charts'), { recursive: true })
  for (const chart of charts) writeFileSync(join(dir, 'charts', `${chart.name}.svg`), chart.svg)
  writeFileSync(join(dir, HTML_FILE), renderHtml(result, charts))
}
