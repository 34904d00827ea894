import assert from 'node:assert/strict'
import { test } from 'node:test'
import {
  effectiveSampleSize,
  meanInterval,
  percentileInterval,
  throughputInterval,
} from '../../src/metrics/intervals.js'
import { TokenTimeline } from '../../src/metrics/token-timeline.js'
import { seededRandom, standardNormal } from '../../src/random.js'
import type { RequestRecord } from '../../src/records/types.js'

/** Exponential latencies with mean 100 ms: the true q-quantile is -100 ln(1 - q). */
const trueQuantile = (q: number) => -100 * Math.log(1 - q)

for (const [n, percentile] of [
  [30, 50],
  [200, 95],
  [1000, 99],
] as const) {
  test(`order-statistic interval of p${percentile} from ${n} samples covers the true value about 95% of the time`, () => {
    const random = seededRandom(n * 100 + percentile)
    const trials = 2000
    let covered = 0
    for (let trial = 0; trial < trials; trial++) {
      const sample = Float64Array.from({ length: n }, () => -100 * Math.log(1 - random())).sort()
      const { low, high } = percentileInterval(sample, percentile)
      const truth = trueQuantile(percentile / 100)
      if ((low ?? 0) <= truth && truth <= (high ?? Number.POSITIVE_INFINITY)) covered++
    }
    const coverage = covered / trials
    // Exact binomial intervals are conservative (at least 95%), never wildly so.
    assert.ok(coverage >= 0.94 && coverage <= 0.99, `coverage ${coverage}`)
  })
}

test('a tail percentile of few samples has no upper end; an empty sample has neither', () => {
  const sample = Float64Array.from({ length: 30 }, (_, i) => i + 1)
  const p95 = percentileInterval(sample, 95)
  assert.equal(p95.high, null)
  assert.ok(p95.low !== null && p95.low >= 20 && p95.low <= 30, `low ${p95.low}`)
  assert.deepEqual(percentileInterval([], 50), { low: null, high: null })
  const p50 = percentileInterval(sample, 50)
  assert.ok((p50.low as number) < 15.5 && (p50.high as number) > 15.5, JSON.stringify(p50))
})

function streamed(sentAt: number, tokens: number, gapMs: number): RequestRecord {
  const times = Array.from({ length: tokens }, (_, i) => sentAt + 10 + i * gapMs)
  return {
    sent_at: sentAt,
    end_at: times.at(-1) as number,
    output_tokens: tokens,
    chunks: tokens,
    token_times: times,
    error: null,
  } as unknown as RequestRecord
}

test('throughput interval: tight around a steady rate, wide around a stalling one', () => {
  const steady = new TokenTimeline()
  for (let i = 0; i < 40; i++) steady.add(streamed(i * 250, 50, 10))
  const even = throughputInterval(steady, 0, 10_000) as { low: number; high: number }
  // 40 requests × 50 tokens over 10 s: 200 tokens/s, evenly.
  assert.ok(even.low > 180 && even.high < 220, JSON.stringify(even))
  const bursty = new TokenTimeline()
  for (let i = 0; i < 40; i++) bursty.add(streamed(i < 20 ? i * 50 : 9000 + i, 50, 10))
  const burst = throughputInterval(bursty, 0, 10_000) as { low: number; high: number }
  assert.ok(
    burst.high - burst.low > 4 * (even.high - even.low),
    `${JSON.stringify(burst)} vs ${JSON.stringify(even)}`,
  )
  assert.equal(throughputInterval(steady, 5, 5), null)
})

test('effective sample size: about n for independent values, about n/3 for AR(1) with ρ = 0.5, n for a constant', () => {
  const random = seededRandom(9)
  const independent = Float64Array.from({ length: 5000 }, () => standardNormal(random))
  const iid = effectiveSampleSize(independent)
  assert.ok(iid > 4000 && iid <= 5000, `independent ${iid}`)
  const ar = new Float64Array(5000)
  for (let i = 1; i < ar.length; i++) ar[i] = 0.5 * (ar[i - 1] as number) + standardNormal(random)
  const correlated = effectiveSampleSize(ar)
  assert.ok(correlated > 5000 / 4 && correlated < 5000 / 2.4, `AR(1) ${correlated}`)
  assert.equal(effectiveSampleSize(new Float64Array(100).fill(3)), 100)
  // Alternating values are negatively correlated: clamped to their count, never more.
  assert.equal(effectiveSampleSize(Float64Array.from({ length: 100 }, (_, i) => i % 2)), 100)
  assert.equal(effectiveSampleSize([1, 2]), 2)
  // A long slow period then a fast one: the two halves are worth little more than two samples each.
  const periods = Float64Array.from({ length: 2000 }, (_, i) => (i < 1000 ? 100 : 300) + random())
  assert.ok(effectiveSampleSize(periods) < 20, `periods ${effectiveSampleSize(periods)}`)
})

test('percentileInterval with an effective n: as before at n, wider below it, unbounded when too few', () => {
  const sample = Float64Array.from({ length: 400 }, (_, i) => i + 1)
  assert.deepEqual(percentileInterval(sample, 95, 0.95, 400), percentileInterval(sample, 95))
  assert.deepEqual(percentileInterval(sample, 50, 0.95, 400), percentileInterval(sample, 50))
  const full = percentileInterval(sample, 50) as { low: number; high: number }
  const third = percentileInterval(sample, 50, 0.95, 133) as { low: number; high: number }
  assert.ok(
    third.low < full.low && third.high > full.high,
    `${JSON.stringify(third)} vs ${JSON.stringify(full)}`,
  )
  // The width grows about as 1/√n_eff: three times fewer samples, about √3 times wider.
  const ratio = (third.high - third.low) / (full.high - full.low)
  assert.ok(ratio > 1.5 && ratio < 2, `ratio ${ratio}`)
  // p99 of 400 is bounded above; worth 40 independent ones it is not.
  assert.notEqual(percentileInterval(sample, 99).high, null)
  assert.equal(percentileInterval(sample, 99, 0.95, 40).high, null)
})

test('mean interval: t with the effective size; none below two effective samples', () => {
  const values = Float64Array.from({ length: 100 }, (_, i) => (i % 10) + 1)
  const independent = meanInterval(values, 100) as { low: number; high: number }
  assert.ok(independent.low < 5.5 && independent.high > 5.5, JSON.stringify(independent))
  // sd 2.87, n 100: 5.5 ± 1.98 · 0.287.
  assert.ok(Math.abs(independent.high - 5.5 - 0.57) < 0.02, JSON.stringify(independent))
  const fewer = meanInterval(values, 25) as { low: number; high: number }
  assert.ok(fewer.high - fewer.low > 1.9 * (independent.high - independent.low), JSON.stringify(fewer))
  assert.deepEqual(meanInterval(values, 1), { low: null, high: null })
  assert.deepEqual(meanInterval([], 0), { low: null, high: null })
})
