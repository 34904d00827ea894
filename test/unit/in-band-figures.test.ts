import assert from 'node:assert/strict'
import { test } from 'node:test'
import { inBandFigures } from '../../src/metrics/in-band-figures.js'
import { summarizeLevel } from '../../src/metrics/summarize.js'
import type { ServerTimings } from '../../src/records/types.js'
import { makeRecord } from '../helpers/records.js'

const PERCENTILES = [50, 95]

function timings(
  prompt_ms: number,
  predicted_ms: number,
  predicted_n: number,
  extra: Partial<ServerTimings> = {},
) {
  return { prompt_n: 100, prompt_ms, predicted_n, predicted_ms, cache_n: null, ...extra }
}

test('prefill, decode per token and queue time (client TTFT − prompt_ms) per request', () => {
  // TTFT 500, 1000, 1500 ms; prefill 100, 200, 300 ms → queue 400, 800, 1200 ms.
  const records = [0, 1, 2].map((i) =>
    makeRecord({
      sent_at: 1000 * i,
      token_times: [1000 * i + 500 * (i + 1), 1000 * i + 500 * (i + 1) + 40],
      input_tokens: null,
      server_timings: timings(100 * (i + 1), 20 * (i + 1), 2),
    }),
  )
  const figures = inBandFigures(records, PERCENTILES)
  assert.ok(figures !== null)
  assert.equal(figures.requests_with_timings, 3)
  assert.equal(figures.server_prefill_ms.p50, 200)
  assert.equal(figures.server_prefill_ms.p95, 290)
  assert.deepEqual([figures.queue_ms.min, figures.queue_ms.p50, figures.queue_ms.max], [400, 800, 1200])
  assert.equal(figures.queue_ms.p95, 1160)
  // predicted_ms / predicted_n: 10, 20, 30 ms per token.
  assert.equal(figures.server_decode_ms_per_token.p50, 20)
  assert.equal(figures.cached_prompt_share, null, 'no cache_n, cached_tokens or usage: unknown, not 0')
  assert.equal(figures.reasoning_tokens, null)
})

test('failed requests and requests without data are left out; none with data gives null', () => {
  const failed = makeRecord({
    token_times: [100],
    error: { class: 'stream', message: 'x' },
    server_timings: timings(50, 10, 1),
    reasoning_tokens: 7,
  })
  const plain = makeRecord({ token_times: [100, 110] })
  assert.equal(inBandFigures([failed, plain], PERCENTILES), null)
  const older = makeRecord({ token_times: [100, 110], server_timings: null, cached_tokens: null })
  assert.equal(inBandFigures([older], PERCENTILES), null)
})

test('cached share: cache_n or cached_tokens over the prompt tokens of the requests that said', () => {
  const records = [
    // llama.cpp (newer): 300 cached, prompt_n 100 computed; usage.prompt_tokens 400.
    makeRecord({
      token_times: [50, 60],
      input_tokens: 400,
      server_timings: timings(20, 10, 2, { cache_n: 300 }),
    }),
    // llama.cpp without usage: prompt tokens = prompt_n + cache_n = 100 + 0.
    makeRecord({
      token_times: [50, 60],
      input_tokens: null,
      server_timings: timings(20, 10, 2, { cache_n: 0 }),
    }),
    // vLLM / OpenAI usage details: 100 of 500 cached, 12 reasoning tokens.
    makeRecord({ token_times: [50, 60], input_tokens: 500, cached_tokens: 100, reasoning_tokens: 12 }),
    // Says nothing about caching: not in the share.
    makeRecord({ token_times: [50, 60], input_tokens: 9000, reasoning_tokens: 3 }),
  ]
  const figures = inBandFigures(records, PERCENTILES)
  assert.ok(figures !== null)
  assert.equal(figures.cached_prompt_share, round4((300 + 0 + 100) / (400 + 100 + 500)))
  assert.equal(figures.reasoning_tokens, 15)
  assert.equal(figures.requests_with_timings, 2)
  assert.equal(figures.queue_ms.count, 2)
})

test('the level summary carries in_band only for its own measured requests', () => {
  const records = [
    makeRecord({ level: 4, token_times: [300, 310], server_timings: timings(100, 10, 2) }),
    makeRecord({ level: 4, phase: 'warmup', token_times: [900, 910], server_timings: timings(100, 10, 2) }),
    makeRecord({ level: 8, token_times: [900, 910], server_timings: timings(100, 10, 2) }),
  ]
  const summary = summarizeLevel(
    4,
    records,
    { percentiles: PERCENTILES, timeoutMs: 60_000, slos: [] },
    { cpu_percent: 0, loops: [] },
  )
  assert.equal(summary.in_band?.requests_with_timings, 1)
  assert.equal(summary.in_band?.queue_ms.p50, 200)
  const none = summarizeLevel(
    4,
    [makeRecord({ level: 4, token_times: [300, 310] })],
    { percentiles: PERCENTILES, timeoutMs: 60_000, slos: [] },
    { cpu_percent: 0, loops: [] },
  )
  assert.equal('in_band' in none, false, 'absent: results without in-band data stay as they were')
})

test('llama.cpp without cache_n: the prompt tokens it did not compute came from the cache', () => {
  // As the kit answered the same prompt twice: usage.prompt_tokens 31, timings.prompt_n 1.
  const again = makeRecord({
    token_times: [50, 60],
    input_tokens: 31,
    server_timings: timings(14, 60, 3, { prompt_n: 1 }),
  })
  const fresh = makeRecord({
    token_times: [50, 60],
    input_tokens: 31,
    server_timings: timings(24, 60, 3, { prompt_n: 31 }),
  })
  assert.equal(inBandFigures([again, fresh], PERCENTILES)?.cached_prompt_share, round4(30 / 62))
  // A prompt_n above the usage count does not make sense as a cache figure: left out.
  const odd = makeRecord({
    token_times: [50, 60],
    input_tokens: 5,
    server_timings: timings(24, 60, 3, { prompt_n: 31 }),
  })
  assert.equal(inBandFigures([odd], PERCENTILES)?.cached_prompt_share, null)
})

function round4(value: number): number {
  return Math.round(value * 10_000) / 10_000
}
