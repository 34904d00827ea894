import type { Comparison, MetricComparison } from '../analysis/compare.js'

const pct = (value: number | null): string =>
  value === null ? '–' : `${value >= 0 ? '+' : ''}${(value * 100).toFixed(1)}%`
const num = (value: number | null, digits = 1): string => (value === null ? '–' : value.toFixed(digits))

function change(metric: MetricComparison): string {
  if (metric.metric === 'success_rate')
    return metric.change === null
      ? '–'
      : `${metric.change >= 0 ? '+' : ''}${(metric.change * 100).toFixed(1)} pts`
  return pct(metric.change)
}

function verdict(metric: MetricComparison): string {
  if (metric.regressed) return 'REGRESSION'
  if (metric.beyond_threshold) return 'worse, not significant'
  if (metric.threshold === null) return ''
  return 'ok'
}

/** Markdown (also readable in a terminal): mismatches first, then per level the gated metrics. */
export function renderComparison(comparison: Comparison, all = false): string {
  const lines: string[] = []
  const rateMode = comparison.mode === 'request_rate'
  if (comparison.mismatches.length > 0) {
    lines.push('**The runs differ in set-up:**', ...comparison.mismatches.map((m) => `- ${m}`), '')
  }
  lines.push(
    comparison.regressions.length === 0
      ? '**No regression** beyond the thresholds that is statistically significant.'
      : `**${comparison.regressions.length} regression(s):** ${comparison.regressions
          .map(
            (r) =>
              `${rateMode ? `rate ${r.concurrency}/s` : `c=${r.concurrency}`} ${r.metric} ${pct(r.change)}`,
          )
          .join(', ')}`,
    '',
    `| ${rateMode ? 'rate (req/s)' : 'concurrency'} | metric | base | new | change | p-value | 95% interval | threshold | verdict |`,
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  )
  for (const level of comparison.levels) {
    for (const metric of level.metrics) {
      if (!all && metric.threshold === null) continue
      const interval =
        metric.interval === null ? '–' : `${pct(metric.interval.low)} … ${pct(metric.interval.high)}`
      const digits = metric.metric === 'success_rate' ? 4 : 1
      lines.push(
        `| ${level.concurrency} | ${metric.metric} | ${num(metric.base, digits)} | ${num(metric.new, digits)} | ${change(metric)} | ` +
          `${metric.p_value === null ? '–' : metric.p_value.toPrecision(2)} | ${interval} | ` +
          `${metric.threshold === null ? '–' : metric.metric === 'success_rate' ? `${(metric.threshold * 100).toFixed(1)} pts` : pct(metric.threshold)} | ${verdict(metric)} |`,
      )
    }
  }
  return `${lines.join('\n')}\n`
}
