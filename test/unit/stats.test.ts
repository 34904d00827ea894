import assert from 'node:assert/strict'
import { test } from 'node:test'
import {
  blockBootstrapChange,
  blockLengthFor,
  drawBlocks,
  relativeChange,
  weightedPercentile,
} from '../../src/analysis/stats.js'
import { percentileOfSorted } from '../../src/metrics/distribution.js'
import { seededRandom } from '../../src/random.js'

/** A standard normal draw. */
function normal(random: () => number): number {
  const u1 = Math.max(random(), 1e-12)
  return Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * random())
}

/**
 * A run's latencies (ms) in send order, log-normal around `median`, with slow spells: stretches of
 * `spell` consecutive requests that a busy server slows by half, each with probability `share`. The
 * spells are what makes neighbours in time alike, as on a real server.
 */
function spellRun(seed: number, n: number, median: number, spell: number, share: number): number[] {
  const random = seededRandom(seed)
  const out: number[] = []
  let slow = 1
  for (let i = 0; i < n; i++) {
    if (i % spell === 0) slow = random() < share ? 1.5 : 1
    out.push(median * slow * Math.exp(0.15 * normal(random)))
  }
  return out
}

const perRequest = (values: readonly number[]): number[][] => values.map((value) => [value])

function p50Interval(a: readonly number[], b: readonly number[], blockLength: number, seed = 42) {
  const side = (values: readonly number[]) => ({
    requests: values.length,
    blockLength,
    statistic: weightedPercentile(perRequest(values), 50),
  })
  return blockBootstrapChange(side(a), side(b), relativeChange, 1000, seed)
}

test('weightedPercentile: every request once is the plain percentile; counts repeat values', () => {
  const random = seededRandom(3)
  const groups = Array.from({ length: 40 }, (_, i) =>
    Array.from({ length: i % 4 }, () => Math.round(random() * 1000) / 10),
  )
  const flat = groups.flat().sort((x, y) => x - y)
  for (const percentile of [0, 10, 50, 90, 95, 99, 100]) {
    const statistic = weightedPercentile(groups, percentile)
    assert.equal(statistic(new Uint32Array(groups.length).fill(1)), percentileOfSorted(flat, percentile))
    // Each request drawn twice: the same values twice each.
    const doubled = [...flat, ...flat].sort((x, y) => x - y)
    assert.equal(statistic(new Uint32Array(groups.length).fill(2)), percentileOfSorted(doubled, percentile))
  }
  // Only the requests without values drawn: nothing to compute from.
  const counts = new Uint32Array(groups.length)
  counts[0] = 40
  assert.equal(weightedPercentile(groups, 50)(counts), null)
})

test('drawBlocks: as many requests as the run had, in runs of consecutive ones that wrap at the end', () => {
  const random = seededRandom(9)
  const counts = new Uint32Array(20)
  for (let round = 0; round < 50; round++) {
    drawBlocks(counts, 5, random)
    assert.equal(
      counts.reduce((a, b) => a + b, 0),
      20,
    )
  }
  // A block as long as the run draws every request once (a rotation): why blocks are capped.
  drawBlocks(counts, 20, random)
  assert.deepEqual([...counts], new Array(20).fill(1))
  assert.equal(blockLengthFor(20, 20), 6)
  assert.equal(blockLengthFor(30, 1), 4)
  assert.equal(blockLengthFor(1000, 8), 10)
  assert.equal(blockLengthFor(1000, 32), 32)
  assert.equal(blockLengthFor(2, 1), 1)
})

/** Per seed, the p50 interval of a base run and a new one `shift` times slower, with the given spells. */
function pairs(seeds: number, spell: number, share: number, shift: number, blockLength: number) {
  return Array.from({ length: seeds }, (_, i) => {
    const a = spellRun(i + 1, 120, 100, spell, share)
    const b = spellRun(i + 1001, 120, 100 * shift, spell, share)
    const interval = p50Interval(a, b, blockLength)
    assert.ok(interval !== null)
    return interval
  })
}

const excludesZero = (interval: { low: number; high: number }): boolean =>
  interval.low > 0 || interval.high < 0

test('block bootstrap: two runs of one server with slow spells are seldom called different; one request at a time often is', () => {
  const seeds = 60
  const blocked = pairs(seeds, 12, 0.3, 1, blockLengthFor(120, 12))
  const blockedExcludes = blocked.filter(excludesZero).length
  const singleExcludes = pairs(seeds, 12, 0.3, 1, 1).filter(excludesZero).length
  // What the gate asks: is the whole interval above a 10% threshold?
  const falseAlarms = blocked.filter((interval) => interval.low > 0.1).length
  assert.ok(falseAlarms <= 2, `an A/A pair above a 10% threshold on ${falseAlarms}/${seeds} seeds`)
  // Spells this strong (half the run's median moves with 3 of 10 stretches) still fool a bootstrap
  // now and then; blocks make it far rarer than resampling single requests.
  assert.ok(
    blockedExcludes <= 0.2 * seeds,
    `block bootstrap excluded 0 on ${blockedExcludes}/${seeds} A/A pairs`,
  )
  assert.ok(
    singleExcludes >= 2 * Math.max(1, blockedExcludes),
    `resampling single requests excluded 0 on ${singleExcludes}/${seeds} (blocks: ${blockedExcludes})`,
  )
})

test('block bootstrap: a real slowdown of every request lies wholly above a 10% threshold on nearly every seed', () => {
  const seeds = 30
  const intervals = pairs(seeds, 6, 0.2, 1.3, blockLengthFor(120, 6))
  for (const interval of intervals)
    assert.ok(interval.low <= interval.change && interval.change <= interval.high)
  const detected = intervals.filter((interval) => interval.low > 0.1).length
  assert.ok(detected >= 0.8 * seeds, `+30% detected on ${detected}/${seeds} seeds`)
})

test('block bootstrap: seeded, and a constant sample has a point interval', () => {
  const a = spellRun(5, 60, 100, 6, 0.3)
  const b = spellRun(6, 60, 110, 6, 0.3)
  assert.deepEqual(p50Interval(a, b, 4), p50Interval(a, b, 4))
  assert.notDeepEqual(p50Interval(a, b, 4, 1), p50Interval(a, b, 4, 2))
  const constant = p50Interval([5, 5, 5], [6, 6, 6], 1)
  assert.deepEqual(constant, { change: 0.2 / 1, low: 0.2, high: 0.2 })
  assert.equal(p50Interval([], [1], 1), null)
  assert.equal(p50Interval([0, 0, 0], [1], 1), null)
})
