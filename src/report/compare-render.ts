import type { Comparison, LevelComparison, MetricComparison } from '../compare/compare.js'

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

function verdict(metric: MetricComparison, level: LevelComparison, comparison: Comparison): string {
  // A regression at an inconclusive level is gated only with --strict-client: then it is listed.
  const gated = comparison.regressions.some((r) => r.value === level.value && r.metric === metric.metric)
  if (metric.regressed) return gated ? 'REGRESSION' : 'inconclusive'
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
          .map((r) => `${rateMode ? `rate ${r.value}/s` : `c=${r.value}`} ${r.metric} ${pct(r.change)}`)
          .join(', ')}`,
    ...inconclusiveLines(comparison, rateMode),
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
        `| ${level.value} | ${metric.metric} | ${num(metric.base, digits)} | ${num(metric.new, digits)} | ${change(metric)} | ` +
          `${metric.p_value === null ? '–' : metric.p_value.toPrecision(2)} | ${interval} | ` +
          `${metric.threshold === null ? '–' : metric.metric === 'success_rate' ? `${(metric.threshold * 100).toFixed(1)} pts` : pct(metric.threshold)} | ${verdict(metric, level, comparison)} |`,
      )
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
