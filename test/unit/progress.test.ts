import assert from 'node:assert/strict'
import { test } from 'node:test'
import { formatProgress, levelProgress } from '../../src/report/progress.js'
import { makeRecord } from '../helpers/records.js'

test('progress line: done/total or elapsed/duration, live TTFT p50, tokens/s, errors; warm-up said as such', () => {
  const records = [
    makeRecord({ sent_at: 0, token_times: [40, 50], output_tokens: 2 }),
    makeRecord({ sent_at: 0, token_times: [60, 70], output_tokens: 2 }),
    makeRecord({
      sent_at: 0,
      end_at: 10,
      token_times: [],
      output_tokens: 0,
      error: { class: 'http_5xx', message: 'HTTP 500' },
    }),
  ]
  const byCount = levelProgress(8, false, records, 0, 2000, 40, null)
  assert.equal(formatProgress(byCount), 'level 8: 3/40 requests, TTFT p50 50 ms, 2 tok/s, 1 errors')
  const byTime = levelProgress(8, false, records, 0, 2000, null, 30)
  assert.equal(formatProgress(byTime), 'level 8: 2/30 s, 3 requests, TTFT p50 50 ms, 2 tok/s, 1 errors')
  assert.equal(formatProgress(levelProgress(8, true, [], 0, 10, 40, null)), 'level 8: warming up')
  // --precision: the count is a floor, and the line says how precise the named figures are so far.
  assert.equal(
    formatProgress({ ...byCount, precision: 'ttft_p95 ±6.2% (target 5%)' }),
    'level 8: 3 requests (at least 40), ttft_p95 ±6.2% (target 5%), TTFT p50 50 ms, 2 tok/s, 1 errors',
  )
  // --repeat: which run of the level is going.
  assert.equal(
    formatProgress({ ...byCount, repeat: { index: 1, of: 3 } }),
    'level 8 (run 2 of 3): 3/40 requests, TTFT p50 50 ms, 2 tok/s, 1 errors',
  )
})

test('progress line: a timed level past its window says it drains, not "62/30 s"; the run clock leads the line', () => {
  const records = [makeRecord({ sent_at: 0, token_times: [40, 50], output_tokens: 2 })]
  const draining = levelProgress(8, false, records, 0, 62_000, null, 30)
  const line = formatProgress(draining)
  assert.match(line, /^level 8: 30\/30 s, draining for 32 s, 1 requests/)
  assert.doesNotMatch(line, /62\/30/)
  const withClock = formatProgress({ ...draining, run: { elapsed_s: 125, remaining_s: 3725 } })
  assert.match(withClock, /^\[2:05, ~1:02:05 left\] level 8: 30\/30 s, draining/)
  assert.match(formatProgress({ ...draining, run: { elapsed_s: 7, remaining_s: null } }), /^\[0:07\] level 8/)
})
