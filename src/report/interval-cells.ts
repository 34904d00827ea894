import type { Distribution } from '../metrics/distribution.js'
import {
  INTERVAL_METHODS,
  type Interval,
  type IntervalMetric,
  type LevelIntervals,
} from '../metrics/intervals.js'
import { levelName } from '../metrics/level-name.js'
import type { LevelSummary } from '../metrics/summarize.js'
import type { BenchResult } from '../result/bench-result.js'

/**
 * How a figure's 95% interval is written in the tables: `0.9–2.8`, an end the samples cannot bound
 * as `?` (p99 of 40 requests has no upper end: `0.9–?`, never a made-up number).
 */
export function intervalText(interval: Interval, digits: number): string {
  const end = (value: number | null) => (value === null ? '?' : value.toFixed(digits))
  return `${end(interval.low)}–${end(interval.high)}`
}

/**
 * The interval beside a percentile from too few samples, as short as it can be honest: `(25–31)`,
 * `(≥25)` where the samples cannot bound it above (the usual case: a p99 of 16 requests is at
 * least its 15th slowest, no telling how much more), `(≤31)` below, `(?)` neither.
 */
export function tailIntervalText(interval: Interval, digits: number): string {
  const { low, high } = interval
  if (low !== null && high !== null) return `(${intervalText(interval, digits)})`
  if (low !== null) return `(≥${low.toFixed(digits)})`
  if (high !== null) return `(≤${high.toFixed(digits)})`
  return '(?)'
}

/** A level's interval of `key` ("p99", "mean") of a latency, when its result has one. */
export function intervalOf(level: LevelSummary, metric: string, key: string): Interval | null {
  const intervals = level.intervals as (LevelIntervals & Record<string, unknown>) | undefined
  const figure = intervals?.[metric] as Record<string, Interval> | undefined
  return figure?.[key] ?? null
}

const LATENCIES: readonly { metric: IntervalMetric; label: string; digits: number }[] = [
  { metric: 'ttft_ms', label: 'TTFT ms', digits: 0 },
  { metric: 'tpot_ms', label: 'TPOT ms', digits: 1 },
  { metric: 'itl_ms', label: 'ITL ms', digits: 1 },
  { metric: 'e2e_ms', label: 'E2E ms', digits: 0 },
]

/** One row of the intervals table: a figure of a level, its value, its interval, what it was had with. */
export interface IntervalRow {
  level: string
  figure: string
  value: string
  interval: string
  effectiveN: string
  method: string
}

/**
 * Every figure of every level that has an interval, for the intervals table of summary.md and
 * report.html: each latency's percentiles and mean, then throughput. Empty for results of versions
 * without intervals; the effective n is blank where an older result does not say it.
 */
export function intervalRows(result: BenchResult): IntervalRow[] {
  const rows: IntervalRow[] = []
  for (const level of [...result.levels].sort((a, b) => a.value - b.value)) {
    const intervals = level.intervals
    if (intervals == null) continue
    const name = levelName(result.meta, level.value)
    // Results of issue 25's build do not name the methods: theirs were these (without effective n).
    const methods = intervals.methods ?? INTERVAL_METHODS
    for (const { metric, label, digits } of LATENCIES) {
      const figure = intervals[metric]
      const distribution = level[metric] as Distribution | null | undefined
      // No samples (a figure that does not apply, embeddings' TTFT): no row of question marks.
      if (figure == null || distribution == null || distribution.count === 0) continue
      for (const [key, interval] of Object.entries(figure)) {
        const value = distribution[key]
        rows.push({
          level: name,
          figure: `${label} ${key}`,
          value: value == null ? '?' : value.toFixed(digits),
          interval: intervalText(interval, digits),
          effectiveN: String(intervals.effective_n?.[metric]?.[key] ?? ''),
          method: key === 'mean' ? methods.means : methods.percentiles,
        })
      }
    }
    const throughput = [
      ['output tok/s', level.output_tokens_per_s, intervals.output_tokens_per_s],
      ['output tok/s steady', level.output_tokens_per_s_steady, intervals.output_tokens_per_s_steady],
    ] as const
    for (const [figure, value, interval] of throughput) {
      if (interval == null) continue
      rows.push({
        level: name,
        figure,
        value: value.toFixed(1),
        interval: intervalText(interval, 1),
        effectiveN: `${interval.slices} slices`,
        method: methods.throughput,
      })
    }
  }
  return rows
}

export const INTERVAL_HEADS = ['level', 'figure', 'value', '95% interval', 'effective n', 'method'] as const

/** A row's cells in the order of INTERVAL_HEADS. */
export function intervalCells(row: IntervalRow): string[] {
  return [row.level, row.figure, row.value, row.interval, row.effectiveN, row.method]
}
