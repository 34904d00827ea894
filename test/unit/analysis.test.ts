import assert from 'node:assert/strict'
import { test } from 'node:test'
import { findSaturation } from '../../src/analysis/saturation.js'
import { levelVerdict } from '../../src/analysis/verdict.js'
import type { Distribution } from '../../src/metrics/distribution.js'

function level(concurrency: number, tokensPerS: number, ttftP95: number, successRate = 1) {
  const ttft: Distribution = { count: 10, mean: ttftP95, min: ttftP95, max: ttftP95, p95: ttftP95 }
  return { concurrency, output_tokens_per_s: tokensPerS, ttft_ms: ttft, success_rate: successRate }
}

test('a clear knee: throughput flat and TTFT up 4x from 32 to 64 → saturation at 32', () => {
  const saturation = findSaturation([
    level(1, 100, 50),
    level(8, 780, 55),
    level(32, 2900, 80),
    level(64, 2990, 330),
  ])
  assert.equal(saturation?.concurrency, 32)
  assert.equal(saturation?.reason, 'throughput +3% from 32 to 64 while TTFT p95 x4.1')
})

test('no knee in range: throughput still scaling → null', () => {
  assert.equal(findSaturation([level(1, 100, 50), level(4, 390, 52), level(16, 1500, 60)]), null)
})

test('flat throughput with flat TTFT is not a knee (client- or request-bound), nor is one level', () => {
  assert.equal(findSaturation([level(1, 100, 50), level(2, 101, 51)]), null)
  assert.equal(findSaturation([level(4, 100, 50)]), null)
})

test('a falling success rate marks the knee at the last level that held', () => {
  const saturation = findSaturation([level(1, 100, 50), level(8, 750, 60), level(16, 1300, 70, 0.8)])
  assert.equal(saturation?.concurrency, 8)
  assert.match(saturation?.reason ?? '', /success rate fell from 100.0% to 80.0%/)
})

test('verdicts: client-bound beats overloaded beats saturated', () => {
  const errors = { timeout: 0, http_4xx: 0, http_429: 0, http_5xx: 0, connection: 0, stream: 0, other: 0 }
  const base = {
    concurrency: 64,
    success_rate: 1,
    errors,
    requests: 10,
    client: {
      cpu_percent: 10,
      notes: [],
      rss_mib: 100,
      event_loop_delay_p99_ms: 1,
      event_loop_utilization: 0.1,
      dispatch_lateness_p99_ms: 0.2,
      effective_concurrency_ratio: 1,
      bound: false,
      reasons: [],
    },
  }
  const knee = { concurrency: 32, reason: '' }
  assert.equal(levelVerdict(base, knee), 'saturated')
  assert.equal(levelVerdict({ ...base, concurrency: 32 }, knee), 'healthy')
  assert.equal(levelVerdict({ ...base, errors: { ...errors, timeout: 1 } }, knee), 'overloaded')
  assert.equal(levelVerdict({ ...base, success_rate: 0.9 }, null), 'overloaded')
  assert.equal(
    levelVerdict({ ...base, success_rate: 0.9, client: { ...base.client, bound: true } }, knee),
    'client-bound',
  )
})
