import assert from 'node:assert/strict'
import { test } from 'node:test'
import { underDrivenWarning } from '../../src/config/plan-warnings.js'
import { inFlightFigures } from '../../src/metrics/in-flight.js'
import type { RequestRecord } from '../../src/records/types.js'
import { makeRecord } from '../helpers/records.js'

/** A request from `from` to `to` ms with `tokens` token events spread evenly after a 10-ms TTFT. */
function request(from: number, to: number, tokens = 10): RequestRecord {
  const step = (to - from - 10) / (tokens - 1)
  return makeRecord({
    sent_at: from,
    token_times: Array.from({ length: tokens }, (_, i) => from + 10 + i * step),
  })
}

/**
 * A closed loop of `streams` streams sharing `total` requests of `ms` each, all streams starting at
 * 0: each stream sends its next request the moment its previous one ends, until none is left.
 */
function closedLoop(streams: number, total: number, ms: number): RequestRecord[] {
  const records: RequestRecord[] = []
  const free = Array.from({ length: streams }, () => 0)
  for (let i = 0; i < total; i++) {
    const s = free.indexOf(Math.min(...free))
    records.push(request(free[s] as number, (free[s] as number) + ms))
    free[s] = (free[s] as number) + ms
  }
  return records
}

test('achieved concurrency: time-averaged and maximum requests in flight', () => {
  // 4 streams, 12 requests of 100 ms: 4 in flight for the whole 300 ms; steady once the first
  // wave has gone through (100 ms).
  const held = inFlightFigures(closedLoop(4, 12, 100), 4)
  assert.deepEqual(held.achieved, { mean: 4, max: 4, streams: 4 })
  assert.deepEqual(held.steady, { start_s: 0.1, end_s: 0.3, mean_in_flight: 4, output_tokens_per_s: 400 })
  // 64 streams, 40 requests: never more than 40 in flight; no steady window.
  const under = inFlightFigures(closedLoop(64, 40, 100), 64)
  assert.deepEqual(under.achieved, { mean: 40, max: 40, streams: 64 })
  assert.equal(under.steady, null)
  assert.deepEqual(inFlightFigures([], 4), { achieved: { mean: 0, max: 0, streams: 4 }, steady: null })
})

test('steady window: the first wave and the drain tail are outside, and throughput over it is the held rate', () => {
  // Stream 0 runs three 100-ms requests and runs dry at 300; stream 1 runs 0-150 then 150-600.
  const records = [request(0, 100), request(100, 200), request(200, 300), request(0, 150), request(150, 600)]
  const figures = inFlightFigures(records, 2)
  // 2 in flight from 0 to 300, 1 from 300 to 600: mean 1.5.
  assert.deepEqual(figures.achieved, { mean: 1.5, max: 2, streams: 2 })
  // From the first completion (100 ms) to stream 0 running dry (300 ms).
  assert.equal(figures.steady?.start_s, 0.1)
  assert.equal(figures.steady?.end_s, 0.3)
  assert.equal(figures.steady?.mean_in_flight, 2)
  // Inside (100, 300]: the 2nd and 3rd requests' 20 tokens, the 4th's 4 events after 100 (103.3,
  // 118.9, 134.4, 150) and the 5th's 3 up to 300 (160, 208.9, 257.8): 27 tokens in 0.2 s.
  assert.equal(figures.steady?.output_tokens_per_s, 135)
})

test('a steady part under a quarter of the window is too short: none', () => {
  // 2 streams together for 50 ms, then one runs alone for 950 ms.
  const figures = inFlightFigures([request(0, 50), request(0, 1000)], 2)
  assert.equal(figures.steady, null)
  assert.equal(figures.achieved.max, 2)
  // Request-rate mode has no streams to hold.
  assert.equal(inFlightFigures(closedLoop(4, 12, 100), null).steady, null)
})

test('the plan line warns of levels with fewer than 3 requests per stream, saying what to set', () => {
  const load = {
    mode: 'concurrency',
    levels: [16, 64],
    requests_per_level: 40,
    duration_per_level_s: null,
  } as unknown as Parameters<typeof underDrivenWarning>[0]
  const warning = underDrivenWarning(load) ?? ''
  assert.match(warning, /40 requests per level is under 3 per stream at levels 16,64/)
  assert.match(warning, /64 can never have all its streams in flight/)
  assert.match(warning, /set --requests 192 or more/)
  assert.equal(underDrivenWarning({ ...load, requests_per_level: 192 }), null)
  assert.equal(underDrivenWarning({ ...load, requests_per_level: null, duration_per_level_s: 30 }), null)
})
