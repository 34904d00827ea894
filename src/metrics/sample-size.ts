import type { PrecisionFigure } from './precision-key.js'

/**
 * How many requests a level needs for a figure to be precise to a target, before any is sent: from
 * the spread of the warm probes, taken as log-normal (latencies are skewed; their logarithms are
 * closer to normal). A quantile estimated from n samples has a standard error of
 * sqrt(q(1 - q) / n) / f(x_q) (the density at the quantile); for a log-normal with log-spread σ that
 * is, relative to x_q, σ · sqrt(q(1 - q) / n) / φ(z_q). So the tails need far more than the median:
 * the density there is thin. And the order-statistic interval has no upper end at all until the
 * largest sample can be above the quantile with 97.5% certainty (p95: 72 requests, p99: 368).
 *
 * The probes run one at a time on a quiet server; under load the spread is wider (queueing), so the
 * advice is a floor, which --precision's own check then corrects.
 */

const Z_95 = 1.959964

/** Log-spread assumed at least: timers and networks add a few percent whatever the server does. */
export const MIN_LOG_SPREAD = 0.05

/** The log-spread σ from a few probes' min and max: the expected range of 3 normal draws is 1.69 σ. */
export function logSpreadOfProbes(spread: { min: number; max: number } | null, probes: number): number {
  if (spread === null || !(spread.min > 0) || !(spread.max >= spread.min) || probes < 2) return MIN_LOG_SPREAD
  const rangeFactor = probes === 2 ? 1.128 : probes === 3 ? 1.693 : 2.059
  return Math.max(MIN_LOG_SPREAD, Math.log(spread.max / spread.min) / rangeFactor)
}

/** Fewest samples whose order-statistic 95% interval of the q-quantile has an upper end. */
export function boundedFrom(q: number): number {
  return Math.ceil(Math.log(0.025) / Math.log(q))
}

/** Requests for a percentile's 95% interval half-width to be `targetPct` percent of it. */
export function requestsForPercentile(percentile: number, targetPct: number, logSpread: number): number {
  const q = percentile / 100
  const density = standardNormalDensity(normalQuantile(q))
  const perRoot = (Z_95 * logSpread * Math.sqrt(q * (1 - q))) / density
  const n = (perRoot / (targetPct / 100)) ** 2
  return Math.max(Math.ceil(n), percentile > 50 ? boundedFrom(q) : boundedFrom(1 - q))
}

/** Requests for a mean-like figure (throughput) with coefficient of variation ≈ logSpread. */
export function requestsForMean(targetPct: number, logSpread: number): number {
  return Math.max(4, Math.ceil(((Z_95 * logSpread) / (targetPct / 100)) ** 2))
}

/** The half-width (percent) n requests give a percentile; null when n cannot bound it. */
export function percentileHalfWidthPct(percentile: number, n: number, logSpread: number): number | null {
  const q = percentile / 100
  if (n < (percentile > 50 ? boundedFrom(q) : boundedFrom(1 - q))) return null
  const density = standardNormalDensity(normalQuantile(q))
  return (100 * Z_95 * logSpread * Math.sqrt((q * (1 - q)) / n)) / density
}

/**
 * Requests a named --precision figure needs, from the probes' spreads of its measure; null when the
 * probes give none of it (they time TTFT, TPOT and E2E).
 */
export function requestsForFigure(
  figure: PrecisionFigure,
  targetPct: number,
  spreads: { e2e: number } & Readonly<Record<string, number>>,
): number | null {
  if (figure.kind === 'throughput') return requestsForMean(targetPct, spreads.e2e)
  const spread = spreads[figure.metric]
  return spread === undefined ? null : requestsForPercentile(figure.percentile, targetPct, spread)
}

function standardNormalDensity(z: number): number {
  return Math.exp(-(z * z) / 2) / Math.sqrt(2 * Math.PI)
}

/** A polynomial's value at x, coefficients from the highest power down (Horner). */
function horner(coefficients: readonly number[], x: number): number {
  return coefficients.reduce((sum, coefficient) => sum * x + coefficient, 0)
}

/** The standard normal's q-quantile (Acklam's rational approximation, relative error below 1.2e-9). */
export function normalQuantile(q: number): number {
  const a = [
    -39.69683028665376, 220.9460984245205, -275.9285104469687, 138.357751867269, -30.66479806614716,
    2.506628277459239,
  ]
  const b = [
    -54.47609879822406, 161.5858368580409, -155.6989798598866, 66.80131188771972, -13.28068155288572, 1,
  ]
  const c = [
    -0.007784894002430293, -0.3223964580411365, -2.400758277161838, -2.549732539343734, 4.374664141464968,
    2.938163982698783,
  ]
  const d = [0.007784695709041462, 0.3224671290700398, 2.445134137142996, 3.754408661907416, 1]
  const low = 0.02425
  const tail = (r: number): number => horner(c, r) / horner(d, r)
  if (q < low) return tail(Math.sqrt(-2 * Math.log(q)))
  if (q > 1 - low) return -tail(Math.sqrt(-2 * Math.log(1 - q)))
  const x = q - 0.5
  const r = x * x
  return (horner(a, r) * x) / horner(b, r)
}
