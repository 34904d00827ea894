import type { Samples } from './accumulator.js'
import { round } from './distribution.js'
import type { TokenTimeline } from './token-timeline.js'

/**
 * How precise a level's figures are: a 95% confidence interval for each latency percentile and for
 * throughput. The knee, the verdicts and `compare` decide on these rather than on bare figures, so
 * a step that noise could have made is not read as a change.
 *
 * Percentiles get the order-statistic interval: distribution-free, from the binomial count of
 * samples below the true percentile (exact, not a normal approximation, so it is honest for p95 of
 * 30 requests: its upper end is then unbounded, shown as null). Throughput gets a Student t interval
 * over equal time slices of the window it is measured on: slices several requests long are close to
 * independent where single requests under load are not (a slow period slows all of them at once).
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

export interface LevelIntervals {
  confidence: number
  /** Over the level wall window (output_tokens_per_s); null when too short to slice. */
  output_tokens_per_s: ThroughputInterval | null
  /** Over the steady window (output_tokens_per_s_steady); null without one. */
  output_tokens_per_s_steady: ThroughputInterval | null
  /** Per run percentile ("p50", "p95", ...), over successful requests like the distributions. */
  ttft_ms: Record<string, Interval>
  tpot_ms: Record<string, Interval>
  e2e_ms: Record<string, Interval>
}

/**
 * The interval [x_(l), x_(u)] (1-based order statistics of n sorted samples) that holds the
 * `percentile` with probability at least `confidence`: l is the largest rank with P(X < l) at most
 * (1 - confidence)/2 and u the smallest with P(X >= u) at most that, X ~ Binomial(n, q) counting the
 * samples below the true percentile.
 */
export function percentileInterval(
  sorted: ArrayLike<number>,
  percentile: number,
  confidence = CONFIDENCE,
  /** Independent samples the n are worth (effectiveSampleSize); the interval widens when fewer. */
  effectiveN = sorted.length,
): Interval {
  const n = sorted.length
  if (n === 0) return { low: null, high: null }
  const m = Math.max(1, Math.min(n, Math.round(effectiveN)))
  const q = Math.min(1, Math.max(0, percentile / 100))
  const tail = (1 - confidence) / 2
  const cdf = binomialCdf(m, q)
  let lowRank = 0
  while (lowRank < m && (cdf[lowRank] as number) <= tail) lowRank++
  // cdf[k] = P(X <= k): the largest l with P(X <= l - 1) <= tail is the count of such k.
  let highRank = 1
  while (highRank <= m && (cdf[highRank - 1] as number) < 1 - tail) highRank++
  // Ranks among m independent samples, scaled to the n there are (the same quantile of the sample).
  const scale = (rank: number): number => Math.min(n, Math.max(1, Math.round((rank * n) / m)))
  return {
    low: lowRank >= 1 ? round(sorted[scale(lowRank) - 1] as number) : null,
    high: highRank <= m ? round(sorted[scale(highRank) - 1] as number) : null,
  }
}

/** Lags the autocorrelation is summed over, at most: enough for spells of a few hundred requests. */
const MAX_LAG = 200

/**
 * Independent samples a series is worth: n / (1 + 2 Σ ρ_k), summing the autocorrelations in pairs
 * until a pair's sum is no longer positive (Geyer's initial positive sequence), within [1, n].
 * Requests under load are not independent: a slow period slows many at once.
 */
export function effectiveSampleSize(series: ArrayLike<number>): number {
  const n = series.length
  if (n < 4) return n
  let mean = 0
  for (let i = 0; i < n; i++) mean += series[i] as number
  mean /= n
  let c0 = 0
  for (let i = 0; i < n; i++) c0 += ((series[i] as number) - mean) ** 2
  if (!(c0 > 0)) return n
  const rho = (lag: number): number => {
    let sum = 0
    for (let i = lag; i < n; i++) sum += ((series[i] as number) - mean) * ((series[i - lag] as number) - mean)
    return sum / c0
  }
  const maxLag = Math.min(MAX_LAG, Math.floor(n / 4))
  let sum = 0
  for (let lag = 1; lag + 1 <= maxLag; lag += 2) {
    const pair = rho(lag) + rho(lag + 1)
    if (pair <= 0) break
    sum += pair
  }
  return Math.max(1, Math.min(n, n / (1 + 2 * sum)))
}

/** P(X <= k) for k = 0..n, X ~ Binomial(n, q), from the pmf's ratio recurrence in logs (no overflow). */
function binomialCdf(n: number, q: number): Float64Array {
  const cdf = new Float64Array(n + 1)
  if (q <= 0) return cdf.fill(1)
  if (q >= 1) {
    cdf[n] = 1
    return cdf
  }
  const logRatio = Math.log(q / (1 - q))
  let logPmf = n * Math.log1p(-q)
  let sum = 0
  for (let k = 0; k <= n; k++) {
    sum += Math.exp(logPmf)
    cdf[k] = Math.min(1, sum)
    logPmf += Math.log((n - k) / (k + 1)) + logRatio
  }
  return cdf
}

/** Each run percentile's interval, keyed as the distributions are ("p50"). */
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

/** Exported for the between-run intervals of --repeat (analysis/repeats.ts) and compare's Welch test. */
export function studentT(df: number, confidence = CONFIDENCE): number {
  if (confidence !== CONFIDENCE) throw new Error(`only ${CONFIDENCE * 100}% throughput intervals are tabled`)
  return T_975[df] ?? 1.96 + 2.4 / df
}
