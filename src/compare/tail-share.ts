import { round } from '../metrics/distribution.js'
import { CONFIDENCE, effectiveSampleSize } from '../metrics/intervals.js'
import { measuresFor } from '../metrics/measures.js'
import { convolvePmfs, exceedancePmf, pmfMean, upperTail } from './exceedance-test.js'
import type { LevelSamples } from './level-samples.js'

/**
 * The figures a tail-share check covers: those with one value per request. ITL has one per gap,
 * many per request and alike within it, so its values are not the independent draws the exact count
 * assumes (and it has the values a percentile needs far sooner).
 */
export const TAIL_FIGURES: readonly string[] = measuresFor('compare')
  .filter((measure) => measure.values === 'one')
  .map((measure) => measure.key)
/** A measure's key (measures.ts): ttft, tpot, e2e. */
export type TailFigure = string

/** The base percentile whose exceedances are counted: 10% of requests lie beyond it when nothing changed. */
const BASE_PERCENTILE = 90

/**
 * The one-sided error the rest of the gate runs at: a regression is a 95% interval wholly on the
 * worse side, 2.5% when nothing changed. Shared out over the comparison's tail checks (tailAlpha).
 */
export const TAIL_ALPHA = (1 - CONFIDENCE) / 2

/**
 * A tail gated by how many requests lie beyond the base's p90, where its percentiles had too few
 * values to gate (a p95 interval needs 100 requests, a p99 one 500): a server that sends 10% of its
 * headers 2 s late moves TTFT p95 by +2,900% and would otherwise pass on it.
 */
export interface TailShare {
  figure: TailFigure
  /** The gated percentiles of the figure that could not gate at this level, which this check stands in for. */
  stands_for: string[]
  /**
   * The base's p90 (ms): its ceil(0.9 m)-th smallest of m values. Null when counted per group
   * (pairs; compare does not run the check under --paired for now).
   */
  base_p90: number | null
  /**
   * How much worse than the base p90 a request must be to count: the threshold and floor of the
   * percentiles it stands for (beyond max(p90 × (1 + relative), p90 + absolute ms)).
   */
  allowance: { relative: number; absolute: number }
  /** New requests with the figure, and those beyond the base p90 by more than the allowance. */
  requests: number
  beyond: number
  /** beyond / requests. */
  share: number
  /** The share expected beyond the cut when nothing changed (from the base's own count beyond it; exceedancePmf). */
  expected: number
  /** Exact one-sided P(at least `beyond` requests beyond | nothing changed). */
  p_value: number
  /** The alpha this check was held to: TAIL_ALPHA over the comparison's tail checks (Bonferroni). */
  alpha: number
  /** How far `share` must exceed `expected` to matter (max-regression `tail`, in points). */
  threshold: number
  /** p_value ≤ alpha and share - expected > threshold. */
  regressed: boolean
}

/** The figure's values of a level, one per request that has it. */
const valuesOf = (samples: LevelSamples, figure: TailFigure): number[] =>
  (samples.measures[figure] ?? []).flat()

/** The independent requests a 0/1 series in send order is worth (its effective sample size), at least 1. */
function worth(series: readonly number[]): number {
  return Math.max(1, Math.min(series.length, Math.round(effectiveSampleSize(series))))
}

/** The base's p90 as an order statistic, and how many base values lie beyond it. */
function baseThreshold(base: readonly number[]): { value: number; above: number } {
  const sorted = [...base].sort((x, y) => x - y)
  const rank = Math.ceil((sorted.length * BASE_PERCENTILE) / 100)
  const value = sorted[rank - 1] as number
  return { value, above: sorted.filter((x) => x > value).length }
}

/**
 * The tail-share check of one figure at one level, before its alpha is known (judgeTailShares).
 * `groups` are [base samples, new samples] counted apart, their counts summed: one group a level for
 * two runs (--repeat: the runs' requests pooled, as the tail rule counts them), one per pair with
 * --paired. Per pair, because a pair's two blocks ran side by side in time: a slow minute raises
 * that pair's A p90 with its B requests, so it cancels as it does in the paired t interval. Pooled
 * over the level, a slow pair's B requests would land beyond a p90 set mostly by the other pairs'
 * A requests, together: counts that move in clusters, which the exact count (independent requests)
 * would read as significant. The price: each pair's p90 is from a quarter of the level, its null wider.
 * Null when no group has values on both sides.
 */
export function tailShare(
  groups: readonly (readonly [LevelSamples, LevelSamples])[],
  figure: TailFigure,
  standsFor: string[],
  threshold: number,
  /** The worsening the gated percentiles allow: a request counts when beyond the p90 by more than both. */
  allowance: { relative: number; absolute: number } = { relative: 0, absolute: 0 },
): TailShare | null {
  const pmfs: number[][] = []
  let requests = 0
  let beyond = 0
  let thresholdValue: number | null = null
  for (const [a, b] of groups) {
    const base = valuesOf(a, figure)
    const next = valuesOf(b, figure)
    if (base.length === 0 || next.length === 0) continue
    const p90 = baseThreshold(base)
    // The cut lies at or above the base's order statistic just below it (the (m - above)-th, where
    // `above` base values lie beyond the cut): under no change a new request lands beyond the cut no
    // more often than beyond that order statistic, whose exact null the count is judged on, so the
    // test stays exact or conservative wherever the allowance puts the cut.
    const value = Math.max(p90.value * (1 + allowance.relative), p90.value + allowance.absolute)
    const cut = { value, above: base.filter((x) => x > value).length }
    thresholdValue = p90.value
    // Counted as the independent requests they are worth: a slow spell puts several requests in a
    // row beyond the p90 together (a hiccup of a loaded host, one block of a pair), which the exact
    // count of independent requests reads as significant (an A/A paired run failed on it at load 8).
    const nextBeyond = next.map((x): number => (x > cut.value ? 1 : 0))
    const baseBeyond = base.map((x): number => (x > cut.value ? 1 : 0))
    const n = worth(nextBeyond)
    const m = worth(baseBeyond)
    const counted = Math.round(n * (nextBeyond.reduce((sum, x) => sum + x, 0) / next.length))
    const above = Math.min(m - 1, Math.round(m * (cut.above / base.length)))
    pmfs.push(exceedancePmf(n, m, Math.max(0, above)))
    requests += n
    beyond += counted
  }
  if (pmfs.length === 0) return null
  const summed = convolvePmfs(pmfs)
  return {
    figure,
    stands_for: standsFor,
    base_p90: groups.length === 1 ? thresholdValue : null,
    allowance,
    requests,
    beyond,
    share: beyond / requests,
    expected: pmfMean(summed) / requests,
    p_value: upperTail(summed, beyond),
    alpha: TAIL_ALPHA,
    threshold,
    regressed: false,
  }
}

/**
 * Holds each check to TAIL_ALPHA shared out over all of them (Bonferroni): three figures at a few
 * levels are a dozen checks, each of which an A/A pair would fail 2.5% of the time, a quarter of
 * A/A comparisons at least once. TTFT and E2E tails of one level move together, so the share is
 * conservative. A regression must also be large: its share beyond the expected by more than its
 * threshold (12% against 10% in 5,000 requests is significant, and no regression worth failing on).
 */
export function judgeTailShares(checks: readonly TailShare[]): TailShare[] {
  const alpha = TAIL_ALPHA / Math.max(1, checks.length)
  // Judged on the exact figures, rounded for the report after.
  return checks.map((check) => ({
    ...check,
    base_p90: check.base_p90 === null ? null : round(check.base_p90, 3),
    share: round(check.share, 4),
    expected: round(check.expected, 4),
    p_value: Number(check.p_value.toPrecision(3)),
    alpha: Number(alpha.toPrecision(3)),
    regressed: check.p_value <= alpha && check.share - check.expected > check.threshold,
  }))
}
