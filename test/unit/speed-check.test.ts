import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { CalibrationPoint } from '../../src/model/calibration-design.js'
import { speedCheck, speedCheckPoint, widenedBySpeedCheck } from '../../src/model/speed-check.js'
import { makeRecord } from '../helpers/records.js'

const point = (
  purpose: CalibrationPoint['purpose'],
  concurrency: number,
  inputTokens: number,
): CalibrationPoint => ({
  purpose,
  concurrency,
  requests: 4,
  inputTokens,
  outputTokens: 16,
  estimatedS: 1,
})

/** Requests one after another, each a first token at 30 ms then 15 more `gapMs` apart. */
function loop(gapMs: number, requests = 4) {
  return Array.from({ length: requests }, (_, i) => {
    const sent = i * 1000
    return makeRecord({
      seq: i,
      sent_at: sent,
      token_times: Array.from({ length: 16 }, (_, k) => sent + 30 + k * gapMs),
    })
  })
}

test('the speed check repeats the batch-1 decode loop at the shortest prompt; none without one', () => {
  const design = [
    point('prefill', 1, 16),
    point('decode', 1, 480),
    point('decode', 2, 32),
    point('decode', 1, 32),
    point('slots', 6, 32),
  ]
  assert.equal(speedCheckPoint(design), design[3])
  assert.equal(speedCheckPoint([point('prefill', 1, 16), point('decode', 2, 32)]), null)
})

test('the speed check: the two TPOT medians and how far the second moved from the first', () => {
  const decode = point('decode', 1, 32)
  const check = speedCheck(decode, loop(10), loop(12), 41.26)
  assert.deepEqual(check, {
    point: 'decode at batch 1, 32-token prompts, 16 output tokens',
    first_tpot_ms: 10,
    repeat_tpot_ms: 12,
    change: 0.2,
    seconds_apart: 41.3,
  })
  // Nothing to compare: a repeat whose requests all failed.
  const failed = loop(12).map((record) => ({
    ...record,
    error: { class: 'http_5xx' as const, message: 'HTTP 500' },
    token_times: [],
  }))
  assert.equal(speedCheck(decode, loop(10), failed, 5), null)
})

test("the prediction interval widened by the repeat's change, in either direction, and says so", () => {
  const interval = {
    coverage: 0.9,
    relative_error: { output_tokens_per_s: 0.05, ttft_ms: 0.1, tpot_ms: 0.04 },
    basis: 'in-sample',
  }
  const decode = point('decode', 1, 32)
  // 8 ms and 12 ms against 10: the machine 20% faster, then 20% slower.
  for (const gap of [8, 12]) {
    const check = speedCheck(decode, loop(10), loop(gap), 30)
    assert.ok(check !== null)
    const widened = widenedBySpeedCheck(interval, check)
    assert.deepEqual(widened.relative_error, { output_tokens_per_s: 0.25, ttft_ms: 0.3, tpot_ms: 0.24 })
    assert.equal(widened.coverage, 0.9)
    assert.match(
      widened.basis,
      /^in-sample; plus 20\.0%, how far one point moved when measured again \(decode at batch 1, 32-token prompts, 16 output tokens: TPOT p50 10 ms, then (8|12) ms 30 s later; the machine's or the server's own state/,
    )
  }
})
