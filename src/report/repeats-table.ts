import type { BetweenRuns, RepeatMetric } from '../analysis/repeats.js'
import type { Interval } from '../metrics/intervals.js'
import { levelName } from '../metrics/level-name.js'
import type { BenchResult } from '../result/bench-result.js'
import { escapeHtml } from './escape-html.js'

/** The figures the table shows, of result.repeats' six: throughput and the latencies the knee and compare read most. */
const SHOWN: readonly { metric: RepeatMetric; head: string; digits: number }[] = [
  { metric: 'output_tokens_per_s', head: 'tok/s', digits: 1 },
  { metric: 'ttft_p95_ms', head: 'TTFT p95 ms', digits: 0 },
  { metric: 'tpot_p50_ms', head: 'TPOT p50 ms', digits: 1 },
]

/** The table's heading, columns and rows; null without repeats. */
function repeatsTable(result: BenchResult): { title: string; head: string[]; rows: string[][] } | null {
  const repeats = result.repeats
  if (repeats === undefined) return null
  return {
    title: `Between runs (${repeats.count} runs, each level's runs back to back; ${repeats.knee_summary})`,
    head: ['level', 'runs', ...SHOWN.map((s) => `${s.head}: mean ± SD (between-run 95%; within-run 95%)`)],
    rows: repeats.levels.map((level) => [
      levelName(result.meta, level.value),
      String(level.runs.length),
      ...SHOWN.map(({ metric, digits }) => cell(level.between[metric], level.within[metric], digits)),
    ]),
  }
}

/**
 * summary.md's "Between runs" table (--repeat): per level and figure, the mean over the runs ± their
 * SD with the t interval of the mean, beside the pooled level's within-run interval, so a reader sees
 * whether the runs differ by more than one run's own noise. Empty without repeats.
 */
export function repeatsMarkdown(result: BenchResult): string[] {
  const table = repeatsTable(result)
  if (table === null) return []
  return [
    '',
    `**${table.title}:**`,
    '',
    `| ${table.head.join(' | ')} |`,
    `|${' --- |'.repeat(table.head.length)}`,
    ...table.rows.map((row) => `| ${row.join(' | ')} |`),
  ]
}

/** The same table in report.html, under its heading; empty without repeats. */
export function repeatsHtml(result: BenchResult): string {
  const table = repeatsTable(result)
  if (table === null) return ''
  const row = (cells: string[], tag: 'th' | 'td'): string =>
    `<tr>${cells.map((text) => `<${tag}>${escapeHtml(text)}</${tag}>`).join('')}</tr>`
  return `<h2>${escapeHtml(table.title)}</h2><table class="repeats"><thead>${row(table.head, 'th')}</thead><tbody>${table.rows.map((cells) => row(cells, 'td')).join('')}</tbody></table>`
}

function cell(between: BetweenRuns | null, within: Interval | null, digits: number): string {
  if (between === null) return '–'
  const f = (x: number | null): string => (x === null ? '…' : x.toFixed(digits))
  const own = within === null ? '' : `; ${f(within.low)}–${f(within.high)}`
  return `${f(between.mean)} ± ${f(between.sd)} (${f(between.low)}–${f(between.high)}${own})`
}
