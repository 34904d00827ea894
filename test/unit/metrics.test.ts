import assert from 'node:assert/strict'
import { test } from 'node:test'
import { judgeClient } from '../../src/metrics/client-health.js'
import { tpotMs, ttftMs } from '../../src/metrics/derive.js'
import { percentileKey, summarizeSamples } from '../../src/metrics/distribution.js'
import { summarizeLevel } from '../../src/metrics/summarize.js'
import { makeRecord } from '../helpers/records.js'

const OPTIONS = { percentiles: [50], timeoutMs: 5000, slos: [] }
const HEALTHY_CLIENT = {
  cpu_percent: 5,
  loops: [{ thread: 'worker-0', utilization: 0.1, delay_p99_ms: 1, delay_max_ms: 2 }],
}

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
  const level = summarizeLevel(1, records, OPTIONS, HEALTHY_CLIENT)
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
  const level = summarizeLevel(1, records, OPTIONS, HEALTHY_CLIENT)
  assert.equal(level.token_counting.from_usage, 2)
  assert.equal(level.token_counting.from_tokenizer, 1)
  assert.equal(level.token_counting.tokenizer_vs_usage_percent, 12.5)
})

test('client health: a busy loop, a late timer or late sends make a level client-bound, with reasons', () => {
  const loop = { thread: 'worker-0', utilization: 0.3, delay_p99_ms: 1, delay_max_ms: 3 }
  const prompt = { lateness_p99_ms: 0.4, lateness_mean_ms: 0.2, e2e_mean_ms: 1000 }
  const calm = judgeClient({ cpu_percent: 40, loops: [loop, { ...loop, thread: 'main' }] }, prompt)
  assert.equal(calm.bound, false)
  assert.deepEqual(calm.reasons, [])
  const busy = judgeClient(
    { cpu_percent: 95, loops: [loop, { ...loop, thread: 'worker-1', utilization: 0.85 }] },
    prompt,
  )
  assert.equal(busy.bound, true)
  assert.equal(busy.event_loop_utilization, 0.85)
  assert.match(busy.reasons.join(), /event loop 85% busy/)
  // 100 ms late on average against 900 ms requests: 90% of the streams in flight.
  const late = judgeClient(
    { cpu_percent: 40, loops: [{ ...loop, delay_p99_ms: 12.5 }] },
    { lateness_p99_ms: 150, lateness_mean_ms: 100, e2e_mean_ms: 900 },
  )
  assert.deepEqual(late.reasons, [
    'event-loop delay p99 12.5 ms (limit 5 ms)',
    'only 90% of the streams in flight: requests sent 100.0 ms late on average',
  ])
  assert.equal(late.effective_concurrency_ratio, 0.9)
  // 20 ms late against 1.4 s requests is 98.6% in flight: not a distortion worth a flag.
  const slightlyLate = judgeClient(
    { cpu_percent: 40, loops: [loop] },
    { lateness_p99_ms: 30, lateness_mean_ms: 20, e2e_mean_ms: 1400 },
  )
  assert.equal(slightlyLate.bound, false)
})

test('dispatch lateness p99 comes from the records: sent_at - scheduled_at', () => {
  const records = Array.from({ length: 100 }, (_, i) =>
    makeRecord({
      scheduled_at: i * 10,
      sent_at: i * 10 + (i === 99 ? 50 : 0.5),
      token_times: [i * 10 + 60, i * 10 + 70],
    }),
  )
  const level = summarizeLevel(1, records, OPTIONS, HEALTHY_CLIENT)
  // p99 of 99 x 0.5 ms and one 50 ms: h = 99 x 0.99 = 98.01 → 0.5 + 0.01 x 49.5 = 0.995 (2 decimals kept)
  assert.ok(Math.abs((level.client.dispatch_lateness_p99_ms as number) - 0.995) <= 0.006)
  assert.equal(level.client.bound, false)
})

test('the terminal verdict lines carry the saturation, capacity, advice and the client notes', async () => {
  const { renderVerdict } = await import('../../src/report/terminal.js')
  const { finishResult } = await import('../../src/result/build-result.js')
  const records = [makeRecord({ sent_at: 0, token_times: [100, 110, 120], output_tokens: 3 })]
  const noisy = {
    cpu_percent: 5,
    loops: [{ thread: 'worker-0', utilization: 0.05, delay_p99_ms: 9, delay_max_ms: 12 }],
  }
  const level = summarizeLevel(1, records, { ...OPTIONS, slos: [] }, noisy)
  const meta = {
    percentiles: [50],
    slo: { ttft_p50_ms: 500 },
    workload: { output_tokens: 16 },
    partial: false,
  } as never
  const text = renderVerdict(
    finishResult(
      [
        {
          ...level,
          slo: { checks: [], meets: true, good_share: 1, goodput_requests_per_s: 1, goodput_tokens_per_s: 1 },
        },
      ],
      meta,
    ),
  )
  // The answer first, as report.html words it; the SLO detail under it; then the knee.
  assert.match(
    text,
    /^Capacity: 1 concurrent stream under the SLOs\n {2}capacity 1 under the SLOs \(ttft_p50_ms ≤ 500\)[^\n]*\nSaturation: one level only/,
  )
  assert.match(text, /Advice: outputs of 16 tokens are short/)
  assert.match(text, /c=1: note: timers fired 9.0 ms late at p99 while the client was mostly idle/)
  assert.equal(level.client.bound, false, 'machine noise on an idle client is a note, not client-bound')
})
