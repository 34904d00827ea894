import assert from 'node:assert/strict'
import { test } from 'node:test'
import { percentileInterval } from '../../src/metrics/intervals.js'
import { seriesIntervals } from '../../src/metrics/level-intervals.js'
import { seededRandom, standardNormal } from '../../src/random.js'

/**
 * Coverage of the level intervals (issue 27): over many samples of a known distribution, how often
 * the 95% interval of each percentile and of the mean holds the true value. The simulator has no
 * latency jitter of its own to draw from (its latencies are set by its slots and token times), so
 * the samples come from its seeded generator (src/random.ts, the one the simulator and the load
 * shapes draw with) through a lognormal, the shape of a latency. Each series goes through
 * seriesIntervals, the code a level's intervals figure runs, effective sample size included.
 */

const PERCENTILES = [50, 95, 99] as const
/** Standard normal quantiles of the percentiles. */
const Z: Record<number, number> = { 50: 0, 95: 1.6448536269514722, 99: 2.3263478740408408 }
/** Latencies exp(MU + SIGMA z): the true p-th percentile is exp(MU + SIGMA z_p), the mean exp(MU + SIGMA²/2). */
const MU = Math.log(200)
const SIGMA = 0.5

/**
 * Coverage of `trials` series of n lognormal latencies whose underlying normals are AR(1) with
 * coefficient rho (0: independent), standardized so every value has the same lognormal margin.
 */
function coverage(rho: number, n: number, trials: number, seed: number) {
  const random = seededRandom(seed)
  const scale = Math.sqrt(1 - rho * rho)
  const widened: Record<string, number> = { mean: 0 }
  const unwidened: Record<string, number> = {}
  const effective: Record<string, number> = { mean: 0 }
  const holds = (interval: { low: number | null; high: number | null }, truth: number) =>
    (interval.low ?? Number.NEGATIVE_INFINITY) <= truth &&
    truth <= (interval.high ?? Number.POSITIVE_INFINITY)
  for (let trial = 0; trial < trials; trial++) {
    const series = new Float64Array(n)
    let z = standardNormal(random)
    for (let i = 0; i < n; i++) {
      if (i > 0) z = rho * z + scale * standardNormal(random)
      series[i] = Math.exp(MU + SIGMA * z)
    }
    const { intervals, effectiveN } = seriesIntervals(series, PERCENTILES)
    const sorted = Float64Array.from(series).sort()
    for (const p of PERCENTILES) {
      const key = `p${p}`
      const truth = Math.exp(MU + SIGMA * (Z[p] as number))
      widened[key] = (widened[key] ?? 0) + (holds(intervals[key] as never, truth) ? 1 : 0)
      unwidened[key] = (unwidened[key] ?? 0) + (holds(percentileInterval(sorted, p), truth) ? 1 : 0)
      effective[key] = (effective[key] ?? 0) + (effectiveN[key] as number)
    }
    widened.mean =
      (widened.mean as number) + (holds(intervals.mean as never, Math.exp(MU + SIGMA ** 2 / 2)) ? 1 : 0)
    effective.mean = (effective.mean as number) + (effectiveN.mean as number)
  }
  const share = (counts: Record<string, number>) =>
    Object.fromEntries(Object.entries(counts).map(([key, count]) => [key, count / trials]))
  return { widened: share(widened), unwidened: share(unwidened), meanEffectiveN: share(effective) }
}

const TRIALS = 1000
const N = 1000

test('95% intervals of independent lognormal latencies hold the true percentile and mean 92-98% of the time', (t) => {
  const figures = coverage(0, N, TRIALS, 27)
  t.diagnostic(`independent, n=${N}, ${TRIALS} trials: ${JSON.stringify(figures)}`)
  for (const [key, share] of Object.entries(figures.widened))
    assert.ok(share >= 0.92 && share <= 0.98, `${key} covered ${share}`)
  // Independent requests lose little to the estimate: effective n stays near n.
  for (const [key, n] of Object.entries(figures.meanEffectiveN))
    assert.ok(n > 0.85 * N, `${key} effective n ${n}`)
})

test('autocorrelated latencies (AR(1), ρ = 0.5): widened by the effective size the intervals keep 92-98%, the unwidened fall short', (t) => {
  const figures = coverage(0.5, N, TRIALS, 2705)
  t.diagnostic(`AR(1) rho=0.5, n=${N}, ${TRIALS} trials: ${JSON.stringify(figures)}`)
  for (const [key, share] of Object.entries(figures.widened))
    assert.ok(share >= 0.92 && share <= 0.98, `${key} covered ${share}`)
  // Treated as independent, the median's interval holds the truth little more than 4 times in 5.
  assert.ok((figures.unwidened.p50 as number) < 0.88, `unwidened p50 covered ${figures.unwidened.p50}`)
  assert.ok((figures.unwidened.p95 as number) < 0.92, `unwidened p95 covered ${figures.unwidened.p95}`)
  // The mean of AR(1) is worth (1 - ρ) / (1 + ρ) = 1/3 of its count.
  const meanN = figures.meanEffectiveN.mean as number
  assert.ok(meanN > 0.25 * N && meanN < 0.42 * N, `mean effective n ${meanN}`)
})
