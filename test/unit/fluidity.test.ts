import assert from 'node:assert/strict'
import { test } from 'node:test'
import { fluidityAccumulator, fluidityDeadlines, fluidityIndex } from '../../src/metrics/fluidity.js'
import { evaluateSlos, parseSloKey, toSlos } from '../../src/metrics/slo.js'
import { configErrorMessage } from '../helpers/config-error.js'
import { makeRecord } from '../helpers/records.js'

const PACE = { prefill_ms: 100, decode_ms: 20 }

/** Tokens at `gaps` ms apart after a first token `first` ms after a send at 0. */
function times(first: number, gaps: number[]): number[] {
  const out = [first]
  for (const gap of gaps) out.push((out.at(-1) as number) + gap)
  return out
}

test('a stream on pace meets every deadline; one stall costs one miss, not every later token', () => {
  assert.equal(fluidityIndex(0, times(80, Array(9).fill(15)), PACE), 1)
  // Token 5 comes 200 ms late; the schedule re-bases there, and the tokens after it are on time again.
  const stalled = times(80, [15, 15, 15, 15, 215, 15, 15, 15, 15])
  assert.equal(fluidityIndex(0, stalled, PACE), 0.9)
  // A stream at 1.5x the decode deadline throughout misses every token once the 20 ms its first token
  // had in hand are used up (tokens 0-2 on time), and every later one after each re-base.
  assert.equal(fluidityIndex(0, times(80, Array(9).fill(30)), PACE), 0.3)
  // A late first token is one miss too.
  assert.equal(fluidityIndex(0, times(300, Array(9).fill(15)), PACE), 0.9)
  assert.equal(fluidityIndex(0, [], PACE), null)
})

test("the run's deadlines are twice the warm probes' TTFT and TPOT; none without them", () => {
  const deadlines = fluidityDeadlines(40, 10, true)
  assert.deepEqual(deadlines && { prefill_ms: deadlines.prefill_ms, decode_ms: deadlines.decode_ms }, {
    prefill_ms: 80,
    decode_ms: 20,
  })
  assert.equal(fluidityDeadlines(null, 10, false), null)
})

test('a level: p90 is the index 90% of requests reach; a failed request counts 0', () => {
  const deadlines = { ...PACE, basis: 'test' }
  const accumulator = fluidityAccumulator(deadlines)
  for (let i = 0; i < 9; i++)
    accumulator.add(makeRecord({ sent_at: 0, token_times: times(80, Array(9).fill(15)) }))
  accumulator.add(makeRecord({ sent_at: 0, error: { class: 'http_5xx', message: 'HTTP 500' } }))
  const figures = accumulator.result()
  assert.equal(figures?.requests, 10)
  assert.equal(figures?.mean, 0.9)
  assert.equal(figures?.p50, 1)
  assert.ok((figures?.p90 ?? 1) < 1, 'the failed request pulls the 10th percentile below 1')
  assert.equal(fluidityAccumulator(null).result(), null)
})

test('fluidity_p90 is an SLO held from below: met when the index 90% of requests reach is at least the threshold', () => {
  assert.deepEqual(parseSloKey('fluidity_p90'), { metric: 'fluidity', percentile: 90, better: 'higher' })
  assert.match(String(parseSloKey('fluidity_p90_ms')), /fluidity_p90/)
  const deadlines = { ...PACE, basis: 'test' }
  const smooth = Array.from({ length: 20 }, () =>
    makeRecord({ sent_at: 0, token_times: times(80, Array(9).fill(15)), end_at: 300 }),
  )
  const choppy = smooth.map((r, i) =>
    i < 4 ? makeRecord({ sent_at: 0, token_times: times(80, Array(9).fill(30)), end_at: 400 }) : r,
  )
  const slos = toSlos({ fluidity_p90: 0.8 })
  const met = evaluateSlos(smooth, slos, 10_000, 1, deadlines)
  assert.equal(met.meets, true)
  assert.equal(met.good_share, 1)
  const missed = evaluateSlos(choppy, slos, 10_000, 1, deadlines)
  assert.equal(missed.meets, false, JSON.stringify(missed.checks))
  assert.equal(missed.checks[0]?.value_ms, 0.3)
  assert.equal(missed.good_share, 0.8)
  assert.match(
    configErrorMessage([], { base_url: 'http://a.test', model: 'm', slo: { fluidity_p90: 1.5 } }),
    /fluidity index above 0 and at most 1/,
  )
})
