import {
  type Comparison,
  type LevelComparison,
  type MetricComparison,
  PAIRED_FLOOR_PERCENTILE,
} from '../compare/compare.js'
import type { KneeComparison, KneePlace } from '../compare/knee-gate.js'
import { pairRatioMarkdown } from './pair-ratios.js'

const pct = (value: number | null): string =>
  value === null ? '–' : `${value >= 0 ? '+' : ''}${(value * 100).toFixed(1)}%`
const num = (value: number | null, digits = 1): string => (value === null ? '–' : value.toFixed(digits))
const points = (value: number): string => `${value >= 0 ? '+' : ''}${(value * 100).toFixed(1)} pts`

/** Figures that are shares (0..1), compared in points: success rate and fluidity. */
const isShare = (metric: string): boolean => metric === 'success_rate' || metric === 'fluidity_p90'

/** The unit of a metric's absolute figures. */
const unitOf = (metric: string): string => (metric === 'throughput' ? 'tok/s' : 'ms')

function changeText(metric: MetricComparison): string {
  if (metric.change === null) return '–'
  if (isShare(metric.metric)) return points(metric.change)
  const absolute = metric.absolute_change
  return absolute === null
    ? pct(metric.change)
    : `${pct(metric.change)} (${absolute >= 0 ? '+' : ''}${absolute.toFixed(1)} ${unitOf(metric.metric)})`
}

function metricVerdict(metric: MetricComparison, level: LevelComparison, comparison: Comparison): string {
  // A regression at an inconclusive level (or in a drifted run) is listed only when it gates.
  const gated = comparison.regressions.some((r) => r.value === level.value && r.metric === metric.metric)
  if (metric.regressed) return gated ? 'REGRESSION' : 'inconclusive'
  if (metric.threshold === null) return ''
  if (metric.not_gated !== null) return `not gated: ${metric.not_gated}`
  if (metric.within_noise === true) return "worse, within the runs' remeasurement noise"
  if (metric.interval_beyond_threshold) return 'worse, within the floor'
  if (metric.beyond_threshold) return 'worse, interval reaches the threshold'
  return 'ok'
}

/** The comparison table's columns, after the level (shared by the Markdown and the HTML page). */
export const COMPARISON_COLUMNS = [
  'metric',
  'base',
  'new',
  'change',
  '95% interval',
  'threshold',
  'floor',
  'verdict',
]

/** One metric's row in the comparison table: the level, then COMPARISON_COLUMNS. */
export function metricCells(
  metric: MetricComparison,
  level: LevelComparison,
  comparison: Comparison,
): string[] {
  const share = isShare(metric.metric)
  const interval =
    metric.interval === null
      ? '–'
      : share
        ? `${points(metric.interval.low)} … ${points(metric.interval.high)}`
        : `${pct(metric.interval.low)} … ${pct(metric.interval.high)}`
  const threshold = metric.threshold === null ? '–' : share ? points(metric.threshold) : pct(metric.threshold)
  return [
    String(level.value),
    metric.metric,
    num(metric.base, share ? 4 : 1),
    num(metric.new, share ? 4 : 1),
    changeText(metric),
    interval,
    threshold.replace(/^\+/, ''),
    metric.floor === null ? '–' : `${metric.floor} ${unitOf(metric.metric)}`,
    metricVerdict(metric, level, comparison),
  ]
}

/** The outcome a person sees first (issue 36): the exit code's meaning in one word. */
export function outcomeMark(comparison: Comparison): 'PASS' | 'FAIL' | 'INCONCLUSIVE' {
  if (comparison.outcome === 'regression') return 'FAIL'
  return comparison.outcome === 'inconclusive' ? 'INCONCLUSIVE' : 'PASS'
}

/** "PASS: 4 levels, 36 gated figures compared": the mark and how much it covers, before any detail. */
function markLine(comparison: Comparison): string {
  const gated = comparison.levels.reduce(
    (sum, level) => sum + level.metrics.filter((metric) => metric.threshold !== null).length,
    0,
  )
  const what = {
    PASS: 'no regression',
    FAIL: `${comparison.regressions.length} regression(s), exit 1`,
    INCONCLUSIVE: 'cannot tell, exit 5',
  }[outcomeMark(comparison)]
  return `**${outcomeMark(comparison)}**: ${what} (${comparison.levels.length} levels, ${gated} gated figures compared)`
}

/** What comes before the table, in Markdown: the mark, set-up mismatches, the outcome, the knee, the inconclusive parts. */
export function comparisonSummaryLines(comparison: Comparison): string[] {
  const rateMode = comparison.mode === 'request_rate'
  const name = (value: number): string => (rateMode ? `rate ${value}/s` : `c=${value}`)
  const lines: string[] = [markLine(comparison), '']
  if (comparison.mismatches.length > 0) {
    lines.push('**The runs differ in set-up:**', ...comparison.mismatches.map((m) => `- ${m}`), '')
  }
  if (comparison.outcome === 'regression') {
    lines.push(
      `**${comparison.regressions.length} regression(s):** ${comparison.regressions
        .map((r) =>
          r.metric === 'knee' && comparison.knee !== null
            ? kneeChange(comparison.knee)
            : `${name(r.value)} ${r.metric} ${r.metric.endsWith('_tail') ? points(r.change) : pct(r.change)}`,
        )
        .join(', ')}`,
    )
  } else if (comparison.outcome === 'inconclusive') {
    lines.push(
      '**Inconclusive:** the evidence cannot say whether the server regressed; re-run both on a quiet machine (exit 5).',
    )
  } else {
    lines.push(
      '**No regression:** no gated figure is worse than its threshold across its whole 95% interval and by more than its floor.',
      ...resolutionLines(comparison, name),
    )
  }
  lines.push(
    basisLine(comparison),
    kneeLine(comparison.knee),
    ...kneeRunsLine(comparison),
    ...notGatedLines(comparison),
    ...tailLines(comparison, name),
    ...driftLines(comparison),
    ...inconclusiveLines(comparison, name),
  )
  return lines
}

/**
 * What a pass covers: the widest interval against its threshold (compare/resolution.ts). Said only
 * when it reaches past the threshold, so a pass on a noisy runner is not read as ruling out a change
 * that its intervals leave open.
 */
function resolutionLines(comparison: Comparison, name: (value: number) => string): string[] {
  const widest = comparison.resolution
  if (widest == null || widest.worst_case <= widest.threshold) return []
  const size = isShare(widest.metric) ? points(widest.worst_case) : pct(widest.worst_case)
  const threshold = isShare(widest.metric) ? points(widest.threshold) : pct(widest.threshold)
  return [
    `**What the pass covers:** the intervals leave room for ${name(widest.value)} ${widest.metric} to be up to ${size} worse (its threshold ${threshold.replace(/^\+/, '')}): a regression that size could pass unseen here; more requests per level, more pairs or a quieter runner narrow the intervals.`,
  ]
}

/** The one figure of a paired run judged otherwise than pair by pair (compare.ts PAIRED_FLOOR_PERCENTILE). */
const PAIRED_FLOOR_SENTENCE = `TPOT p${PAIRED_FLOOR_PERCENTILE} is judged over each side's pooled blocks (a block bootstrap), as the floor of the server's own cost: a neighbour switching on and off slows some blocks of either side, not the fastest requests of both.`

/** What the intervals rest on: said every time, so a pass on a noisy runner can be read for what it is. */
function basisLine(comparison: Comparison): string {
  const basis = comparison.basis
  if (basis?.kind === 'paired' && basis.mode === 'together')
    return `Basis: paired blocks, loaded together: one run's two targets given each block of every level at the same time (${basis.pairs} pairs, --paired-mode together); base and new are the means over the blocks, the interval a paired t interval of the per-pair differences, so drift during the run hits both sides of a pair in the same seconds; one client drove both. ${PAIRED_FLOOR_SENTENCE}`
  if (basis?.kind === 'paired')
    return `Basis: paired blocks: one run's two targets measured in alternating blocks of each level (${basis.pairs} pairs, --paired); base and new are the means over the blocks, the interval a paired t interval of the per-pair differences, so drift during the run hits both sides alike. ${PAIRED_FLOOR_SENTENCE}`
  if (basis?.kind === 'between-run')
    return `Basis: between-run variance: both runs repeated each level (${basis.runs.base} and ${basis.runs.new} runs, --repeat); base and new are the means over the runs, the interval Welch's t interval of the change in the mean.`
  return "Basis: within-run: a block bootstrap over each run's requests (one run a side; --repeat on both judges on the spread between runs instead)."
}

/** Gated tail percentiles that had too few requests to gate: said once, so a pass is not read as covering them. */
function notGatedLines(comparison: Comparison): string[] {
  const metrics = new Set(
    comparison.levels.flatMap((level) =>
      level.metrics.filter((metric) => metric.not_gated !== null).map((metric) => metric.metric),
    ),
  )
  if (metrics.size === 0) return []
  return [
    `Not gated for too few requests (a percentile needs 5 values beyond it in each run): ${[...metrics].join(', ')} at some levels; run more requests per level to gate them.`,
  ]
}

/** The tail-share checks (tail-share.ts): where a tail percentile could not gate, the share beyond the base p90. */
function tailLines(comparison: Comparison, name: (value: number) => string): string[] {
  return comparison.levels.flatMap((level) =>
    (level.tails ?? []).map((tail) => {
      const where = tail.base_p90 === null ? "A's p90 in their pair" : `the base p90 (${tail.base_p90} ms)`
      const verdict = tail.regressed ? 'regression' : 'ok'
      const allowed = ` by more than ${(tail.allowance.relative * 100).toFixed(0)}% and ${tail.allowance.absolute} ms`
      return `${name(level.value)} ${tail.figure.toUpperCase()} tail: ${(tail.share * 100).toFixed(0)}% of the new requests beyond ${where}${allowed}, expected ${(tail.expected * 100).toFixed(0)}% (p = ${tail.p_value}, alpha ${tail.alpha}, threshold +${(tail.threshold * 100).toFixed(0)} pts): ${verdict}`
    }),
  )
}

const placeText = (place: KneePlace): string =>
  place.value === null
    ? `none up to ${place.bracket[0]}`
    : `${place.value} (between ${place.bracket[0]} and ${place.bracket[1] ?? 'beyond'})`

const kneeChange = (knee: KneeComparison): string => `knee ${placeText(knee.base)} → ${placeText(knee.new)}`

/** The knee of both runs, and whether it is part of the gate: never shown as if it were when it is not. */
function kneeLine(knee: KneeComparison | null): string {
  if (knee === null) return 'Knee: not compared (a run does not record it); the knee is not part of the gate.'
  const verdict =
    knee.moved === 'none'
      ? 'no change (the brackets overlap)'
      : knee.moved === 'down'
        ? 'moved down, past both brackets'
        : 'moved up, past both brackets'
  const gated =
    knee.threshold === null
      ? 'the knee is not part of the gate'
      : 'gated: a knee whose bracket lies below the base bracket fails'
  return `Knee: base ${placeText(knee.base)} → new ${placeText(knee.new)}: ${verdict}; ${gated}.`
}

/** --repeat: each side's knees over its runs, beside the gated knee (a knee that moves between runs is no regression of its own). */
function kneeRunsLine(comparison: Comparison): string[] {
  const runs = comparison.knee_runs
  if (runs === undefined) return []
  return [
    `Knee over the runs: base ${runs.base ?? 'one run'} → new ${runs.new ?? 'one run'} (shown, not gated).`,
  ]
}

function driftLines(comparison: Comparison): string[] {
  if (comparison.drift.length === 0)
    return comparison.drift_size > 0
      ? [
          '',
          `Noise band: the runs measured their first level again at the end and it moved by up to ${pct(comparison.drift_size)}; a change gates only beyond its threshold by more than its own figures moved (TTFT's for TTFT, TPOT's and the engine's decode for TPOT, all of them for E2E and throughput).`,
        ]
      : []
  return [
    '',
    `**The environment drifted** (a run measured its control level again and it moved${Number.isFinite(comparison.drift_size) ? `, by up to ${pct(comparison.drift_size)}` : ''}), so only changes beyond the threshold by more than that are gated:`,
    ...comparison.drift.map((reason) => `- ${reason}`),
  ]
}

/** Levels where a client was not trustworthy: named, with what they would have flagged. */
function inconclusiveLines(comparison: Comparison, name: (value: number) => string): string[] {
  const levels = comparison.levels.filter((level) => level.inconclusive !== null)
  const flaggedAt = (value: number | null, reason: string | null): string[] =>
    comparison.inconclusive
      .filter(
        (entry) => (value === null || entry.value === value) && (reason === null || entry.reason === reason),
      )
      .map((entry) => `${entry.metric} ${pct(entry.change)}`)
  const lines: string[] = []
  if (comparison.drift.length > 0) {
    const flagged = flaggedAt(null, comparison.drift.join('; '))
    if (flagged.length > 0) lines.push(`- would have flagged ${flagged.join(', ')}`)
  }
  if (levels.length === 0) return lines
  return [
    ...lines,
    '',
    `**Client not trustworthy** at these levels, so a difference may be the client's (a client-bound level makes the outcome inconclusive; a noisy one where it would have flagged something; gated with --strict-client):`,
    ...levels.map((level) => {
      const flagged = flaggedAt(level.value, level.inconclusive)
      return `- ${name(level.value)}: ${level.inconclusive}${flagged.length > 0 ? `; would have flagged ${flagged.join(', ')}` : ''}`
    }),
  ]
}

/**
 * Markdown (also readable in a terminal): mismatches first, then per level the gated metrics, then
 * for a --paired run the pairs over time (`pairs` false leaves them to the caller's own lines).
 */
export function renderComparison(comparison: Comparison, all = false, pairs = true): string {
  const rateMode = comparison.mode === 'request_rate'
  const lines: string[] = [
    ...comparisonSummaryLines(comparison),
    '',
    `| ${rateMode ? 'rate (req/s)' : 'concurrency'} | ${COMPARISON_COLUMNS.join(' | ')} |`,
    `|${' --- |'.repeat(COMPARISON_COLUMNS.length + 1)}`,
  ]
  for (const level of comparison.levels) {
    for (const metric of level.metrics) {
      if (!all && metric.threshold === null) continue
      lines.push(`| ${metricCells(metric, level, comparison).join(' | ')} |`)
    }
  }
  // --paired: the pairs over time after the table (the gate prints them as its own lines instead).
  if (pairs) lines.push(...pairRatioMarkdown(comparison))
  return `${lines.join('\n')}\n`
}
