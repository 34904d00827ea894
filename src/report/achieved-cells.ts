import type { LevelSummary } from '../metrics/summarize.js'
import { UNDER_DRIVEN_FACTOR } from '../run/plan-warnings.js'
import type { BenchResult } from './result-json.js'
import { levelName } from './workload-notes.js'

/**
 * Achieved concurrency and steady-window throughput beside the nominal figures, the same in the
 * terminal table, summary.md and report.html.
 */

/** Achieved concurrency is shown beside the nominal one when they differ by more than this share. */
export const ACHIEVED_SHOWN_BEYOND = 0.1
/** The steady-window throughput is shown beside the whole-window one when they differ by more than this. */
const STEADY_SHOWN_BEYOND = 0.02

type Level = Pick<LevelSummary, 'concurrency' | 'output_tokens_per_s'> &
  Partial<Pick<LevelSummary, 'achieved_concurrency' | 'output_tokens_per_s_steady' | 'steady_window'>>

function underDriven(level: Level, rateMode: boolean): boolean {
  const achieved = level.achieved_concurrency
  if (rateMode || achieved === undefined || level.concurrency <= 0) return false
  return Math.abs(achieved.mean - level.concurrency) / level.concurrency > ACHIEVED_SHOWN_BEYOND
}

/** "64" or "64 (avg 31.2, max 40)" */
export function concurrencyCell(level: Level, rateMode: boolean): string {
  if (!underDriven(level, rateMode)) return String(level.concurrency)
  const achieved = level.achieved_concurrency as NonNullable<Level['achieved_concurrency']>
  return `${level.concurrency} (avg ${achieved.mean.toFixed(1)}, max ${achieved.max})`
}

/** "164.1" or "158.3 (steady 170.2)" */
export function throughputCell(level: Level): string {
  const whole = level.output_tokens_per_s
  const steady = level.steady_window == null ? undefined : level.output_tokens_per_s_steady
  if (steady === undefined || whole <= 0 || Math.abs(steady / whole - 1) <= STEADY_SHOWN_BEYOND)
    return whole.toFixed(1)
  return `${whole.toFixed(1)} (steady ${steady.toFixed(1)})`
}

/**
 * One line per level that never held its streams (no steady window) while averaging fewer requests
 * in flight than its streams, with what to change.
 */
export function achievedNotes(result: BenchResult): string[] {
  const rateMode = result.meta.load?.mode === 'request_rate'
  const requests = result.meta.load?.requests_per_level ?? null
  return result.levels
    .filter((level) => level.steady_window == null && underDriven(level, rateMode))
    .map((level) => {
      const { mean, max } = level.achieved_concurrency
      const enough = Math.max(UNDER_DRIVEN_FACTOR * level.concurrency, 2 * (requests ?? 0))
      const fix = requests === null ? '' : `: set --requests ${enough} or more (or --duration)`
      return (
        `${levelName(result.meta, level.concurrency)}: ${mean.toFixed(1)} requests in flight on average ` +
        `(max ${max}), never holding its streams for long; the knee and verdicts count it as that concurrency${fix}`
      )
    })
}
