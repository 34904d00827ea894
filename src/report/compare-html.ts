import type { Comparison } from '../compare/compare.js'
import type { BenchResult } from '../result/bench-result.js'
import type { Chart } from './charts.js'
import { COMPARISON_COLUMNS, comparisonSummaryLines, metricCells, outcomeMark } from './compare-render.js'
import { escapeHtml } from './escape-html.js'
import { HEADLINE_STYLE, headlineHtml } from './headline.js'
import { PAIR_RATIOS_NOTE, PAIR_RATIOS_TITLE, pairRatioRows, ratioText } from './pair-ratios.js'
import { levelAxisTitle } from './workload-notes.js'

/** One compared run: where it is, and its summary. */
export interface ComparedRun {
  dir: string
  result: BenchResult
}

const STYLE = `
body { font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 1200px; color: #222; }
h1 { font-size: 1.5rem; } h2 { font-size: 1.15rem; margin-top: 2rem; } .meta { color: #555; }
.answer-line { font-size: 1.6rem; font-weight: 600; margin: .4rem 0; }
.outcome { display: inline-block; font-size: 2.2rem; font-weight: 800; padding: .2rem 1rem; border-radius: .4rem; color: #fff; margin: .2rem 0; }
.outcome-pass { background: #2a7a3a; } .outcome-fail { background: #b03030; } .outcome-inconclusive { background: #a06a00; }
.runs { display: grid; grid-template-columns: 1fr 1fr; gap: 1rem; } .runs h2 { margin: .5rem 0 0; }
.charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(560px, 1fr)); gap: 1rem; }
figure { margin: 0; } figure svg { max-width: 100%; height: auto; }
table { border-collapse: collapse; font-size: .9rem; } th, td { border: 1px solid #ddd; padding: .3rem .6rem; text-align: right; } th { background: #f4f4f4; }
td.regression { color: #b03030; font-weight: bold; } .runs .headline .answer { font-size: 1.2rem; }`

/** What a run's capacity is in one phrase: the SLO capacity, else the knee. */
function capacityPhrase(result: BenchResult): string {
  if (result.capacity !== null) return `${result.capacity.value} under the SLOs`
  if (result.saturation !== null) return `knee at ${result.saturation.value}`
  return result.capacity_summary !== null ? 'no level meets the SLOs' : 'no knee'
}

/** A line of the Markdown summary as HTML: **bold** kept, the rest escaped. */
const markdownLine = (line: string): string =>
  escapeHtml(line.replace(/^- /, '• ')).replace(/\*\*(.+?)\*\*/g, '<strong>$1</strong>')

/**
 * compare.html: the report's kind of page for two runs, self-contained. At the top, each run's
 * capacity side by side and the regression verdict; then each run's headline (knee, why, the
 * four-pattern table), the two runs on shared charts with both knees, and the comparison table.
 */
export function renderCompareHtml(
  base: ComparedRun,
  next: ComparedRun,
  comparison: Comparison,
  charts: readonly Chart[],
  all = false,
): string {
  const rows = comparison.levels
    .flatMap((level) =>
      level.metrics
        .filter((metric) => all || metric.threshold !== null)
        .map((metric) => {
          const cells = metricCells(metric, level, comparison)
          const last = cells.length - 1
          return `<tr>${cells
            .map(
              (cell, index) =>
                `<td${index === last && cell === 'REGRESSION' ? ' class="regression"' : ''}>${escapeHtml(cell)}</td>`,
            )
            .join('')}</tr>`
        }),
    )
    .join('\n')
  const figures = charts
    .map(
      (chart) =>
        `<figure data-chart="${chart.name}" data-series="${chart.series}" data-points="${chart.points}">${chart.svg}</figure>`,
    )
    .join('\n')
  const runSection = (label: string, run: ComparedRun): string =>
    `<div class="run" data-run="${label}"><h2>${label}: ${escapeHtml(run.dir)}</h2><p class="meta">${escapeHtml(run.result.meta.target.model)} · llmbench ${escapeHtml(run.result.meta.tool_version)} · ${escapeHtml(run.result.meta.started_at)}</p>${headlineHtml(run.result)}</div>`
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>llmbench compare: ${escapeHtml(base.dir)} vs ${escapeHtml(next.dir)}</title><style>${STYLE}${HEADLINE_STYLE}</style></head>
<body>
<h1>llmbench compare</h1>
<p class="outcome outcome-${outcomeMark(comparison).toLowerCase()}" data-outcome="${outcomeMark(comparison)}">${outcomeMark(comparison)}</p>
<p class="answer-line">Capacity: base ${escapeHtml(capacityPhrase(base.result))} → new ${escapeHtml(capacityPhrase(next.result))}</p>
<div class="summary">${comparisonSummaryLines(comparison)
    .filter((line) => line !== '')
    .map((line) => `<p>${markdownLine(line)}</p>`)
    .join('\n')}</div>
<div class="runs">
${runSection('base', base)}
${runSection('new', next)}
</div>
<h2>Charts</h2>
<div class="charts">
${figures}
</div>
<h2>Level by level</h2>
<table class="comparison"><thead><tr><th>${escapeHtml(levelAxisTitle(base.result.meta))}</th>${COMPARISON_COLUMNS.map((column) => `<th>${column}</th>`).join('')}</tr></thead>
<tbody>
${rows}
</tbody></table>
${pairRatiosHtml(comparison)}</body></html>
`
}

/** --paired: the pairs over time, B/A of each gated figure per pair in time order; nothing for two runs. */
function pairRatiosHtml(comparison: Comparison): string {
  const rows = pairRatioRows(comparison)
  if (rows.length === 0) return ''
  const width = Math.max(...rows.map((row) => row.ratios.length))
  const pairs = Array.from({ length: width }, (_, i) => i)
  const body = rows
    .map(
      (row) =>
        `<tr><td>${row.level}</td><td>${escapeHtml(row.metric)}</td>${pairs.map((i) => `<td>${ratioText(row.ratios[i] ?? null)}</td>`).join('')}</tr>`,
    )
    .join('\n')
  return `<h2>${PAIR_RATIOS_TITLE}</h2>
<p>${PAIR_RATIOS_NOTE}</p>
<table class="pair-ratios"><thead><tr><th>level</th><th>figure</th>${pairs.map((i) => `<th>pair ${i + 1}</th>`).join('')}</tr></thead>
<tbody>
${body}
</tbody></table>
`
}
