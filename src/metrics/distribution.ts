/**
 * Summary of a sample of latencies: mean, min, max and each requested percentile, computed exactly
 * from the raw samples (no histogram buckets). Percentiles use linear interpolation between closest
 * ranks (numpy's default, "type 7"): p = x[floor(h)] + (h - floor(h)) * (x[floor(h)+1] - x[floor(h)]),
 * with h = (n - 1) * p / 100. An empty sample gives nulls, never zeros.
 */
export type Distribution = Record<string, number | null> & {
  count: number
  mean: number | null
  min: number | null
  max: number | null
}

/** `p50`, `p95`, `p99.9`: the key under which a percentile is reported. */
export function percentileKey(percentile: number): string {
  return `p${Number(percentile.toFixed(3))}`
}

export function percentileOfSorted(sorted: ArrayLike<number>, percentile: number): number | null {
  const n = sorted.length
  if (n === 0) return null
  const h = ((n - 1) * percentile) / 100
  const lower = Math.floor(h)
  const upper = Math.min(lower + 1, n - 1)
  const low = sorted[lower] as number
  return low + (h - lower) * ((sorted[upper] as number) - low)
}

export function summarizeSamples(samples: ArrayLike<number>, percentiles: readonly number[]): Distribution {
  // A typed copy sorts numerically without a comparator; a level's ITL sample is one per event.
  return summarizeSorted(Float64Array.from(samples).sort(), percentiles)
}

/** The same over values already sorted ascending. */
export function summarizeSorted(sorted: Float64Array, percentiles: readonly number[]): Distribution {
  const n = sorted.length
  let sum = 0
  for (const value of sorted) sum += value
  const summary: Distribution = {
    count: n,
    mean: n === 0 ? null : round(sum / n),
    min: n === 0 ? null : round(sorted[0] as number),
    max: n === 0 ? null : round(sorted[n - 1] as number),
  }
  for (const p of percentiles) {
    const value = percentileOfSorted(sorted, p)
    summary[percentileKey(p)] = value === null ? null : round(value)
  }
  return summary
}

/** Microsecond resolution is more than any figure here can honestly claim. */
export function round(value: number, digits = 3): number {
  const factor = 10 ** digits
  return Math.round(value * factor) / factor
}
