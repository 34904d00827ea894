import { round } from '../metrics/distribution.js'
import { CONFIDENCE, type Interval, studentT } from '../metrics/intervals.js'
import { figureKey, type Measure, type MeasureKey, measureOf } from '../metrics/measures.js'
import type { LevelSummary } from '../metrics/summarize.js'
import { findSaturation } from './saturation.js'

type LevelFigures = Omit<LevelSummary, 'verdict' | 'advice'>

/** The percentiles of a measure (measures.ts) each run's figures hold, named `<key>_p<N>_ms` as the result spells them. */
const REPEAT_LATENCIES = [
  ['ttft', 50],
  ['ttft', 95],
  ['tpot', 50],
  ['e2e', 50],
] as const satisfies readonly (readonly [MeasureKey, number])[]
type RepeatLatency = `${(typeof REPEAT_LATENCIES)[number][0]}_p${(typeof REPEAT_LATENCIES)[number][1]}_ms`

/** Each repeated latency: its result key and the level distribution it is read from. */
const LATENCY_FIGURES = REPEAT_LATENCIES.map(([key, percentile]) => {
  const measure = measureOf(key) as Measure & { field: NonNullable<Measure['field']> }
  return {
    name: `${figureKey(measure, percentile)}_ms` as RepeatLatency,
    field: measure.field,
    at: `p${percentile}`,
  }
})

/** The figures of one run of a level that result.repeats lists and spreads. */
export const REPEAT_METRICS = [
  'output_tokens_per_s',
  'output_tokens_per_s_steady',
  ...LATENCY_FIGURES.map((figure) => figure.name),
] as const
export type RepeatMetric = 'output_tokens_per_s' | 'output_tokens_per_s_steady' | RepeatLatency

/** One run of one level: its key figures (null where the run had no successful request). */
export type RepeatRun = { repeat: number; requests: number; ok: number; failed: number } & Record<
  RepeatMetric,
  number | null
>

/** A figure over the runs of a level: mean, sample SD and the 95% t interval of the mean. */
export interface BetweenRuns {
  runs: number
  mean: number
  sd: number
  low: number
  high: number
}

export interface RepeatLevel {
  value: number
  runs: RepeatRun[]
  /** Between-run spread per figure; null where fewer than two runs had it. */
  between: Record<RepeatMetric, BetweenRuns | null>
  /** The pooled level's own within-run intervals of the same figures (result.levels[].intervals), beside them. */
  within: Record<RepeatMetric, Interval | null>
}

export interface Repeats {
  /** Runs of each level (--repeat N). */
  count: number
  /** `interleaved`: each level's runs back to back, then the next level's. */
  order: 'interleaved'
  levels: RepeatLevel[]
  /**
   * The knee of each run, found on that run's own levels as the run's knee is (value null = none
   * placed), with its bracket and confidence (absent without a knee).
   */
  knees: {
    repeat: number
    value: number | null
    bracket?: [number, number] | null
    confidence?: 'clear' | 'uncertain'
  }[]
  /** How many runs placed the knee where, most first (value null = no knee). */
  knee_distribution: { value: number | null; runs: number }[]
  /** "knee 6 in 5 of 5", "knee 6 in 3, 8 in 2": the distribution in words. */
  knee_summary: string
}

/** The options the run's knee is found with, so each run's is found alike. */
export interface KneeOptions {
  ttftKey: string
  rateMode: boolean
  slots: number | null
}

/**
 * result.repeats from each run's own level summaries (`runs[r]` = run r's levels, in level order):
 * per level the runs' key figures and their spread, and per run the knee its own levels place.
 * Levels cut by an interrupt are left out of the knees as they are out of the run's.
 */
export function summarizeRepeats(
  runs: readonly (readonly LevelFigures[])[],
  pooled: readonly LevelFigures[],
  knee: KneeOptions,
): Repeats {
  const values = pooled.map((level) => level.value)
  const levels = values.map((value) => {
    const own = runs.flatMap((levels, repeat) => {
      const level = levels.find((l) => l.value === value)
      return level === undefined ? [] : [runFigures(level, repeat)]
    })
    const level = pooled.find((l) => l.value === value) as LevelFigures
    return {
      value,
      runs: own,
      between: Object.fromEntries(
        REPEAT_METRICS.map((metric) => [metric, betweenRuns(own.map((run) => run[metric]))]),
      ) as Record<RepeatMetric, BetweenRuns | null>,
      within: withinIntervals(level),
    }
  })
  const knees = runs.map((levels, repeat) => {
    const judged = levels.filter((level) => level.interrupted !== true)
    const found = findSaturation(judged, knee.ttftKey, knee.rateMode, knee.slots)
    if (found === null) return { repeat, value: null }
    return {
      repeat,
      value: found.value,
      ...(found.bracket === undefined ? {} : { bracket: found.bracket }),
      ...(found.confidence === undefined ? {} : { confidence: found.confidence }),
    }
  })
  const distribution = kneeDistribution(knees.map((k) => k.value))
  return {
    count: runs.length,
    order: 'interleaved',
    levels,
    knees,
    knee_distribution: distribution,
    knee_summary: describeKnees(distribution, knees.length),
  }
}

/** Each repeated latency's value, by its result key. */
function latencies<T>(of: (figure: (typeof LATENCY_FIGURES)[number]) => T): Record<RepeatLatency, T> {
  return Object.fromEntries(LATENCY_FIGURES.map((figure) => [figure.name, of(figure)])) as Record<
    RepeatLatency,
    T
  >
}

function runFigures(level: LevelFigures, repeat: number): RepeatRun {
  return {
    repeat,
    requests: level.requests,
    ok: level.ok,
    failed: level.failed,
    output_tokens_per_s: level.output_tokens_per_s,
    output_tokens_per_s_steady: level.output_tokens_per_s_steady,
    ...latencies((figure) => level[figure.field][figure.at] ?? null),
  }
}

function withinIntervals(level: LevelFigures): Record<RepeatMetric, Interval | null> {
  const i = level.intervals
  const ends = (interval: Interval | null | undefined): Interval | null =>
    interval == null ? null : { low: interval.low, high: interval.high }
  return {
    output_tokens_per_s: ends(i?.output_tokens_per_s),
    output_tokens_per_s_steady: ends(i?.output_tokens_per_s_steady),
    ...latencies((figure) => ends(i?.[figure.field]?.[figure.at])),
  }
}

/** Mean, SD and the t interval of the mean (its low end at least 0) over the runs that have the figure; null under two. */
export function betweenRuns(values: readonly (number | null)[]): BetweenRuns | null {
  const xs = values.filter((v): v is number => v !== null && Number.isFinite(v))
  if (xs.length < 2) return null
  const n = xs.length
  const mean = xs.reduce((sum, x) => sum + x, 0) / n
  const sd = Math.sqrt(xs.reduce((sum, x) => sum + (x - mean) ** 2, 0) / (n - 1))
  const half = (studentT(n - 1, CONFIDENCE) * sd) / Math.sqrt(n)
  return {
    runs: n,
    mean: round(mean, 3),
    sd: round(sd, 3),
    // Every figure listed is a time or a rate: an interval below 0 says only that the runs were few.
    low: round(Math.max(0, mean - half), 3),
    high: round(mean + half, 3),
  }
}

function kneeDistribution(values: readonly (number | null)[]): Repeats['knee_distribution'] {
  const counts = new Map<number | null, number>()
  for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1)
  // Most runs first; a tie goes to the lower level (the knee is a lower bound on trouble).
  return [...counts.entries()]
    .map(([value, runs]) => ({ value, runs }))
    .sort(
      (a, b) =>
        b.runs - a.runs || (a.value ?? Number.POSITIVE_INFINITY) - (b.value ?? Number.POSITIVE_INFINITY),
    )
}

/** "knee 6 in 5 of 5", "knee 6 in 3, 8 in 2", "knee 6 in 2, none in 1" (of 3 runs). */
export function describeKnees(distribution: Repeats['knee_distribution'], runs: number): string {
  const first = distribution[0]
  if (first === undefined) return 'no runs'
  if (distribution.length === 1)
    return first.value === null
      ? `no knee in any of ${runs} runs`
      : `knee ${first.value} in ${runs} of ${runs} runs`
  return `knee ${distribution.map((d) => `${d.value ?? 'none'} in ${d.runs}`).join(', ')} (of ${runs} runs)`
}
