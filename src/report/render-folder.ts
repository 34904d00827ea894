import { mkdirSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import type { Resvg as ResvgClass } from '@resvg/resvg-js'
import { levelName } from '../metrics/level-name.js'
import { readRunRecords } from '../records/run-records.js'
import type { RequestRecord } from '../records/types.js'
import type { BenchResult } from '../result/bench-result.js'
import { CHARTS_DIR, HTML_FILE, RECORDS_FILE, SUMMARY_FILE } from '../result/folder-layout.js'
import type { Chart } from './charts.js'
import { collectGarbage } from './collect-garbage.js'
import { type ExportOptions, writeExports } from './exports.js'
import { renderHtml } from './html.js'
import { type JobTimeline, jobTimelines } from './job-timeline.js'
import type { JobTimelineChart } from './job-timeline-chart.js'
import { renderMarkdown } from './markdown.js'
import { type LevelTimeline, requestTimelines } from './request-timeline.js'
import type { TimelineChart } from './request-timeline-chart.js'
import { readServerTimeline, type ServerTimeline } from './server-timeline.js'

export interface ReportOptions extends ExportOptions {
  /**
   * This run's records when the caller holds them already (`report` recomputed from them); else
   * they are read from DIR/requests.jsonl, once, for the exports and both timelines.
   */
  records?: readonly RequestRecord[] | null
  /**
   * Anything but true (the default): summary.md and the exports only, no charts and no report.html,
   * and a note saying why. An interrupted run draws nothing: the drawing is seconds of CPU (several
   * times that on a loaded machine), which a person who pressed Ctrl-C is not waiting for; nor does a
   * run told `--no-charts`. `llmbench report DIR` draws it from the folder.
   */
  draw?: true | NotDrawn
  /**
   * False: the "What if" section shows the fitted model and how it reproduced the levels (both in
   * bench_result.json already) but predicts no other workload's knee, which is a replay of the model
   * in virtual time per workload and level (a second or more of CPU). A run passes false (issue 40:
   * its end costs nothing the user did not ask for); `report DIR` predicts them. Default true.
   */
  predictKnees?: boolean
  /**
   * True when this process wrote DIR/requests.jsonl itself (a run's own report): its lines are read
   * back without the record schema's check, which they were built to pass. Default false.
   */
  ownRecords?: boolean
}

/** The note a run prints when it left the drawing to `report`. */
export function notDrawnNote(dir: string, why: NotDrawn = 'interrupted'): string {
  const because =
    why === 'interrupted'
      ? 'after the interrupt (seconds of drawing a stopped run does not wait for)'
      : '(--no-charts)'
  return `charts and report.html not drawn ${because}: \`llmbench report ${dir}\` draws them`
}

/** Why a run left the drawing to `report`: it was stopped, or the settings said so (`--no-charts`). */
export type NotDrawn = 'interrupted' | 'not asked'

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
 * Returns a note when the charts (and so report.html) could not be drawn, or were not asked for.
 */
export async function writeReports(
  dir: string,
  result: BenchResult,
  options: ReportOptions = {},
): Promise<string | null> {
  writeFileSync(join(dir, SUMMARY_FILE), renderMarkdown(result, options.predictKnees ?? true))
  const { server, requests, jobs } = await writeTablesAndTimelines(dir, result, options)
  if (options.draw !== undefined && options.draw !== true) return notDrawnNote(dir, options.draw)
  // vega and vega-lite (hundreds of files) load when a report is drawn, not when a run starts: a run
  // at a tight `ulimit -n` must get as far as its fd check, and `init` or `sim` never need them.
  let charts: Chart[]
  let timelines: TimelineChart[]
  let jobCharts: JobTimelineChart[]
  let modelFit: Chart | null
  try {
    charts = await (await import('./charts.js')).renderCharts(result, server)
    const { timelineChart } = await import('./request-timeline-chart.js')
    timelines = await Promise.all(requests.map(timelineChart))
    const { jobTimelineChart } = await import('./job-timeline-chart.js')
    jobCharts = await Promise.all(jobs.map(jobTimelineChart))
    modelFit = await (await import('./model-fit-chart.js')).modelFitChart(result)
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
  writeFileSync(
    join(dir, HTML_FILE),
    renderHtml(result, charts, timelines, modelFit, options.predictKnees ?? true, jobCharts),
  )
  return null
}

/**
 * The exports and what the timelines draw, from one read of the records. The records are out of
 * scope when this returns: they are not held while the chart library loads and draws.
 */
async function writeTablesAndTimelines(
  dir: string,
  result: BenchResult,
  options: ReportOptions,
): Promise<{ server: ServerTimeline | null; requests: LevelTimeline[]; jobs: JobTimeline[] }> {
  const records =
    options.records !== undefined
      ? options.records
      : (readRunRecords(join(dir, RECORDS_FILE), result.meta.run_id, options.ownRecords !== true)?.records ??
        null)
  await writeExports(dir, result, records, options)
  const levels = result.levels.map((level) => ({
    value: level.value,
    name: levelName(result.meta, level.value),
  }))
  return {
    server: readServerTimeline(dir, records, levels, result.meta.run_id),
    requests: records === null ? [] : requestTimelines(result, records),
    jobs: records === null ? [] : jobTimelines(result, records),
  }
}

/** EMFILE, also as the module loader reports it (a module "not found" because it could not be opened). */
function tooManyOpenFiles(error: unknown): boolean {
  const text =
    error instanceof Error ? `${(error as { code?: unknown }).code} ${error.message}` : String(error)
  return /EMFILE|ENFILE|ERR_MODULE_NOT_FOUND/.test(text)
}
