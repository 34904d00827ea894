import type { Distribution } from '../metrics/distribution.js'

/**
 * A percentile means something only when some samples lie beyond it: p99 needs at least 100
 * samples (one slower than it), p95 20, p90 10. Below that the figure is the few slowest requests,
 * not a tail: it is printed with a mark and a one-line legend under the table.
 */
export const SMALL_SAMPLE_MARK = '*'

/** The fewest samples for which percentile `p` has at least one sample above it. */
export function samplesNeeded(percentile: number): number {
  return percentile >= 100 ? Number.POSITIVE_INFINITY : Math.ceil(100 / (100 - percentile) - 1e-9)
}

/** The percentile key is "p99" or "p99.9". */
export function tooFewSamples(distribution: Pick<Distribution, 'count'>, key: string): boolean {
  const percentile = Number(key.slice(1))
  return Number.isFinite(percentile) && distribution.count < samplesNeeded(percentile)
}

/** The legend for the marks, naming the thresholds of the percentiles the run reports. */
export function smallSampleLegend(percentiles: readonly number[]): string {
  const needs = percentiles
    .filter((p) => samplesNeeded(p) > 2)
    .map((p) => `p${p} ≥${samplesNeeded(p)}`)
    .join(', ')
  return `${SMALL_SAMPLE_MARK} too few samples for that percentile (${needs}): the few slowest requests, not a tail`
}
