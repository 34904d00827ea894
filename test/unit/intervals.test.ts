import assert from 'node:assert/strict'
import { test } from 'node:test'
import { percentileInterval, throughputInterval } from '../../src/metrics/intervals.js'
import { TokenTimeline } from '../../src/metrics/token-timeline.js'
import { seededRandom } from '../../src/random.js'
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
