import { UNDER_DRIVEN_FACTOR } from '../config/plan-warnings.js'
import { levelName } from '../metrics/level-name.js'
import type { LevelSummary } from '../metrics/summarize.js'
import type { BenchResult } from '../result/bench-result.js'

/**
 * Achieved concurrency and steady-window throughput beside the nominal figures, the same in the
 * terminal table, summary.md and report.html.
 */

/** Achieved concurrency is shown beside the nominal one when they differ by more than this share. */
export const ACHIEVED_SHOWN_BEYOND = 0.1
/** The steady-window throughput is shown beside the whole-window one when they differ by more than this. */
const STEADY_SHOWN_BEYOND = 0.02

type Level = Pick<LevelSummary, 'value' | 'output_tokens_per_s'> &
  Partial<
    Pick<LevelSummary, 'achieved_concurrency' | 'output_tokens_per_s_steady' | 'steady_window' | 'embeddings'>
  >

/** The streams the level's records were meant to hold: a shard holds its share of the level. */
function streamsOf(level: Level): number {
  return level.achieved_concurrency?.streams ?? level.value
}

function underDriven(level: Level, rateMode: boolean): boolean {
  const achieved = level.achieved_concurrency
  const streams = streamsOf(level)
  if (rateMode || achieved === undefined || streams <= 0) return false
  return Math.abs(achieved.mean - streams) / streams > ACHIEVED_SHOWN_BEYOND
}

/** "64" or "64 (avg 31.2, max 40)"; a shard's share is named: "64 (this shard: 32, avg 20.1, max 32)" */
export function levelCell(level: Level, rateMode: boolean): string {
  const streams = streamsOf(level)
  const share = streams === level.value ? '' : `this shard: ${streams}, `
  if (!underDriven(level, rateMode))
    return share === '' ? String(level.value) : `${level.value} (${share.slice(0, -2)})`
  const achieved = level.achieved_concurrency as NonNullable<Level['achieved_concurrency']>
  return `${level.value} (${share}avg ${achieved.mean.toFixed(1)}, max ${achieved.max})`
}

/** "164.1" or "158.3 (steady 170.2)"; "n/a" for embeddings, which generate no tokens. */
export function throughputCell(level: Level): string {
  if (level.embeddings !== undefined) return 'n/a'
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
  const short = result.levels.filter((level) => level.steady_window == null && underDriven(level, rateMode))
  // As the plan's warning says it: enough requests per stream for the widest level concerned.
  const enough = UNDER_DRIVEN_FACTOR * Math.max(0, ...short.map((level) => level.value))
  return short.map((level) => {
    const { mean, max } = level.achieved_concurrency
    const fix = requests === null ? '' : `: set --requests ${enough} or more (or --duration)`
    return (
      `${levelName(result.meta, level.value)}: ${mean.toFixed(1)} requests in flight on average ` +
      `(max ${max}), never holding its streams for long; the knee and verdicts count it as that concurrency${fix}`
    )
  })
}
