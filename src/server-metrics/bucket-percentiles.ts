import type { Buckets } from './vocabulary.js'

/**
 * Increases of counters and histograms between scrapes, and percentiles of a histogram's increase.
 * A server restart sets its counters back to zero: a value below the one before is read as a reset,
 * and the new value counts whole (Prometheus's increase() does the same).
 */

/** The increase of a counter over consecutive scrapes' values; resets count from zero. */
export function counterIncrease(values: readonly number[]): number {
  let total = 0
  for (let i = 1; i < values.length; i++) {
    const before = values[i - 1] as number
    const after = values[i] as number
    total += after >= before ? after - before : after
  }
  return total
}

/** The increase of a histogram over consecutive scrapes; a count that fell, or bounds that changed, is a reset. */
export function histogramIncrease(scrapes: readonly Buckets[]): Buckets | null {
  const first = scrapes[0]
  if (first === undefined || scrapes.length < 2) return null
  const bounds = first.buckets.map(([bound]) => bound)
  const counts = bounds.map(() => 0)
  let count = 0
  let sum: number | null = 0
  for (let i = 1; i < scrapes.length; i++) {
    const before = scrapes[i - 1] as Buckets
    const after = scrapes[i] as Buckets
    if (!sameBounds(after, bounds)) return null // a server restarted with other buckets: not comparable
    const reset = after.count < before.count || !sameBounds(before, bounds)
    for (let b = 0; b < bounds.length; b++) {
      const now = (after.buckets[b] as [number, number])[1]
      const then = reset ? 0 : (before.buckets[b] as [number, number])[1]
      counts[b] = (counts[b] as number) + Math.max(0, now - then)
    }
    count += reset ? after.count : after.count - before.count
    sum =
      sum === null || after.sum === null || (!reset && before.sum === null)
        ? null
        : sum + after.sum - (reset ? 0 : (before.sum as number))
  }
  return { buckets: bounds.map((bound, b) => [bound, counts[b] as number]), count, sum }
}

function sameBounds(histogram: Buckets, bounds: readonly number[]): boolean {
  return (
    histogram.buckets.length === bounds.length && histogram.buckets.every(([bound], i) => bound === bounds[i])
  )
}

/**
 * The value below which `percentile` percent of the observations fall, interpolated linearly inside
 * the bucket that holds that rank (Prometheus's histogram_quantile): the first bucket starts at 0,
 * and a rank in the +Inf bucket gives the highest finite bound (the true value is above it). Its
 * precision is the bucket width: between 0.5 s and 0.75 s, say, whatever the true spread. Null
 * when nothing was observed. Not bounded by the mean: see bucketEstimate.
 */
export function bucketPercentile(histogram: Buckets, percentile: number): number | null {
  return holdingBucket(histogram, percentile)?.interpolated ?? null
}

/** A percentile read from buckets: the estimate, and the interval the true value is known to be in. */
export interface BucketEstimate {
  /** Interpolated inside the bucket, then bounded by the mean (see bucketEstimate). */
  value: number
  /** The bucket's lower bound (0 for the first bucket). */
  low: number
  /** The bucket's upper bound or the mean's bound, the lower of the two; null when neither exists (+Inf bucket, no _sum). */
  high: number | null
}

/**
 * The percentile with what the buckets and the exact mean say of it. For a quantity that is never
 * negative, at least (1 − q) of the n observations are at or above the q-quantile, so their sum is
 * at least n(1 − q) times it: the q-quantile is at most mean / (1 − q) (Markov's inequality). Linear
 * interpolation inside a wide first bucket can say far more (the simulator's queue time: p50 150 ms
 * from a bucket (0, 300 ms] when the mean was 0.003 ms); the estimate and the bucket's top are cut
 * there. The true value lies in [low, high]; a rank in the +Inf bucket gets its upper end from the
 * bound alone.
 */
export function bucketEstimate(histogram: Buckets, percentile: number): BucketEstimate | null {
  const bucket = holdingBucket(histogram, percentile)
  if (bucket === null) return null
  // 1 − q as (100 − percentile) / 100: exact for whole percentiles (1 − 0.99 is not 0.01).
  const above = (100 - percentile) / 100
  const bound =
    histogram.sum !== null && Number.isFinite(histogram.sum) && histogram.sum >= 0 && above > 0
      ? histogram.sum / histogram.count / above
      : Number.POSITIVE_INFINITY
  const value = Math.min(bucket.interpolated, bound)
  const high = Math.min(bucket.high, bound)
  // The sum and the buckets of one scrape can disagree a little (read at different moments): the
  // interval still holds the value.
  return { value, low: Math.min(bucket.low, value), high: Number.isFinite(high) ? high : null }
}

/** The bucket holding the percentile's rank, its bounds, and the value interpolated in it; null when empty. */
function holdingBucket(
  histogram: Buckets,
  percentile: number,
): { low: number; high: number; interpolated: number } | null {
  const total = histogram.count
  if (total <= 0 || histogram.buckets.length === 0) return null
  const rank = (percentile / 100) * total
  let lowerBound = 0
  let lowerCount = 0
  for (const [bound, cumulative] of histogram.buckets) {
    if (cumulative >= rank && cumulative > lowerCount) {
      const interpolated =
        lowerBound + ((bound - lowerBound) * (rank - lowerCount)) / (cumulative - lowerCount)
      return { low: lowerBound, high: bound, interpolated }
    }
    lowerBound = bound
    lowerCount = cumulative
  }
  return { low: lowerBound, high: Number.POSITIVE_INFINITY, interpolated: lowerBound }
}
