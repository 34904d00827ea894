import type { Comparison, LevelComparison, MetricComparison } from '../compare/compare.js'

const pct = (value: number | null): string =>
  value === null ? '–' : `${value >= 0 ? '+' : ''}${(value * 100).toFixed(1)}%`
const num = (value: number | null, digits = 1): string => (value === null ? '–' : value.toFixed(digits))

function changeText(metric: MetricComparison): string {
  if (metric.metric === 'success_rate')
    return metric.change === null
      ? '–'
      : `${metric.change >= 0 ? '+' : ''}${(metric.change * 100).toFixed(1)} pts`
  return pct(metric.change)
}

function metricVerdict(metric: MetricComparison, level: LevelComparison, comparison: Comparison): string {
  // A regression at an inconclusive level is gated only with --strict-client: then it is listed.
  const gated = comparison.regressions.some((r) => r.value === level.value && r.metric === metric.metric)
  if (metric.regressed) return gated ? 'REGRESSION' : 'inconclusive'
  if (metric.beyond_threshold) return 'worse, not significant'
  if (metric.threshold === null) return ''
  return 'ok'
}

/** The comparison table's columns, after the level (shared by the Markdown and the HTML page). */
export const COMPARISON_COLUMNS = [
  'metric',
  'base',
  'new',
  'change',
  'p-value',
  '95% interval',
  'threshold',
  'verdict',
]

/** One metric's row in the comparison table: the level, then COMPARISON_COLUMNS. */
export function metricCells(
  metric: MetricComparison,
  level: LevelComparison,
  comparison: Comparison,
): string[] {
  const interval =
    metric.interval === null ? '–' : `${pct(metric.interval.low)} … ${pct(metric.interval.high)}`
  const digits = metric.metric === 'success_rate' ? 4 : 1
  const threshold =
    metric.threshold === null
      ? '–'
      : metric.metric === 'success_rate'
        ? `${(metric.threshold * 100).toFixed(1)} pts`
        : pct(metric.threshold)
  return [
    String(level.value),
    metric.metric,
    num(metric.base, digits),
    num(metric.new, digits),
    changeText(metric),
    metric.p_value === null ? '–' : metric.p_value.toPrecision(2),
    interval,
    threshold,
    metricVerdict(metric, level, comparison),
  ]
}

/** What comes before the table, in Markdown: set-up mismatches, the regressions, the inconclusive levels. */
export function comparisonSummaryLines(comparison: Comparison): string[] {
  const rateMode = comparison.mode === 'request_rate'
  const lines: string[] = []
  if (comparison.mismatches.length > 0) {
    lines.push('**The runs differ in set-up:**', ...comparison.mismatches.map((m) => `- ${m}`), '')
  }
  lines.push(
    comparison.regressions.length === 0
      ? '**No regression** beyond the thresholds that is statistically significant.'
      : `**${comparison.regressions.length} regression(s):** ${comparison.regressions
          .map((r) => `${rateMode ? `rate ${r.value}/s` : `c=${r.value}`} ${r.metric} ${pct(r.change)}`)
          .join(', ')}`,
    ...inconclusiveLines(comparison, rateMode),
  )
  return lines
}

/** Markdown (also readable in a terminal): mismatches first, then per level the gated metrics. */
export function renderComparison(comparison: Comparison, all = false): string {
  const rateMode = comparison.mode === 'request_rate'
  const lines: string[] = [
    ...comparisonSummaryLines(comparison),
    '',
    `| ${rateMode ? 'rate (req/s)' : 'concurrency'} | ${COMPARISON_COLUMNS.join(' | ')} |`,
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  ]
  for (const level of comparison.levels) {
    for (const metric of level.metrics) {
      if (!all && metric.threshold === null) continue
      lines.push(`| ${metricCells(metric, level, comparison).join(' | ')} |`)
    }
  }
  return `${lines.join('\n')}\n`
}

/** Levels where a client was not trustworthy: named, with what they would have flagged. */
function inconclusiveLines(comparison: Comparison, rateMode: boolean): string[] {
  const levels = comparison.levels.filter((level) => level.inconclusive !== null)
  if (levels.length === 0) return []
  const name = (value: number): string => (rateMode ? `rate ${value}/s` : `c=${value}`)
  return [
    '',
    `**Inconclusive** (a run's client was not trustworthy there, so a difference may be the client's; not gated unless --strict-client):`,
    ...levels.map((level) => {
      const flagged = comparison.inconclusive
        .filter((entry) => entry.value === level.value)
        .map((entry) => `${entry.metric} ${pct(entry.change)}`)
      return `- ${name(level.value)}: ${level.inconclusive}${flagged.length > 0 ? `; would have flagged ${flagged.join(', ')}` : ''}`
    }),
  ]
}
