import type { Samples } from './accumulator.js'
import { round } from './distribution.js'
import type { Measure } from './measures.js'
import type { TokenTimeline } from './token-timeline.js'

/**
 * How precise a level's figures are: a 95% confidence interval for each latency percentile and for
 * throughput. The knee, the verdicts and `compare` decide on these rather than on bare figures, so
 * a step that noise could have made is not read as a change.
 *
 * Percentiles get the order-statistic interval: distribution-free, from the binomial count of
 * samples below the true percentile (exact, not a normal approximation, so it is honest for p95 of
 * 30 requests: its upper end is then unbounded, shown as null). Means get a Student t interval.
 * Requests under load are not independent (a slow period slows all of them at once), so both are
 * computed with an effective sample size from the series' autocorrelation in send order
 * (effectiveSampleSize) rather than the count. Throughput gets a Student t interval over equal time
 * slices of the window it is measured on: slices several requests long are close to independent.
 */

export const CONFIDENCE = 0.95

/** An interval's ends; null = unbounded on that side (too few samples to bound it). */
export interface Interval {
  low: number | null
  high: number | null
}

export interface ThroughputInterval extends Interval {
  /** Time slices the interval was estimated from. */
  slices: number
}

/** How each family of intervals is had, stated once in the result (each figure would repeat it). */
export const INTERVAL_METHODS = {
  percentiles: 'order-statistic',
  means: 't',
  throughput: 'slices-t',
} as const

/** The latency series a level's intervals cover: each measure's with a level distribution (measures.ts). */
export type IntervalMetric = NonNullable<Measure['field']>

export interface LevelIntervals {
  confidence: number
  /** Absent in results of versions before the methods and effective sizes were reported. */
  methods?: typeof INTERVAL_METHODS
  /** Over the level wall window (output_tokens_per_s); null when too short to slice. */
  output_tokens_per_s: ThroughputInterval | null
  /** Over the steady window (output_tokens_per_s_steady); null without one. */
  output_tokens_per_s_steady: ThroughputInterval | null
  /** Per run percentile ("p50", "p95", ...) and "mean", over successful requests like the distributions. */
  ttft_ms: Record<string, Interval>
  tpot_ms: Record<string, Interval>
  /** Absent in results of older versions. */
  itl_ms?: Record<string, Interval>
  e2e_ms: Record<string, Interval>
  /**
   * The effective sample size each interval was computed with, keyed like the intervals ("mean",
   * "p50", ...); absent in results of older versions.
   */
  effective_n?: Partial<Record<IntervalMetric, Record<string, number>>>
}

/**
 * The ranks (1-based) of the order statistics that bound the q-quantile of n samples with
 * probability at least `confidence`: low is the largest rank l with P(X <= l - 1) <= (1 - confidence)/2,
 * high the smallest h with P(X >= h) <= that, X ~ Binomial(n, q) counting the samples below the true
 * quantile. low = 0 or high = n + 1 when the samples cannot bound that side.
 */
function orderStatisticRanks(n: number, q: number, confidence: number): { low: number; high: number } {
  if (q <= 0) return { low: 0, high: 1 }
  if (q >= 1) return { low: n, high: n + 1 }
  const tail = (1 - confidence) / 2
  // The walk up the pmf starts where the mass below is negligible (under 1e-17 past 12 standard
  // deviations of at least 5) and stops at the high rank: a p50 of a million ITL gaps needs a few
  // thousand terms, not a million exp and log each (that was most of the intervals' cost).
  const sd = Math.sqrt(n * q * (1 - q))
  const from = sd >= 5 ? Math.max(0, Math.floor(n * q - 12 * sd)) : 0
  const logRatio = Math.log(q / (1 - q))
  let logPmf = logChoose(n, from) + from * Math.log(q) + (n - from) * Math.log1p(-q)
  let cdf = 0
  // cdf = P(X <= k): low is one past the last k with cdf <= tail (the ranks below `from` all are),
  // high one past the first with cdf >= 1 - tail.
  let low = from
  let high = n + 1
  for (let k = from; k <= n; k++) {
    cdf += Math.exp(logPmf)
    if (cdf <= tail && k < n) low = k + 1
    if (cdf >= 1 - tail) {
      high = k + 1
      break
    }
    logPmf += Math.log((n - k) / (k + 1)) + logRatio
  }
  return { low, high: Math.min(high, n + 1) }
}

/** ln C(n, k). */
function logChoose(n: number, k: number): number {
  return k === 0 || k === n ? 0 : logFactorial(n) - logFactorial(k) - logFactorial(n - k)
}

/** ln k!: summed below 20, Stirling's series above (error under 1e-15 there). */
function logFactorial(k: number): number {
  if (k < 20) {
    let sum = 0
    for (let i = 2; i <= k; i++) sum += Math.log(i)
    return sum
  }
  const x = k + 1
  return (
    (x - 0.5) * Math.log(x) -
    x +
    0.5 * Math.log(2 * Math.PI) +
    1 / (12 * x) -
    1 / (360 * x ** 3) +
    1 / (1260 * x ** 5)
  )
}

/**
 * The interval [x_(l), x_(u)] of order statistics of n sorted samples that holds the `percentile`
 * with probability at least `confidence` (orderStatisticRanks). With `effectiveN` below n (the
 * samples are correlated: effectiveSampleSize), the binomial is that of effectiveN samples and its
 * ranks are carried to the n samples at the same quantile position (r / (n_eff + 1) of the way up),
 * rounded outwards: the interval of effectiveN independent samples, drawn from the n at hand.
 */
export function percentileInterval(
  sorted: ArrayLike<number>,
  percentile: number,
  confidence = CONFIDENCE,
  effectiveN?: number,
): Interval {
  const n = sorted.length
  if (n === 0) return { low: null, high: null }
  const q = Math.min(1, Math.max(0, percentile / 100))
  const m = effectiveN === undefined ? n : Math.max(1, Math.min(n, Math.round(effectiveN)))
  const ranks = orderStatisticRanks(m, q, confidence)
  // m = n leaves the ranks as they are: r * (n + 1) / (n + 1) is r exactly in floating point.
  const lowRank = Math.floor((ranks.low * (n + 1)) / (m + 1))
  const highRank = Math.ceil((ranks.high * (n + 1)) / (m + 1))
  return {
    low: lowRank >= 1 ? round(sorted[lowRank - 1] as number) : null,
    high: highRank <= n ? round(sorted[highRank - 1] as number) : null,
  }
}

/**
 * The same interval of the q-quantile (0 < q < 1) with both ends always given: a sample too small
 * to bound a side (n = 5 for the median at 95%) gets its minimum or maximum there, the widest it has.
 * For what wants a number at each end (the drift check's medians); null for an empty sample.
 */
export function quantileInterval(
  sorted: ArrayLike<number>,
  q: number,
  confidence = CONFIDENCE,
): { low: number; high: number } | null {
  const n = sorted.length
  if (n === 0 || !(q > 0 && q < 1)) return null
  const ranks = orderStatisticRanks(n, q, confidence)
  const low = Math.max(ranks.low, 1)
  const high = Math.max(Math.min(ranks.high, n), low)
  return { low: sorted[low - 1] as number, high: sorted[high - 1] as number }
}

/** Each run percentile's interval, keyed as the distributions are ("p50"), from independent samples. */
export function percentileIntervals(
  samples: Samples,
  percentiles: readonly number[],
  confidence = CONFIDENCE,
): Record<string, Interval> {
  const sorted = samples.sorted()
  const out: Record<string, Interval> = {}
  for (const p of percentiles) out[`p${p}`] = percentileInterval(sorted, p, confidence)
  return out
}

/** Lags the autocorrelation is summed over, at most: past a few hundred requests a slow period has passed. */
export const MAX_LAG = 200
/** Pairs each lag's autocorrelation is estimated from, at most (in blocks spread over the series): bounds the cost. */
export const MAX_PAIRS = 10_000

/**
 * How many independent samples the series is worth: n / (1 + 2 Σ ρ_k), ρ_k its autocorrelation at
 * lag k in the order given (requests in the order they were sent: a slow period slows many in a
 * row, and each then tells less). The sum follows Geyer's initial positive sequence: lags are taken
 * in pairs (ρ_2m + ρ_2m+1) and summing stops at the first pair whose sum is not positive, where the
 * estimates are noise. At most min(n/4, MAX_LAG) lags, each estimated from at most MAX_PAIRS pairs
 * spread over the whole series, so the cost is bounded for any n. Clamped to [1, n]: a negatively
 * correlated series is not worth more than its count. A constant series is worth n.
 */
export function effectiveSampleSize(series: ArrayLike<number>): number {
  const n = series.length
  if (n < 4) return n
  let mean = 0
  for (let i = 0; i < n; i++) mean += series[i] as number
  mean /= n
  let variance = 0
  for (let i = 0; i < n; i++) variance += ((series[i] as number) - mean) ** 2
  variance /= n
  if (!(variance > 0)) return n
  const maxLag = Math.min(Math.floor(n / 4), MAX_LAG)
  // τ = 1 + 2 Σ_{k≥1} ρ_k = -1 + 2 Σ_{m≥0} (ρ_2m + ρ_2m+1), with ρ_0 = 1.
  let pairSum = 0
  for (let m = 0; 2 * m + 1 <= maxLag; m++) {
    const pair =
      (m === 0 ? 1 : autocorrelation(series, mean, 2 * m, variance)) +
      autocorrelation(series, mean, 2 * m + 1, variance)
    if (!(pair > 0)) break
    pairSum += pair
  }
  const tau = -1 + 2 * pairSum
  // τ ≤ 1 (negative correlation; an alternating series sums near 0): worth its count.
  return tau <= 1 ? n : Math.max(1, n / tau)
}

/** Blocks the pairs of a long series are taken from: contiguous runs read memory in order. */
const PAIR_BLOCKS = 10

/**
 * ρ at `lag` of a series with that mean and variance, from at most MAX_PAIRS pairs: all of them in
 * a short series, else PAIR_BLOCKS contiguous blocks spread evenly over it (pairs picked on a
 * stride instead missed the cache twice a pair: most of the cost on a million ITL gaps). Read in
 * place, no centred copy; callers pass Float64Arrays, so the loop sees one array type.
 */
function autocorrelation(series: ArrayLike<number>, mean: number, lag: number, variance: number): number {
  const n = series.length
  const pairs = n - lag
  const blocks = pairs <= MAX_PAIRS ? 1 : PAIR_BLOCKS
  const length = blocks === 1 ? pairs : Math.floor(MAX_PAIRS / PAIR_BLOCKS)
  const spacing = blocks === 1 ? 0 : (pairs - length) / (blocks - 1)
  let sum = 0
  for (let block = 0; block < blocks; block++) {
    const from = Math.floor(block * spacing)
    for (let t = from; t < from + length; t++)
      sum += ((series[t] as number) - mean) * ((series[t + lag] as number) - mean)
  }
  const count = blocks * length
  // The usual biased estimate (the sum over n - lag pairs divided by n): it keeps long lags small.
  return ((sum / count) * (pairs / n)) / variance
}

/**
 * The t interval of a sample's mean with the effective size in place of the count:
 * mean ± t(n_eff - 1) · s / √n_eff. Unbounded ends (null) below two effective samples.
 */
export function meanInterval(
  values: ArrayLike<number>,
  effectiveN: number,
  confidence = CONFIDENCE,
): Interval {
  const n = values.length
  if (n === 0) return { low: null, high: null }
  let sum = 0
  for (let i = 0; i < n; i++) sum += values[i] as number
  const mean = sum / n
  const m = Math.min(n, effectiveN)
  if (!(m >= 2)) return { low: null, high: null }
  let squares = 0
  for (let i = 0; i < n; i++) squares += ((values[i] as number) - mean) ** 2
  const half = studentT(Math.floor(m) - 1, confidence) * Math.sqrt(squares / (n - 1) / m)
  return { low: round(mean - half), high: round(mean + half) }
}

/** Slices a throughput interval is estimated from, at most: more add little and cost a pass each. */
export const MAX_SLICES = 12
/** Fewer slices than this give no usable spread: no interval. */
export const MIN_SLICES = 4

/**
 * A t interval of output tokens/s over [start, end] (ms, the timeline's clock), from the rates of
 * `slices` equal slices of it. Null when the window is empty.
 */
export function throughputInterval(
  timeline: TokenTimeline,
  start: number,
  end: number,
  slices = MAX_SLICES,
  confidence = CONFIDENCE,
): ThroughputInterval | null {
  if (!(end > start) || slices < MIN_SLICES) return null
  const width = (end - start) / slices
  const rates: number[] = []
  for (let i = 0; i < slices; i++) {
    const from = start + i * width
    rates.push(timeline.within(from, i === slices - 1 ? end : from + width) / (width / 1000))
  }
  const mean = rates.reduce((sum, rate) => sum + rate, 0) / slices
  const variance = rates.reduce((sum, rate) => sum + (rate - mean) ** 2, 0) / (slices - 1)
  const half = studentT(slices - 1, confidence) * Math.sqrt(variance / slices)
  return { low: round(Math.max(0, mean - half), 2), high: round(mean + half, 2), slices }
}

/** Two-sided 97.5% quantiles of Student's t by degrees of freedom (95% intervals). */
const T_975 = [
  Number.NaN,
  12.706,
  4.303,
  3.182,
  2.776,
  2.571,
  2.447,
  2.365,
  2.306,
  2.262,
  2.228,
  2.201,
  2.179,
  2.16,
  2.145,
  2.131,
]

/**
 * Two-sided 99.5% quantiles of Student's t by degrees of freedom (99% intervals): the capacity model's
 * stricter test before it keeps a term it will extrapolate (model/fit.ts).
 */
const T_995 = [
  Number.NaN,
  63.657,
  9.925,
  5.841,
  4.604,
  4.032,
  3.707,
  3.499,
  3.355,
  3.25,
  3.169,
  3.106,
  3.055,
  3.012,
  2.977,
  2.947,
  2.921,
  2.898,
  2.878,
  2.861,
  2.845,
  2.831,
  2.819,
  2.807,
  2.797,
  2.787,
  2.779,
  2.771,
  2.763,
  2.756,
  2.75,
]

/**
 * Exported for the between-run intervals of --repeat (analysis/repeats.ts) and compare's Welch test.
 * Past the tables, the first terms of the expansion in 1/df about the normal quantile.
 */
export function studentT(df: number, confidence = CONFIDENCE): number {
  if (confidence === CONFIDENCE) return T_975[df] ?? 1.96 + 2.4 / df
  if (confidence === 0.99) return T_995[df] ?? 2.576 + 4.9 / df
  throw new Error(`only 95% and 99% t intervals are tabled, not ${confidence * 100}%`)
}
