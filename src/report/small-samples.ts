import type { Distribution } from '../metrics/distribution.js'

/**
 * A percentile means something only when some samples lie beyond it: p99 needs at least 100
 * samples (one slower than it), p95 20, p90 10. Below that the figure is the few slowest requests,
 * not a tail: it is printed with its 95% interval, which says so by its width or its open end (`1200 (≥900)`), and
 * in the terminal a one-line legend under the table; a result without intervals (an older version)
 * gets a mark instead.
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
/** `withIntervals`: the result has the intervals the marks stand in for (a narrow terminal). */
export function smallSampleLegend(percentiles: readonly number[], withIntervals = false): string {
  const needs = percentiles
    .filter((p) => samplesNeeded(p) > 2)
    .map((p) => `p${p} ≥${samplesNeeded(p)}`)
    .join(', ')
  return `${SMALL_SAMPLE_MARK} too few samples for that percentile (${needs}): the few slowest requests, not a tail${withIntervals ? ' (--wide shows their 95% intervals)' : ''}`
}

/** Whether a cell shows a percentile with its interval (`1200 (≥900)`, `1200 (900–1500)`). */
export function showsInterval(cell: string): boolean {
  return /\d \((?:[≥≤]?[\d.]+|[\d.]+–[\d.]+|\?)\)/.test(cell)
}

/** The legend for the intervals shown in place of the mark. */
export function intervalLegend(percentiles: readonly number[]): string {
  const needs = percentiles
    .filter((p) => samplesNeeded(p) > 2)
    .map((p) => `p${p} ≥${samplesNeeded(p)}`)
    .join(', ')
  return `(low–high) 95% interval of a percentile from too few samples (${needs}); ≥low: the samples cannot bound it above`
}
