import type { TopLevelSpec } from 'vega-lite'
import { msAxis, pointTooltip } from './chart-axes.js'
import { render } from './charts.js'
import { escapeHtml } from './escape-html.js'
import type { HistoryEntry } from './history.js'

export const HISTORY_HTML_FILE = 'history.html'

interface TrendPoint {
  run: string
  value: number
  series: string
}

/** A run on the trend's axis: its order and start, short enough to read under a tick. */
const runLabel = (entry: HistoryEntry, index: number): string =>
  `#${index + 1} ${entry.started_at.slice(0, 16).replace('T', ' ')}`

async function trendSvg(
  title: string,
  unit: string,
  points: TrendPoint[],
  order: string[],
  ms = false,
): Promise<string> {
  const spec: TopLevelSpec = {
    title,
    width: 520,
    height: 240,
    background: 'white',
    data: { values: points },
    mark: { type: 'line', point: { size: 50, filled: true }, tooltip: true },
    encoding: {
      x: {
        field: 'run',
        type: 'ordinal',
        sort: order,
        title: 'run (oldest first)',
        axis: { labelAngle: -30, labelLimit: 160 },
      },
      y: {
        field: 'value',
        type: 'quantitative',
        title: unit,
        ...(ms ? msAxis(points.map((point) => point.value)) : {}),
      } as never,
      color: { field: 'series', type: 'nominal', title: null, legend: { labelLimit: 240 } },
      strokeDash: { field: 'series', type: 'nominal', title: null },
      tooltip: pointTooltip({ field: 'run', type: 'ordinal' }),
    },
  }
  return render(spec)
}

/**
 * history.html: the trend of the runs appended to a history folder, release over release: the knee and
 * the SLO capacity, peak output throughput, and TTFT p95 at the widest level, each run a point. The
 * same figures as `report --history`'s table, which follows the charts.
 */
export async function renderHistoryHtml(entries: readonly HistoryEntry[], table: string): Promise<string> {
  const order = entries.map(runLabel)
  const point =
    (series: string) =>
    (value: number | null | undefined, index: number): TrendPoint[] =>
      value == null ? [] : [{ run: order[index] as string, value, series }]
  const widest = (entry: HistoryEntry) =>
    entry.levels.reduce<HistoryEntry['levels'][number] | null>(
      (a, b) => (a === null || b.value > a.value ? b : a),
      null,
    )
  const charts = await Promise.all([
    trendSvg(
      'Knee and capacity per run',
      'level',
      entries.flatMap((entry, index) => [
        ...point('knee')(entry.saturation, index),
        ...point('capacity under the SLOs')(entry.capacity, index),
      ]),
      order,
    ),
    trendSvg(
      'Peak output throughput per run',
      'output tokens/s',
      entries.flatMap((entry, index) =>
        point('peak output tokens/s')(
          entry.levels.length === 0
            ? null
            : Math.max(...entry.levels.map((level) => level.output_tokens_per_s)),
          index,
        ),
      ),
      order,
    ),
    trendSvg(
      'TTFT p95 at the widest level per run',
      'TTFT p95 (log scale)',
      entries.flatMap((entry, index) =>
        point('TTFT p95 at the widest level')(widest(entry)?.ttft_p95_ms, index),
      ),
      order,
      true,
    ),
  ])
  const rows = table
    .trim()
    .split('\n')
    .filter((_line, index) => index !== 1)
    .map((line, index) => {
      const cells = line
        .split('|')
        .slice(1, -1)
        .map((cell) => escapeHtml(cell.trim()))
      const tag = index === 0 ? 'th' : 'td'
      return `<tr>${cells.map((cell) => `<${tag}>${cell}</${tag}>`).join('')}</tr>`
    })
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>llmbench history</title><style>
body { font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 1200px; color: #222; }
.charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(560px, 1fr)); gap: 1rem; } figure { margin: 0; } figure svg { max-width: 100%; height: auto; }
table { border-collapse: collapse; font-size: .9rem; } th, td { border: 1px solid #ddd; padding: .3rem .6rem; text-align: right; } th { background: #f4f4f4; }
</style></head>
<body>
<h1>llmbench history: ${entries.length} run${entries.length === 1 ? '' : 's'}</h1>
<div class="charts">
${charts.map((svg, index) => `<figure data-chart="history-${index}">${svg}</figure>`).join('\n')}
</div>
<table>${rows.join('\n')}</table>
</body></html>
`
}
