import { CONFIDENCE, studentT } from '../metrics/intervals.js'

/**
 * An ordinary least-squares line y = intercept + slope × x with 95% t intervals on both, for the
 * capacity model's fits (prefill against prompt tokens, decode step against the running batch): a
 * fitted parameter is only as good as its interval, so the interval travels with it.
 */
export interface LineFit {
  intercept: number
  slope: number
  /** 95% intervals; null ends when the residuals leave no degrees of freedom (two points or fewer). */
  intercept_interval: { low: number | null; high: number | null }
  slope_interval: { low: number | null; high: number | null }
  points: number
}

/**
 * Null when there are fewer than two points or every x is the same (no slope to see). `weights` (each
 * point's relative precision, e.g. how many samples its y is the median of) make it weighted least
 * squares; the intervals then rest on the weighted residuals.
 */
export function fitLine(
  xs: readonly number[],
  ys: readonly number[],
  weights?: readonly number[],
): LineFit | null {
  const n = Math.min(xs.length, ys.length)
  if (n < 2) return null
  const w = (i: number) => (weights === undefined ? 1 : (weights[i] as number))
  let sw = 0
  let sx = 0
  let sy = 0
  for (let i = 0; i < n; i++) {
    sw += w(i)
    sx += w(i) * (xs[i] as number)
    sy += w(i) * (ys[i] as number)
  }
  if (!(sw > 0)) return null
  const mx = sx / sw
  const my = sy / sw
  let sxx = 0
  let sxy = 0
  for (let i = 0; i < n; i++) {
    const dx = (xs[i] as number) - mx
    sxx += w(i) * dx * dx
    sxy += w(i) * dx * ((ys[i] as number) - my)
  }
  if (!(sxx > 0)) return null
  const slope = sxy / sxx
  const intercept = my - slope * mx
  const df = n - 2
  if (df < 1) {
    const open = { low: null, high: null }
    return { intercept, slope, intercept_interval: open, slope_interval: open, points: n }
  }
  let rss = 0
  for (let i = 0; i < n; i++) rss += w(i) * ((ys[i] as number) - intercept - slope * (xs[i] as number)) ** 2
  // The residual variance of a point of weight 1: the weights say only how precise points are relative to each other.
  const s2 = rss / df
  const t = studentT(df, CONFIDENCE)
  const slopeHalf = t * Math.sqrt(s2 / sxx)
  const interceptHalf = t * Math.sqrt(s2 * (1 / sw + (mx * mx) / sxx))
  return {
    intercept,
    slope,
    intercept_interval: { low: intercept - interceptHalf, high: intercept + interceptHalf },
    slope_interval: { low: slope - slopeHalf, high: slope + slopeHalf },
    points: n,
  }
}
