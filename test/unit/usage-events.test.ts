import assert from 'node:assert/strict'
import { test } from 'node:test'
import { connectionFigures } from '../../src/metrics/connection-figures.js'
import { eventFigures, eventNotes } from '../../src/metrics/event-figures.js'
import type { RequestRecord } from '../../src/records/types.js'
import { implausibleUsage } from '../../src/records/usage-check.js'
import { completeTokenCounts } from '../../src/workload/token-counts.js'
import { makeRecord } from '../helpers/records.js'

/** Four one-token events 10 ms apart, max_tokens 4. */
function record(overrides: Partial<RequestRecord> = {}): RequestRecord {
  return makeRecord({ token_times: [10, 20, 30, 40], requested_output_tokens: 4, ...overrides })
}

test('usage is believed when sane, refused when negative, fractional, far above max_tokens or far from the events', () => {
  assert.equal(implausibleUsage(record(), 4, 4), null)
  assert.equal(implausibleUsage(record(), 5, 4), null, 'a tokenizer difference is not impossible')
  assert.match(implausibleUsage(record(), -5, 4) ?? '', /negative/)
  assert.match(implausibleUsage(record(), 2.5, 4) ?? '', /whole number/)
  assert.match(implausibleUsage(record(), 1e15, 4) ?? '', /above the max_tokens of 4/)
  const noMax = record({ requested_output_tokens: undefined })
  assert.match(implausibleUsage(noMax, 1e15, 4) ?? '', /far from the 4 token events/)
  assert.match(
    implausibleUsage(record({ chunks: 200, requested_output_tokens: 256 }), 0, 200) ?? '',
    /far below/,
  )
  // Speculative decoding: 3 tokens per event is believable.
  assert.equal(implausibleUsage(record({ chunks: 100, requested_output_tokens: 300 }), 300, 300), null)
})

test('completeTokenCounts falls back to the tokenizer for impossible usage and keeps both', () => {
  const bad = completeTokenCounts(record({ output_tokens: -5, output_text: 'a b c d' }), () => 4)
  assert.equal(bad.output_tokens, 4)
  assert.equal(bad.token_source, 'tokenizer')
  assert.deepEqual(bad.rejected_usage?.completion_tokens, -5)
  assert.equal(bad.tokenizer_output_tokens, 4)
  const good = completeTokenCounts(record({ output_tokens: 4, output_text: 'a b c d' }), () => 4)
  assert.equal(good.token_source, 'usage')
  assert.equal(good.rejected_usage, undefined)
})

test('tokens per event, ITL per token, events after [DONE], and the multi-token note', () => {
  const single = eventFigures([record()], [50])
  assert.equal(single.tokens_per_event, 1)
  assert.equal(single.itl_per_token_ms.mean, 10)
  assert.deepEqual(eventNotes(single, 0), [])
  const batched = eventFigures([record({ output_tokens: 8, events_after_done: 2 })], [50])
  assert.equal(batched.tokens_per_event, 2)
  assert.equal(batched.itl_per_token_ms.mean, 5)
  assert.equal(batched.events_after_done, 2)
  const notes = eventNotes(batched, 1)
  assert.equal(notes.length, 3)
  assert.match(notes[0] ?? '', /2\.00 tokens on average/)
  assert.equal(eventFigures([record({ chunks: 0, token_times: [] })], [50]).tokens_per_event, null)
})

test('connection figures count new, reused and resent requests', () => {
  const figures = connectionFigures(
    [
      record({ connection: 'new' }),
      record({ connection: 'reused' }),
      record({ connection: 'new', resent: { reason: 'UND_ERR_SOCKET other side closed' } }),
      record(),
    ],
    3,
  )
  assert.deepEqual(figures, { opened: 2, reused: 1, resent: 1, closed_by_server: 3 })
  assert.equal(connectionFigures([], undefined).closed_by_server, null)
})
