import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Resvg } from '@resvg/resvg-js'
import { renderHtml } from './html.js'
import { renderMarkdown } from './markdown.js'
import type { BenchResult } from './result-json.js'

export const SUMMARY_FILE = 'summary.md'
export const HTML_FILE = 'report.html'

/**
 * PNG for places that show no SVG. resvg draws text only with a font: it uses the system's (CI
 * installs fonts-dejavu-core); without any, the PNG still has the lines but no labels.
 */
export function toPng(svg: string, loadSystemFonts = true): Buffer {
  const resvg = new Resvg(svg, {
    font: { loadSystemFonts, defaultFontFamily: 'DejaVu Sans' },
    fitTo: { mode: 'zoom', value: 2 },
  })
  return resvg.render().asPng()
}

/** Everything a person looks at, from the summary: summary.md, charts/*.svg and *.png, report.html. */
export async function writeReports(dir: string, result: BenchResult): Promise<void> {
  writeFileSync(join(dir, SUMMARY_FILE), renderMarkdown(result))
  // vega and vega-lite (hundreds of files) load when a report is drawn, not when a run starts: a run
  // at a tight `ulimit -n` must get as far as its fd check, and `init` or `sim` never need them.
  const { renderCharts } = await import('./charts.js')
  const charts = await renderCharts(result)
  mkdirSync(join(dir, 'charts'), { recursive: true })
  for (const chart of charts) {
    writeFileSync(join(dir, 'charts', `${chart.name}.svg`), chart.svg)
    writeFileSync(join(dir, 'charts', `${chart.name}.png`), toPng(chart.svg))
  }
  writeFileSync(join(dir, HTML_FILE), renderHtml(result, charts))
}
