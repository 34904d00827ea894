import { mkdirSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import type { Resvg as ResvgClass } from '@resvg/resvg-js'
import type { BenchResult } from '../result/bench-result.js'
import { CHARTS_DIR, HTML_FILE, SUMMARY_FILE } from '../result/folder-layout.js'
import { levelName } from '../result/level-name.js'
import type { Chart } from './charts.js'
import { collectGarbage } from './collect-garbage.js'
import { type ExportOptions, writeExports } from './exports.js'
import { renderHtml } from './html.js'
import { renderMarkdown } from './markdown.js'
import { readRequestTimelines } from './request-timeline.js'
import type { TimelineChart } from './request-timeline-chart.js'
import { readServerTimeline } from './server-timeline.js'

/**
 * PNG for places that show no SVG. resvg draws text only with a font: it uses the system's (CI
 * installs fonts-dejavu-core); without any, the PNG still has the lines but no labels.
 */
export function toPng(svg: string, loadSystemFonts = true): Buffer {
  // resvg's native addon loads with the first PNG, not with every command that imports this module.
  const { Resvg } = createRequire(import.meta.url)('@resvg/resvg-js') as { Resvg: typeof ResvgClass }
  const resvg = new Resvg(svg, {
    font: { loadSystemFonts, defaultFontFamily: 'DejaVu Sans' },
    fitTo: { mode: 'zoom', value: 2 },
  })
  return resvg.render().asPng()
}

/**
 * Everything a person looks at, from the summary: summary.md, charts/*.svg and *.png, report.html;
 * and the exports for other tools (levels.csv, requests.csv, requests.parquet when asked).
 * Returns a note when the charts (and so report.html) could not be drawn.
 */
export async function writeReports(
  dir: string,
  result: BenchResult,
  exports: ExportOptions = {},
): Promise<string | null> {
  writeFileSync(join(dir, SUMMARY_FILE), renderMarkdown(result))
  await writeExports(dir, result, exports)
  // vega and vega-lite (hundreds of files) load when a report is drawn, not when a run starts: a run
  // at a tight `ulimit -n` must get as far as its fd check, and `init` or `sim` never need them.
  let charts: Chart[]
  let timelines: TimelineChart[]
  try {
    const timeline = readServerTimeline(
      dir,
      result.levels.map((level) => ({ value: level.value, name: levelName(result.meta, level.value) })),
    )
    charts = await (await import('./charts.js')).renderCharts(result, timeline)
    const { timelineChart } = await import('./request-timeline-chart.js')
    timelines = await Promise.all(readRequestTimelines(dir, result).map(timelineChart))
  } catch (error) {
    if (!tooManyOpenFiles(error)) throw error
    // The figures are written (bench_result.json, summary.md); only the drawing needs more files than the
    // limit allows, and the module loader may still hold some of them open for a moment.
    const code = (error as { code?: unknown }).code
    return `charts and report.html not drawn: the chart library could not be loaded (${String(code ?? 'EMFILE')}: too many open files under this ulimit -n); raise it and run \`llmbench report ${dir}\``
  }
  mkdirSync(join(dir, CHARTS_DIR), { recursive: true })
  for (const chart of charts) {
    writeFileSync(join(dir, CHARTS_DIR, `${chart.name}.svg`), chart.svg)
    writeFileSync(join(dir, CHARTS_DIR, `${chart.name}.png`), toPng(chart.svg))
    // Each drawing's pixels are released before the next is drawn (see collectGarbage).
    await collectGarbage()
  }
  writeFileSync(join(dir, HTML_FILE), renderHtml(result, charts, timelines))
  return null
}

/** EMFILE, also as the module loader reports it (a module "not found" because it could not be opened). */
function tooManyOpenFiles(error: unknown): boolean {
  const text =
    error instanceof Error ? `${(error as { code?: unknown }).code} ${error.message}` : String(error)
  return /EMFILE|ENFILE|ERR_MODULE_NOT_FOUND/.test(text)
}
