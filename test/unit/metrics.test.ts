import assert from 'node:assert/strict'
import { test } from 'node:test'
import { tpotMs, ttftMs } from '../../src/metrics/derive.js'
import { percentileKey, summarizeSamples } from '../../src/metrics/distribution.js'
import { summarizeLevel } from '../../src/metrics/summarize.js'
import { makeRecord } from '../helpers/records.js'

const HEALTHY_CLIENT = { cpu_percent: 5, event_loop_delay_p99_ms: 1, bound: false }

test('percentiles are exact with linear interpolation (numpy default)', () => {
  // numpy.percentile([1..10], [50, 90, 95, 99]) = 5.5, 9.1, 9.55, 9.91
  const summary = summarizeSamples([10, 1, 9, 2, 8, 3, 7, 4, 6, 5], [50, 90, 95, 99])
  assert.equal(summary.p50, 5.5)
  assert.equal(summary.p90, 9.1)
  assert.equal(summary.p95, 9.55)
  assert.equal(summary.p99, 9.91)
  assert.equal(summary.mean, 5.5)
  assert.equal(summary.min, 1)
  assert.equal(summary.max, 10)
  assert.equal(summary.count, 10)
})

test('one sample is every percentile; no samples give nulls, not zeros', () => {
  assert.equal(summarizeSamples([42], [50, 99]).p99, 42)
  const empty = summarizeSamples([], [50, 99.9])
  assert.equal(empty.mean, null)
  assert.equal(empty['p99.9'], null)
  assert.equal(empty.count, 0)
  assert.equal(percentileKey(99.9), 'p99.9')
})

test('TPOT excludes the first token: (e2e - ttft) / (tokens - 1)', () => {
  const record = makeRecord({ sent_at: 100, token_times: [300, 310, 330, 360], end_at: 370 })
  assert.equal(ttftMs(record), 200)
  assert.equal(tpotMs(record), (370 - 300) / 3)
  assert.equal(tpotMs(makeRecord({ token_times: [5] })), null, 'one token has no TPOT')
})

test('a level summary: failures by class, figures over successful requests, throughput over the wall window', () => {
  const records = [
    makeRecord({ sent_at: 0, token_times: [100, 110, 120], output_tokens: 3 }),
    makeRecord({ sent_at: 50, token_times: [250, 270, 290, 310], output_tokens: 4 }),
    makeRecord({
      sent_at: 60,
      end_at: 1060,
      token_times: [900],
      output_tokens: 1,
      error: { class: 'timeout', message: 'no complete response within 1 s' },
    }),
    makeRecord({
      sent_at: 70,
      end_at: 80,
      status: 429,
      output_tokens: 0,
      error: { class: 'http_429', message: 'HTTP 429' },
    }),
    makeRecord({ sent_at: 0, token_times: [5, 6], phase: 'warmup' }),
    makeRecord({ sent_at: 0, token_times: [5, 6], level: 2 }),
  ]
  const level = summarizeLevel(1, records, [50], HEALTHY_CLIENT)
  assert.equal(level.requests, 4)
  assert.equal(level.ok, 2)
  assert.equal(level.success_rate, 0.5)
  assert.equal(level.errors.timeout, 1)
  assert.equal(level.errors.http_429, 1)
  assert.equal(level.errors.http_5xx, 0)
  assert.deepEqual([level.ttft_ms.min, level.ttft_ms.max], [100, 200])
  assert.equal(level.itl_ms.count, 2 + 3)
  assert.equal(level.itl_ms.p50, 20)
  assert.equal(level.tpot_ms.mean, (10 + 20) / 2)
  // Window: first send 0 → last end 1060 ms (the timed-out request counts toward the window).
  assert.equal(level.duration_s, 1.06)
  assert.equal(level.output_tokens, 7)
  assert.equal(level.output_tokens_per_s, Math.round((7 / 1.06) * 100) / 100)
})

test('token counting per level: usage vs tokenizer, and the discrepancy where both exist', () => {
  const records = [
    makeRecord({ token_times: [1, 2, 3, 4], output_tokens: 4, tokenizer_output_tokens: 5 }),
    makeRecord({ token_times: [1, 2, 3, 4], output_tokens: 4, tokenizer_output_tokens: 4 }),
    makeRecord({
      token_times: [1, 2],
      output_tokens: 3,
      token_source: 'tokenizer',
      tokenizer_output_tokens: null,
    }),
  ]
  const level = summarizeLevel(1, records, [50], HEALTHY_CLIENT)
  assert.equal(level.token_counting.from_usage, 2)
  assert.equal(level.token_counting.from_tokenizer, 1)
  assert.equal(level.token_counting.tokenizer_vs_usage_percent, 12.5)
})
