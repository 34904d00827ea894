import { round } from './distribution.js'
import { CONFIDENCE, studentT, type ThroughputInterval } from './intervals.js'
import type { LevelSummary } from './summarize.js'

type LevelFigures = Omit<LevelSummary, 'verdict' | 'advice'>

/**
 * One entry per level from its N runs: `pooled` is the summary of all the runs' measured records
 * together (the latency distributions, failures and their intervals: more samples of the same
 * level), and the figures over time are replaced by the runs' own, because the pooled records span
 * N windows with a drain between each, which is no window the level ran in. Throughput and
 * requests/s are the mean over the runs, the achieved concurrency the mean of the runs' means, the
 * duration their sum; the throughput intervals are the mean's, from the runs' within-run intervals
 * (so the knee's steps stay judged on within-run noise, as in a single run; the spread between the
 * runs is result.repeats'). The steady window is the first run's when every run had one, else null
 * (the knee then compares whole windows for every run alike).
 */
export function poolRepeats(runs: readonly LevelFigures[], pooled: LevelFigures): LevelFigures {
  if (runs.length < 2) return pooled
  const mean = (pick: (run: LevelFigures) => number): number =>
    runs.reduce((sum, run) => sum + pick(run), 0) / runs.length
  const steadyEverywhere = runs.every((run) => run.steady_window !== null)
  const first = runs[0] as LevelFigures
  const tokensSteady = round(
    mean((run) => run.output_tokens_per_s_steady),
    2,
  )
  const result: LevelFigures = {
    ...pooled,
    output_tokens_per_s: round(
      mean((run) => run.output_tokens_per_s),
      2,
    ),
    output_tokens_per_s_steady: tokensSteady,
    requests_per_s: round(
      mean((run) => run.requests_per_s),
      3,
    ),
    duration_s: round(
      runs.reduce((sum, run) => sum + run.duration_s, 0),
      3,
    ),
    steady_window:
      steadyEverywhere && first.steady_window !== null
        ? { ...first.steady_window, output_tokens_per_s: tokensSteady }
        : null,
    achieved_concurrency: {
      ...pooled.achieved_concurrency,
      mean: round(
        mean((run) => run.achieved_concurrency.mean),
        2,
      ),
      max: Math.max(...runs.map((run) => run.achieved_concurrency.max)),
    },
  }
  if (pooled.intervals !== undefined)
    result.intervals = {
      ...pooled.intervals,
      output_tokens_per_s: meanInterval(runs.map((run) => run.intervals?.output_tokens_per_s ?? null)),
      output_tokens_per_s_steady: steadyEverywhere
        ? meanInterval(runs.map((run) => run.intervals?.output_tokens_per_s_steady ?? null))
        : null,
    }
  return result
}

/**
 * The t interval of the mean of N runs' figures from each run's own t interval: each half-width is
 * its t quantile times a standard error, the mean's standard error is √(Σ se²)/N, with the runs'
 * degrees of freedom summed. Null when any run had none.
 */
export function meanInterval(intervals: readonly (ThroughputInterval | null)[]): ThroughputInterval | null {
  if (intervals.length === 0 || intervals.some((i) => i === null || i.low === null || i.high === null))
    return null
  const parts = intervals as ThroughputInterval[]
  let centre = 0
  let variance = 0
  let df = 0
  let slices = 0
  for (const part of parts) {
    const low = part.low as number
    const high = part.high as number
    const se = (high - low) / 2 / studentT(part.slices - 1, CONFIDENCE)
    centre += (low + high) / 2
    variance += se * se
    df += part.slices - 1
    slices += part.slices
  }
  const n = parts.length
  const half = (studentT(df, CONFIDENCE) * Math.sqrt(variance)) / n
  return { low: round(Math.max(0, centre / n - half), 2), high: round(centre / n + half, 2), slices }
}
