import { joinUrl } from '../config/url.js'
import { levelName } from '../metrics/level-name.js'
import type { LevelSummary } from '../metrics/summarize.js'
import type { BenchResult } from '../result/bench-result.js'
import { achievedNotes } from './achieved-cells.js'
import type { Chart } from './charts.js'
import { escapeHtml } from './escape-html.js'
import { errorMessageLines } from './failure-notes.js'
import { HEADLINE_STYLE, headlineHtml } from './headline.js'
import { INTERVAL_HEADS, intervalCells, intervalRows } from './interval-cells.js'
import type { JobTimelineChart } from './job-timeline-chart.js'
import { type LevelColumn, levelColumns } from './level-columns.js'
import { repeatsHtml } from './repeats-table.js'
import { MAX_TIMELINE_BARS } from './request-timeline.js'
import type { TimelineChart } from './request-timeline-chart.js'
import { sessionTablesHtml } from './session-tables.js'
import { speculativeTableHtml } from './speculative-table.js'
import { whatIfHtml } from './what-if-section.js'
import { lengthsLine, workloadNotes } from './workload-notes.js'

/** Shows a point's figures (its aria-label, written by Vega) next to the pointer: no library, no network. */
const TOOLTIP_SCRIPT = `
const tip = document.getElementById('tip');
document.querySelectorAll('figure svg [aria-label]').forEach((el) => {
  if (!/series:/.test(el.getAttribute('aria-label') || '')) return;
  el.addEventListener('mouseenter', () => { tip.textContent = el.getAttribute('aria-label'); tip.hidden = false; });
  el.addEventListener('mousemove', (e) => { tip.style.left = (e.pageX + 12) + 'px'; tip.style.top = (e.pageY + 12) + 'px'; });
  el.addEventListener('mouseleave', () => { tip.hidden = true; });
});`

const STYLE = `
body { font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 1200px; color: #222; }
h1 { font-size: 1.5rem; } h2 { font-size: 1.15rem; margin-top: 2rem; }
.meta { color: #555; } .verdict { background: #f4f6fb; border-left: 4px solid #4c78a8; padding: .6rem 1rem; }
.charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(560px, 1fr)); gap: 1rem; }
figure { margin: 0; } figure svg { max-width: 100%; height: auto; } table { border-collapse: collapse; font-size: .9rem; }
th, td { border: 1px solid #ddd; padding: .3rem .6rem; text-align: right; } th { background: #f4f4f4; }
td.verdict-saturated, td.verdict-overloaded, td.verdict-client-bound, td.verdict-misconfigured { font-weight: bold; color: #b03030; }
figure.timeline { margin-bottom: 1rem; } table.what-if td:last-child { text-align: left; }
#tip { position: absolute; background: #222; color: #fff; padding: .25rem .5rem; border-radius: 4px; font-size: .8rem; pointer-events: none; }`

/** Failures per level and class, with sample messages (already redacted and truncated). */
function errorsTable(result: BenchResult): string {
  const rows = result.levels
    .filter((level) => level.failed > 0)
    .flatMap((level) =>
      Object.entries(level.errors)
        .filter(([, count]) => count > 0)
        .map(([name, count]) => {
          const samples = (level.error_samples ?? [])
            .filter((sample) => sample.class === name)
            .map((sample) => escapeHtml(sample.message))
          return `<tr><td>${level.value}</td><td>${name}</td><td>${count}</td><td style="text-align:left">${samples.join('<br>')}</td></tr>`
        }),
    )
  if (rows.length === 0) return '<h2>Errors</h2><p>No failed request.</p>'
  return `<h2>Errors</h2><table><thead><tr><th>concurrency</th><th>class</th><th>requests</th><th>sample messages</th></tr></thead><tbody>${rows.join('\n')}</tbody></table>`
}

/** Per level, each request from send to end: where the wait for the first token grows, the server queues. */
function timelinesHtml(timelines: readonly TimelineChart[]): string {
  if (timelines.length === 0) return ''
  const figures = timelines
    .map(
      (chart) =>
        `<figure class="timeline" data-timeline="${chart.value}" data-bars="${chart.bars}" data-total="${chart.total}">${chart.svg}</figure>`,
    )
    .join('\n')
  return `<h2>Requests over time, per level</h2>
<p class="meta">Each measured request is a bar from its send to its end; the orange part is the wait for the first token (the black tick), the grey part the streaming. A level with more than ${MAX_TIMELINE_BARS} requests shows ${MAX_TIMELINE_BARS} of them, sampled evenly in send order.</p>
<div class="charts">
${figures}
</div>`
}

/** A slow and a typical job, turn by turn: where a job's time goes (the server's turns or the tools' gaps). */
function jobTimelinesHtml(charts: readonly JobTimelineChart[]): string {
  if (charts.length === 0) return ''
  const figures = charts
    .map(
      (chart) =>
        `<figure class="timeline" data-job-timeline="${chart.rank}" data-level="${chart.level}" data-job="${escapeHtml(chart.job)}" data-jct-ms="${chart.jct_ms}" data-turns="${chart.turns}" data-rows="${chart.rows}">${chart.svg}</figure>`,
    )
    .join('\n')
  return `<h2>Jobs turn by turn</h2>
<p class="meta">A slow job (the one nearest the level's p90 completion time) and a typical one (nearest the median), of the knee's level or else the highest: each turn a bar from its send to its last token, its wait for the first token in orange, a fan-out's branches on their own rows. The gaps between a turn and the next are the tool waits, when the server was not asked.</p>
<div class="charts">
${figures}
</div>`
}

/** Every figure's 95% interval, folded away; nothing for results of versions without intervals. */
function intervalsHtml(result: BenchResult): string {
  const rows = intervalRows(result)
  if (rows.length === 0) return ''
  const head = INTERVAL_HEADS.map((text) => `<th>${escapeHtml(text)}</th>`).join('')
  const body = rows
    .map(
      (row) =>
        `<tr>${intervalCells(row)
          .map((text) => `<td>${escapeHtml(text)}</td>`)
          .join('')}</tr>`,
    )
    .join('\n')
  return `<details class="intervals"><summary>95% intervals of every figure (method, effective sample size)</summary><table><thead><tr>${head}</tr></thead><tbody>${body}</tbody></table></details>`
}

/** A level's cell; the verdict's carries its class (the colour of a bad verdict) and the advice as its title. */
function cellHtml(column: LevelColumn, level: LevelSummary): string {
  const text = escapeHtml(column.cell(level))
  if (column.name !== 'verdict') return `<td>${text}</td>`
  return `<td class="verdict-${level.verdict}" title="${escapeHtml(level.advice)}">${text}</td>`
}

/** report.html: self-contained (styles, charts and script inline), opens from disk with no network. */
export function renderHtml(
  result: BenchResult,
  charts: readonly Chart[],
  timelines: readonly TimelineChart[] = [],
  modelFit: Chart | null = null,
  /** False: the "What if" knee table is left to `report` (see ReportOptions.predictKnees). */
  predictKnees = true,
  /** A job run's Gantts of a slow and a typical job (job-timeline.ts); none otherwise. */
  jobTimelines: readonly JobTimelineChart[] = [],
): string {
  const { meta } = result
  const columns = levelColumns(result, 'html')
  const rows = [...result.levels]
    .sort((a, b) => a.value - b.value)
    .map((level) => `<tr>${columns.map((column) => cellHtml(column, level)).join('')}</tr>`)
    .join('\n')
  // Saturation, capacity and the knee's cause head the page (headlineHtml); the details follow.
  const notes = [
    ...result.levels
      .filter((level) => level.verdict !== 'healthy' || level.failed > 0)
      .flatMap((level) => [
        `${levelName(meta, level.value)}: ${level.verdict}: ${level.advice}`,
        ...errorMessageLines(level),
      ]),
    ...result.levels.flatMap((level) =>
      [...(level.notes ?? []), ...(level.client.notes ?? [])].map(
        (note) => `${levelName(meta, level.value)}: note: ${note}`,
      ),
    ),
    ...result.advice.map((line) => `Advice: ${line}`),
    ...achievedNotes(result),
    ...workloadNotes(result),
    ...(meta.partial ? ['Partial result: the run was interrupted.'] : []),
  ]
  const figures = charts
    .map(
      (chart) =>
        `<figure data-chart="${chart.name}" data-series="${chart.series}" data-points="${chart.points}">${chart.svg}</figure>`,
    )
    .join('\n')
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>llmbench: ${escapeHtml(meta.target.model)}</title><style>${STYLE}${HEADLINE_STYLE}</style></head>
<body>
<h1>llmbench: ${escapeHtml(meta.target.model)}</h1>
<p class="meta">${escapeHtml(`${joinUrl(meta.target.base_url, meta.target.endpoint)}`)} · ${escapeHtml(lengthsLine(meta))} ·
${meta.trace != null ? `trace speeds ${meta.load.levels.join(', ')}x` : meta.load.mode === 'request_rate' ? `rates ${meta.load.levels.join(', ')} req/s (${escapeHtml(meta.load.arrival ?? 'poisson')})` : `levels ${meta.load.levels.join(', ')}`}${meta.workload.dataset === undefined ? '' : ` · ${escapeHtml(meta.workload.dataset)}`} · ${escapeHtml(meta.client.architecture)} · llmbench ${escapeHtml(meta.tool_version)} · ${escapeHtml(meta.started_at)}</p>
${headlineHtml(result)}
${notes.length === 0 ? '' : `<div class="verdict">${notes.map((line) => `<p>${escapeHtml(line)}</p>`).join('')}</div>`}
<h2>Charts</h2>
<div class="charts">
${figures}
</div>
${timelinesHtml(timelines)}
${jobTimelinesHtml(jobTimelines)}
<h2>Per level</h2>
<table class="levels"><thead><tr>${columns.map((column) => `<th>${escapeHtml(column.head)}</th>`).join('')}</tr></thead>
<tbody>
${rows}
</tbody></table>
${repeatsHtml(result)}
${sessionTablesHtml(result)}
${speculativeTableHtml(result)}
${intervalsHtml(result)}
${errorsTable(result)}
${whatIfHtml(result, modelFit, predictKnees)}
<div id="tip" hidden></div>
<script>${TOOLTIP_SCRIPT}</script>
</body></html>
`
}
