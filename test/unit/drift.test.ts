import assert from 'node:assert/strict'
import { test } from 'node:test'
import { DriftSamples } from '../../src/analysis/drift.js'
import { quantileInterval } from '../../src/metrics/intervals.js'
import type { RequestRecord } from '../../src/records/types.js'
import { makeRecord } from '../helpers/records.js'

test('quantileInterval: the textbook order statistics of the median, and the whole sample when it is small', () => {
  const ranks = (n: number): number[] => Array.from({ length: n }, (_, i) => i + 1)
  // Conover's table: n = 20 → x(6)..x(15); n = 100 → x(40)..x(61) (95%, binomial).
  assert.deepEqual(quantileInterval(ranks(20), 0.5), { low: 6, high: 15 })
  assert.deepEqual(quantileInterval(ranks(100), 0.5), { low: 40, high: 61 })
  // 8 values: only min..max covers the median with 95% (99.2%); x(2)..x(7) covers 93%.
  assert.deepEqual(quantileInterval(ranks(8), 0.5), { low: 1, high: 8 })
  assert.equal(quantileInterval([], 0.5), null)
})

/** A request at level 1 of `phase`: TTFT `ttft` ms, then 10 tokens `gap` ms apart, with llama.cpp timings of `decode` ms/token. */
function request(
  phase: RequestRecord['phase'],
  ttft: number,
  gap: number,
  decode: number,
  i: number,
): RequestRecord {
  const sent = i * 10_000
  const times = Array.from({ length: 10 }, (_, k) => sent + ttft + k * gap + (i % 3) * 0.1)
  return makeRecord({
    phase,
    sent_at: sent,
    token_times: times,
    server_timings: {
      prompt_n: 32,
      prompt_ms: ttft * 0.8,
      predicted_n: 10,
      predicted_ms: 10 * decode,
      cache_n: 0,
    },
  })
}

function drift(first: (i: number) => RequestRecord, control: (i: number) => RequestRecord, n = 12, m = 8) {
  const samples = new DriftSamples(1)
  for (let i = 0; i < n; i++) samples.add(first(i))
  for (let i = 0; i < m; i++) samples.add(control(i))
  // Another level's records and warm-up are not the first level's.
  samples.add({ ...request('measure', 500, 50, 50, 99), level: 2 })
  samples.add(request('warmup', 500, 50, 50, 98))
  return samples.result()
}

test('a control like the first level: not moved, and the reason names the figures that held', () => {
  const result = drift(
    (i) => request('measure', 60, 15, 15, i),
    (i) => request('control', 60.5, 15.05, 15.02, i),
  )
  assert.ok(result !== null)
  assert.equal(result.first.requests, 12)
  assert.equal(result.control.requests, 8)
  assert.equal(result.moved, false, result.reason)
  assert.match(
    result.reason,
    /c=1 measured again at the end matches its first measurement within the intervals: server decode/,
  )
})

test('a control 3x slower: moved, slower, named figure by figure', () => {
  const result = drift(
    (i) => request('measure', 60, 15, 15, i),
    (i) => request('control', 180, 45, 45, i),
  )
  assert.ok(result !== null)
  assert.equal(result.moved, true)
  assert.match(
    result.reason,
    /^the environment drifted: c=1 .*server decode 45\.0 .*against 15\.0 .*\(slower\)/,
  )
  assert.match(result.reason, /tokens\/s per stream .*\(slower\)/)
})

test('apart intervals but a change under the floors is not drift: 0.2 ms on a 2 ms TPOT', () => {
  const result = drift(
    (i) =>
      makeRecord({
        phase: 'measure',
        sent_at: i * 1000,
        token_times: Array.from({ length: 10 }, (_, k) => i * 1000 + 50 + 2 * k),
      }),
    (i) =>
      makeRecord({
        phase: 'control',
        sent_at: i * 1000,
        token_times: Array.from({ length: 10 }, (_, k) => i * 1000 + 50.5 + 2.2 * k),
      }),
  )
  assert.ok(result !== null)
  assert.equal(result.moved, false, result.reason)
  assert.ok((result.control.tpot_ms?.low ?? 0) > (result.first.tpot_ms?.high ?? 0), 'the intervals are apart')
})

test('no control records: no drift; failed control requests count but give no figures', () => {
  assert.equal(
    drift(
      (i) => request('measure', 60, 15, 15, i),
      (i) => request('control', 60, 15, 15, i),
      12,
      0,
    ),
    null,
  )
  const failed = drift(
    (i) => request('measure', 60, 15, 15, i),
    (i) => ({ ...request('control', 60, 15, 15, i), error: { class: 'http_5xx', message: 'busy' } }),
  )
  assert.ok(failed !== null)
  assert.equal(failed.control.failed, 8)
  assert.equal(failed.moved, false)
  assert.match(failed.reason, /too few successful requests to compare \(0 in the control, 12/)
})

test('a control whose only two requests took 100x as long: moved, though too few succeeded to compare figures (issue 36)', () => {
  const result = drift(
    (i) => request('measure', 60, 15, 15, i),
    (i) => request('control', 6000, 1500, 1500, i),
    12,
    2,
  )
  assert.ok(result !== null)
  assert.equal(result.moved, true, result.reason)
  assert.match(
    result.reason,
    /too few requests succeeded to compare figure by figure, but the median request took [\d.]+ ms against [\d.]+ ms \(\d+\.\d× slower\)/,
  )
  // Failed quickly, as fast as the first level answered: nothing says the server slowed.
  const failedFast = drift(
    (i) => request('measure', 60, 15, 15, i),
    (i) => ({ ...request('control', 60, 15, 15, i), error: { class: 'http_5xx', message: 'busy' } }),
  )
  assert.equal(failedFast?.moved, false)
})
