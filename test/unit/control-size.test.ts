import assert from 'node:assert/strict'
import { test } from 'node:test'
import { compareControl, type DriftFigures, type MedianWithInterval } from '../../src/analysis/drift.js'
import { quantileInterval } from '../../src/metrics/intervals.js'
import { seededRandom } from '../../src/random.js'
import { sizeControl } from '../../src/run/plan/control-size.js'
import { controlRequests } from '../../src/run/plan/level-plan.js'

/** TPOT of `n` requests around `median` ms, log-normally spread by `sigma`: a decode figure as measured. */
function tpots(n: number, median: number, sigma: number, seed: number): number[] {
  const random = seededRandom(seed)
  return Array.from({ length: n }, () => {
    const normal = Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random())
    return median * Math.exp(sigma * normal)
  })
}

function medianOf(values: readonly number[]): MedianWithInterval {
  const sorted = Float64Array.from(values).sort()
  const interval = quantileInterval(sorted, 0.5)
  assert.ok(interval !== null)
  const n = sorted.length
  const p50 =
    n % 2 === 1
      ? (sorted[(n - 1) / 2] as number)
      : ((sorted[n / 2 - 1] as number) + (sorted[n / 2] as number)) / 2
  return { p50, low: interval.low, high: interval.high, count: n }
}

/** Only TPOT is known, as from a server that sends no timings and a level whose TTFT is below its floor. */
const figures = (values: readonly number[]): DriftFigures => ({
  requests: values.length,
  failed: 0,
  ttft_ms: null,
  tpot_ms: medianOf(values),
  server_decode_ms_per_token: null,
  server_prefill_ms_per_token: null,
  request_tokens_per_s: null,
})

const FIRST = { perRun: 600, streams: 8, firstSeconds: 60, runSeconds: 600 }

test('the control is the smallest that tells a drift of the size drift.ts counts: a 15% slower decode is seen in most runs, none is not', () => {
  const first = tpots(FIRST.perRun, 20, 0.2, 1)
  const size = sizeControl({ ...FIRST, first: figures(first) })
  // Fewer than the third of the level the control used to take, and at least one per stream.
  assert.ok(size.requests < controlRequests(FIRST.perRun, FIRST.streams), JSON.stringify(size))
  assert.ok(size.requests >= FIRST.streams)
  assert.match(size.why, /tell a 15% drift of TPOT p50/)
  let seenSlower = 0
  let falseAlarms = 0
  const SEEDS = 200
  for (let seed = 2; seed < 2 + SEEDS; seed++) {
    if (compareControl(8, figures(first), figures(tpots(size.requests, 23, 0.2, seed))).moved) seenSlower++
    if (compareControl(8, figures(first), figures(tpots(size.requests, 20, 0.2, seed + SEEDS))).moved)
      falseAlarms++
  }
  assert.ok(seenSlower >= 0.75 * SEEDS, `a 15% drift seen in ${seenSlower} of ${SEEDS}`)
  assert.ok(falseAlarms <= 0.05 * SEEDS, `no drift flagged in ${falseAlarms} of ${SEEDS}`)
})

test('a first level too spread to tell a 15% drift: the control takes its old third, said so', () => {
  const first = tpots(40, 20, 1.2, 3)
  const size = sizeControl({ ...FIRST, perRun: 40, first: figures(first) })
  assert.equal(size.requests, controlRequests(40, FIRST.streams))
  assert.match(size.why, /too spread/)
})

test('the control is cut at a tenth of the run so far, and at the first level’s own time', () => {
  const first = figures(tpots(FIRST.perRun, 20, 0.2, 1))
  assert.equal(sizeControl({ ...FIRST, runSeconds: 200, first }).seconds, 20)
  assert.equal(sizeControl({ ...FIRST, runSeconds: 20, first }).seconds, 5, '5 s at least')
  assert.equal(sizeControl({ ...FIRST, firstSeconds: 6, runSeconds: 2000, first }).seconds, 6)
  assert.match(sizeControl({ ...FIRST, first }).why, /at most 60 s: a tenth of the run so far, 5 s at least/)
})
