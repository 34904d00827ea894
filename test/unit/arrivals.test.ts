import assert from 'node:assert/strict'
import { test } from 'node:test'
import { seededRandom } from '../../src/random.js'
import { arrivalOffsets, dealArrivals, gammaDraw } from '../../src/schedule/arrivals.js'

/** Gaps between consecutive intended times, the first one measured from 0. */
function gaps(offsets: Float64Array): number[] {
  return Array.from(offsets, (at, i) => at - (i === 0 ? 0 : (offsets[i - 1] as number)))
}

function meanAndCv2(values: number[]): { mean: number; cv2: number } {
  const mean = values.reduce((a, b) => a + b, 0) / values.length
  const variance = values.reduce((a, b) => a + (b - mean) ** 2, 0) / (values.length - 1)
  return { mean, cv2: variance / (mean * mean) }
}

// The schedule is a pure function of a seeded generator: the "clock" is the offsets themselves.
test('poisson arrivals: exponential gaps with the asked mean, CV 1, memoryless tail', () => {
  for (const seed of [1, 2, 3]) {
    const offsets = arrivalOffsets({ rate: 25, process: 'poisson', burstiness: 1 }, seededRandom(seed), {
      count: 20_000,
    })
    assert.equal(offsets.length, 20_000)
    const g = gaps(offsets)
    const { mean, cv2 } = meanAndCv2(g)
    assert.ok(Math.abs(mean - 40) < 40 * 0.03, `mean gap ${mean} ms, expected 40 ± 3%`)
    assert.ok(Math.abs(cv2 - 1) < 0.06, `squared CV ${cv2}, expected 1 ± 0.06`)
    // P(gap > mean) = e^-1 and P(gap > 2 mean) = e^-2 for an exponential distribution.
    const over = (x: number) => g.filter((gap) => gap > x).length / g.length
    assert.ok(Math.abs(over(40) - Math.exp(-1)) < 0.015, `P(gap > mean) ${over(40)}`)
    assert.ok(Math.abs(over(80) - Math.exp(-2)) < 0.01, `P(gap > 2 mean) ${over(80)}`)
    // Counts in 1 s windows are Poisson(25): variance ≈ mean.
    const perSecond = new Map<number, number>()
    for (const at of offsets)
      perSecond.set(Math.floor(at / 1000), (perSecond.get(Math.floor(at / 1000)) ?? 0) + 1)
    const counts = [...perSecond.values()].slice(0, -1)
    const countMean = counts.reduce((a, b) => a + b, 0) / counts.length
    const countVar = counts.reduce((a, b) => a + (b - countMean) ** 2, 0) / (counts.length - 1)
    assert.ok(Math.abs(countVar / countMean - 1) < 0.2, `index of dispersion ${countVar / countMean}`)
  }
})

test('constant arrivals are evenly spaced from 0; gamma shape sets the burstiness', () => {
  const constant = arrivalOffsets({ rate: 4, process: 'constant', burstiness: 1 }, seededRandom(1), {
    count: 5,
  })
  assert.deepEqual(Array.from(constant), [0, 250, 500, 750, 1000])
  for (const shape of [0.25, 1, 4]) {
    const offsets = arrivalOffsets({ rate: 10, process: 'gamma', burstiness: shape }, seededRandom(7), {
      count: 20_000,
    })
    const { mean, cv2 } = meanAndCv2(gaps(offsets))
    assert.ok(Math.abs(mean - 100) < 100 * 0.04, `shape ${shape}: mean gap ${mean}`)
    // Gamma(k) gaps have squared coefficient of variation 1/k.
    assert.ok(
      Math.abs(cv2 - 1 / shape) < (1 / shape) * 0.1,
      `shape ${shape}: squared CV ${cv2}, expected ${1 / shape}`,
    )
  }
  const draws = Array.from({ length: 20_000 }, () => gammaDraw(0.5, seededRandom(3)))
  assert.ok(draws.every((x) => x >= 0 && Number.isFinite(x)))
})

test('a timed schedule stops at its duration; the same seed gives the same schedule', () => {
  const plan = { rate: 50, process: 'poisson' as const, burstiness: 1 }
  const a = arrivalOffsets(plan, seededRandom(11), { durationMs: 10_000 })
  const b = arrivalOffsets(plan, seededRandom(11), { durationMs: 10_000 })
  assert.deepEqual(a, b)
  assert.ok((a.at(-1) as number) < 10_000)
  // Poisson(500): sd 22; ±3.5 sd.
  assert.ok(a.length > 420 && a.length < 580, `${a.length} arrivals in 10 s at 50/s`)
})

test('dealing a schedule over workers (or shards) keeps every arrival exactly once', () => {
  const offsets = arrivalOffsets({ rate: 30, process: 'poisson', burstiness: 1 }, seededRandom(5), {
    count: 1001,
  })
  for (const parts of [1, 2, 3, 7]) {
    const shares = dealArrivals(offsets, parts)
    assert.equal(shares.length, parts)
    const union = shares.flatMap((share) => Array.from(share)).sort((x, y) => x - y)
    assert.deepEqual(union, Array.from(offsets))
    for (const share of shares)
      for (let i = 1; i < share.length; i++) assert.ok((share[i] as number) >= (share[i - 1] as number))
    assert.ok(Math.max(...shares.map((s) => s.length)) - Math.min(...shares.map((s) => s.length)) <= 1)
  }
})
