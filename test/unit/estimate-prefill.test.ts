import assert from 'node:assert/strict'
import { test } from 'node:test'
import { levelSeconds } from '../../src/run/plan/estimate.js'
import { projectedSeconds } from '../../src/run/setup/probe-timing.js'
import { testConfig } from '../helpers/run-config.js'

test('prefill adds up request by request: 8 requests of 1 s (0.8 s prefill) on 4 streams take 8 × 0.8 + 2 × 0.2 s', () => {
  const config = testConfig('http://127.0.0.1:1', 'm', {
    levels: [1, 4],
    requests: 8,
    warmup: 0,
    out_dir: '/nonexistent',
  })
  assert.equal(levelSeconds(config, 4, { request_s: 1 }), 2, 'without a prefill part: 2 rounds of 1 s')
  assert.ok(Math.abs(levelSeconds(config, 4, { request_s: 1, prefill_s: 0.8 }) - 6.8) < 1e-9)
  // One stream: the same either way.
  assert.equal(levelSeconds(config, 1, { request_s: 1, prefill_s: 0.8 }), 8)
})

test('the length probe sets the TTFT of the projection, spread as the short probes are', () => {
  const timing = {
    probes: 3,
    ttft_ms: { median: 20, min: 18, max: 30 },
    tpot_ms: { median: 10, min: 10, max: 10 },
    e2e_ms: { median: 170, min: 168, max: 180 },
    at_length: { input_tokens: 1000, ttft_ms: 920, prefill_ms_per_token: 0.9 },
  }
  const projected = projectedSeconds(timing, 16)
  assert.ok(Math.abs(projected.median - (920 + 150) / 1000) < 1e-9)
  assert.ok(Math.abs(projected.low - (918 + 150) / 1000) < 1e-9)
  assert.ok(Math.abs(projected.high - (930 + 150) / 1000) < 1e-9)
  assert.ok(Math.abs((projected.prefill_s ?? 0) - 0.9) < 1e-9)
  const { at_length: _, ...short } = timing
  assert.equal(projectedSeconds(short, 16).prefill_s, undefined)
  assert.ok(Math.abs(projectedSeconds(short, 16).median - 0.17) < 1e-9)
})
