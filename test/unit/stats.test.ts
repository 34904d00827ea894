import assert from 'node:assert/strict'
import { test } from 'node:test'
import {
  bootstrapPercentileDifference,
  bootstrapRelativeDifference,
  mannWhitney,
  normalCdf,
  percentileStatistic,
} from '../../src/analysis/stats.js'
import { seededRandom } from '../../src/random.js'

/** Log-normal latencies (ms) around `median`: skewed, like real TTFTs. */
function latencies(seed: number, n: number, median: number): number[] {
  const random = seededRandom(seed)
  return Array.from({ length: n }, () => {
    const u1 = Math.max(random(), 1e-12)
    const u2 = random()
    const normal = Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2)
    return median * Math.exp(0.3 * normal)
  })
}

test('normal CDF at known points', () => {
  assert.ok(Math.abs(normalCdf(0) - 0.5) < 1e-7)
  assert.ok(Math.abs(normalCdf(1.959964) - 0.975) < 1e-6)
  assert.ok(Math.abs(normalCdf(-1) - 0.158655) < 1e-6)
})

test('Mann-Whitney matches a hand-computed case', () => {
  // a = [1,2,3], b = [4,5,6]: U_a = 0, the most extreme split; exact two-sided p = 0.1, normal approx ~0.081
  const result = mannWhitney([1, 2, 3], [4, 5, 6])
  assert.equal(result.prob_b_greater, 1)
  assert.ok(result.p_value > 0.05 && result.p_value < 0.1, String(result.p_value))
})

test('a real 10% shift is flagged on nearly every seed; the same distribution is not, at about the 5% rate', () => {
  let flaggedShift = 0
  let flaggedSame = 0
  const seeds = 100
  for (let seed = 1; seed <= seeds; seed++) {
    const base = latencies(seed, 400, 200)
    if (mannWhitney(base, latencies(seed + 1000, 400, 220)).p_value < 0.05) flaggedShift++
    if (mannWhitney(base, latencies(seed + 2000, 400, 200)).p_value < 0.05) flaggedSame++
  }
  assert.ok(flaggedShift >= 95, `shift flagged on ${flaggedShift}/${seeds} seeds`)
  assert.ok(flaggedSame <= 12, `no shift flagged on ${flaggedSame}/${seeds} seeds`)
})

test('bootstrap interval of the p95 difference covers the true 10% shift and excludes 0', () => {
  const base = latencies(3, 2000, 200)
  const shifted = latencies(4, 2000, 220)
  const interval = bootstrapRelativeDifference(base, shifted, percentileStatistic(95), 500, 7)
  assert.ok(interval !== null)
  assert.ok(interval.low > 0.02 && interval.low < 0.1, JSON.stringify(interval))
  assert.ok(interval.high > 0.1 && interval.high < 0.2, JSON.stringify(interval))
  // Seeded: the same inputs give the same interval.
  assert.deepEqual(bootstrapRelativeDifference(base, shifted, percentileStatistic(95), 500, 7), interval)
})

test('the O(n) percentile bootstrap agrees with the sort-based one', () => {
  const base = latencies(11, 3000, 200)
  const shifted = latencies(12, 3000, 230)
  const slow = bootstrapRelativeDifference(base, shifted, percentileStatistic(95), 400, 5)
  const fast = bootstrapPercentileDifference(base, shifted, 95, 400, 5)
  assert.ok(slow !== null && fast !== null)
  assert.ok(
    Math.abs(slow.low - fast.low) < 0.02 && Math.abs(slow.high - fast.high) < 0.02,
    JSON.stringify({ slow, fast }),
  )
  // One sample, resampled: the p-th percentile of a constant is that constant.
  assert.deepEqual(bootstrapPercentileDifference([5, 5, 5], [5, 5, 5], 50, 10), { low: 0, high: 0 })
})
