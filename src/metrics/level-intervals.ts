import { type Accumulator, Samples } from './accumulator.js'
import { isOk } from './derive.js'
import { percentileOfSorted } from './distribution.js'
import type { LevelContext } from './figure.js'
import {
  CONFIDENCE,
  effectiveSampleSize,
  INTERVAL_METHODS,
  type Interval,
  type IntervalMetric,
  type LevelIntervals,
  meanInterval,
  percentileInterval,
  throughputInterval,
} from './intervals.js'
import { MEASURES } from './measures.js'

/**
 * A level's intervals figure: each latency's percentiles and mean, and throughput, each with its 95%
 * interval and the effective sample size it was computed with. The latencies are kept with their
 * send times (8 bytes a value in typed arrays, as the distributions keep theirs) because the
 * effective size is read from the series in the order the requests were sent, not the order they
 * ended; the records are not kept.
 */
/** The measures a level holds a distribution of (measures.ts), each with its intervals. */
const INTERVAL_MEASURES = MEASURES.filter(
  (measure): measure is Extract<(typeof MEASURES)[number], { field: string }> => 'field' in measure,
)

export function intervalsAccumulator({
  options,
  tally,
  figures,
}: LevelContext): Accumulator<{ intervals: LevelIntervals }> {
  // One entry per successful request, aligned; NaN where the request has no such figure.
  const sent = new Samples()
  const series = INTERVAL_MEASURES.map((measure) => ({ measure, values: new Samples() }))
  return {
    add(record) {
      if (!isOk(record)) return
      sent.push(record.sent_at)
      for (const { measure, values } of series) {
        const before = values.length
        if (measure.values === 'one') measure.read(record, values, null)
        if (values.length === before) values.push(Number.NaN)
      }
    },
    result() {
      const order = sendOrder(sent)
      const effective: Partial<Record<IntervalMetric, Record<string, number>>> = {}
      const latencies: Partial<Record<IntervalMetric, Record<string, Interval>>> = {}
      for (const { measure, values } of series) {
        // ITL's values are the gaps of each request together, request by request in the order they
        // were recorded: the level's timeline holds them already.
        const figure =
          measure.values === 'one'
            ? seriesIntervals(inSendOrder(values, order), options.percentiles)
            : seriesIntervals(tally.timeline.gaps(), options.percentiles, tally.timeline.sortedGaps())
        effective[measure.field] = figure.effectiveN
        latencies[measure.field] = figure.intervals
      }
      return {
        intervals: {
          confidence: CONFIDENCE,
          methods: INTERVAL_METHODS,
          ...levelThroughputIntervals({ tally, figures }),
          ...(latencies as Pick<LevelIntervals, 'ttft_ms' | 'tpot_ms' | 'itl_ms' | 'e2e_ms'>),
          effective_n: effective,
        },
      }
    },
  }
}

/** Indices of the requests by send time (ties in the order recorded). */
function sendOrder(sent: Samples): Uint32Array {
  const times = sent.copy()
  const order = new Uint32Array(times.length)
  let sorted = true
  for (let i = 0; i < order.length; i++) {
    order[i] = i
    if (i > 0 && (times[i] as number) < (times[i - 1] as number)) sorted = false
  }
  if (!sorted) order.sort((a, b) => (times[a] as number) - (times[b] as number) || a - b)
  return order
}

/** The figure's values in send order, requests without it left out. */
function inSendOrder(values: Samples, order: Uint32Array): Float64Array {
  const out = new Float64Array(order.length)
  let filled = 0
  for (let i = 0; i < order.length; i++) {
    const value = values.at(order[i] as number)
    if (!Number.isNaN(value)) out[filled++] = value
  }
  return filled === out.length ? out : out.subarray(0, filled)
}

/**
 * Each percentile's and the mean's interval of a series in send order, with the effective sample
 * size each used. The mean's is the series' own. A percentile's is that of the series of whether
 * each value is at most the percentile: what the binomial of the order-statistic interval counts,
 * and less correlated than the values in the tail (a p99 indicator is 0 through most slow periods),
 * so the tail is not widened for the body's correlation.
 */
export function seriesIntervals(
  inOrder: Float64Array,
  percentiles: readonly number[],
  sorted: Float64Array = Float64Array.from(inOrder).sort(),
): { intervals: Record<string, Interval>; effectiveN: Record<string, number> } {
  const intervals: Record<string, Interval> = {}
  const effectiveN: Record<string, number> = {}
  // Float64Array like the values: one array type keeps effectiveSampleSize's loop monomorphic (a
  // Uint8Array here made it several times slower).
  const below = new Float64Array(inOrder.length)
  for (const p of percentiles) {
    const key = `p${p}`
    const threshold = percentileOfSorted(sorted, p)
    let n = 0
    if (threshold !== null) {
      for (let i = 0; i < inOrder.length; i++) below[i] = (inOrder[i] as number) <= threshold ? 1 : 0
      n = effectiveSampleSize(below)
    }
    intervals[key] = percentileInterval(sorted, p, CONFIDENCE, n)
    effectiveN[key] = Math.round(n)
  }
  const meanN = effectiveSampleSize(inOrder)
  intervals.mean = meanInterval(inOrder, meanN)
  effectiveN.mean = Math.round(meanN)
  return { intervals, effectiveN }
}

/**
 * Throughput's intervals over the level wall window and over its steady window (null without one),
 * from the figures declared before the intervals (steady_window).
 */
export function levelThroughputIntervals({
  tally,
  figures,
}: Pick<LevelContext, 'tally' | 'figures'>): Pick<
  LevelIntervals,
  'output_tokens_per_s' | 'output_tokens_per_s_steady'
> {
  const steady = figures.steady_window ?? null
  const start = tally.windowStart
  return {
    output_tokens_per_s:
      tally.requests === 0 ? null : throughputInterval(tally.timeline, start, tally.windowEnd),
    output_tokens_per_s_steady:
      steady === null
        ? null
        : throughputInterval(tally.timeline, start + steady.start_s * 1000, start + steady.end_s * 1000),
  }
}
