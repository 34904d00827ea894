import assert from 'node:assert/strict'
import { test } from 'node:test'
import { refinementLevel, runAdvice } from '../../src/analysis/advice.js'
import { findSaturation } from '../../src/analysis/saturation.js'
import { compareRuns } from '../../src/compare/compare.js'
import { evaluateSlos, findCapacity, parseSloKey, toSlos } from '../../src/metrics/slo.js'
import { seededRandom } from '../../src/random.js'
import type { RequestRecord } from '../../src/records/types.js'
import type { RunMeta } from '../../src/result/run-meta.js'
import { makeRecord } from '../helpers/records.js'

const TIMEOUT_MS = 10_000

test('SLO accounting on hand-made records: good share, goodput, error-adjusted checks', () => {
  const slos = toSlos({ ttft_p50_ms: 200, tpot_p95_ms: 20 })
  const records: RequestRecord[] = [
    // ttft 100, tpot 10: good
    makeRecord({ sent_at: 0, token_times: [100, 110, 120], output_tokens: 3 }),
    // ttft 150, tpot 30: misses the tpot objective
    makeRecord({ sent_at: 0, token_times: [150, 180, 210], output_tokens: 3 }),
    // ttft 300: misses ttft
    makeRecord({ sent_at: 0, token_times: [300, 305, 310], output_tokens: 3 }),
    // failed: never good; counts as the timeout in the error-adjusted percentile
    makeRecord({
      sent_at: 0,
      end_at: 50,
      token_times: [],
      output_tokens: 0,
      error: { class: 'http_5xx', message: 'HTTP 500' },
    }),
  ]
  const slo = evaluateSlos(records, slos, TIMEOUT_MS, 2)
  assert.equal(slo.good_share, 0.25)
  assert.equal(slo.goodput_requests_per_s, 0.5)
  assert.equal(slo.goodput_tokens_per_s, 1.5)
  // TTFT error-adjusted sample: 100, 150, 300, 10000 → p50 = 225 > 200: not met, though the
  // successful requests alone have a p50 of 150.
  const ttft = slo.checks.find((check) => check.key === 'ttft_p50_ms')
  assert.equal(ttft?.value_ms, 225)
  assert.equal(ttft?.met, false)
  assert.equal(slo.meets, false)
})

test('capacity is the highest level meeting every SLO', () => {
  const level = (value: number, meets: boolean) => ({
    value,
    mode: 'concurrency' as const,
    slo: {
      checks: [{ key: 'ttft_p95_ms', threshold_ms: 800, value_ms: meets ? 500 : 900, met: meets }],
      meets,
      good_share: 1,
      goodput_requests_per_s: 1,
      goodput_tokens_per_s: 1,
    },
  })
  assert.equal(findCapacity([level(1, true), level(8, true), level(16, false), level(32, false)])?.value, 8)
  assert.equal(findCapacity([level(1, false)]), null)
})

test('SLO keys: metric and percentile, with a clear error otherwise', () => {
  assert.deepEqual(parseSloKey('e2e_p99.9'), { metric: 'e2e', percentile: 99.9, better: 'lower' })
  assert.deepEqual(parseSloKey('e2e_p99.9_ms'), {
    metric: 'e2e',
    percentile: 99.9,
    better: 'lower',
    renamed: 'e2e_p99.9',
  })
  assert.match(String(parseSloKey('latency_p95')), /expected a key like ttft_p95,/)
  assert.match(String(parseSloKey('ttft_p0')), /percentile in \(0, 100\]/)
  assert.match(String(parseSloKey('ttft_p0_ms')), /percentile in \(0, 100\]/)
})

test('knee on a noisy plateau, and with overload failures', () => {
  const level = (value: number, tokensPerS: number, ttftP95: number, successRate = 1) => ({
    value,
    output_tokens_per_s: tokensPerS,
    ttft_ms: { count: 10, mean: ttftP95, min: ttftP95, max: ttftP95, p95: ttftP95 },
    success_rate: successRate,
  })
  // Throughput wobbles ±3% once flat; the knee is where it first stopped paying.
  const noisy = [
    level(4, 400, 50),
    level(8, 780, 52),
    level(16, 1500, 60),
    level(32, 1540, 200),
    level(64, 1495, 700),
  ]
  assert.equal(findSaturation(noisy)?.value, 16)
  const overloaded = [level(4, 400, 50), level(8, 790, 52), level(16, 900, 70, 0.7)]
  assert.equal(findSaturation(overloaded)?.value, 8)
})

test('advice: a coarse ladder names the level to add; short outputs are warned about', () => {
  const levels = [
    { value: 4, verdict: 'healthy' as const },
    { value: 16, verdict: 'healthy' as const },
    { value: 64, verdict: 'saturated' as const },
  ]
  assert.equal(refinementLevel(levels, { value: 16, mode: 'concurrency' as const, reason: '' }), 40)
  assert.equal(refinementLevel(levels, null), null)
  const advice = runAdvice(levels, { value: 16, mode: 'concurrency' as const, reason: '' }, 32)
  assert.match(advice[0] ?? '', /between 16 and 64: add level 40/)
  assert.match(advice[1] ?? '', /outputs of 32 tokens are short/)
  assert.deepEqual(
    runAdvice(
      [
        { value: 8, verdict: 'healthy' },
        { value: 9, verdict: 'saturated' },
      ],
      { value: 8, mode: 'concurrency' as const, reason: '' },
      512,
    ),
    [],
  )
})

/** A run of `n` requests at one level whose TTFTs and E2Es are log-normal around `median` ms. */
function syntheticRun(seed: number, n: number, median: number): { meta: RunMeta; records: RequestRecord[] } {
  const random = seededRandom(seed)
  const records: RequestRecord[] = []
  let clock = 0
  for (let i = 0; i < n; i++) {
    const u1 = Math.max(random(), 1e-12)
    const normal = Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * random())
    const ttft = median * Math.exp(0.25 * normal)
    const gap = 10 * (median / 100)
    const times = Array.from({ length: 20 }, (_, k) => clock + ttft + k * gap)
    records.push(makeRecord({ sent_at: clock, token_times: times, output_tokens: 20 }))
    clock += 5
  }
  const meta = {
    target: { model: 'm', base_url: 'http://x', endpoint: '/v1/chat/completions' },
    workload: { input_tokens: 8, output_tokens: 20, stream: true },
    load: { levels: [1], warmup_requests: 0 },
    percentiles: [50, 95],
    levels_run: [{ value: 1 }],
  } as unknown as RunMeta
  return { meta, records }
}

test('compare: a real 10% shift is flagged as a regression on most seeds; the same distribution almost never', () => {
  // A regression needs the whole interval above the threshold: hence a 2% threshold for a 10% shift
  // (against 5%, the low end of a 10% shift's interval here falls below 5% about a third of the time).
  const gates = { ttft_p95: 0.02 }
  let flagged = 0
  let falseAlarms = 0
  const seeds = 40
  for (let seed = 1; seed <= seeds; seed++) {
    const base = syntheticRun(seed, 1500, 100)
    if (
      compareRuns(base, syntheticRun(seed + 500, 1500, 110), gates).regressions.some(
        (r) => r.metric === 'ttft_p95',
      )
    )
      flagged++
    if (compareRuns(base, syntheticRun(seed + 900, 1500, 100), gates).regressions.length > 0) falseAlarms++
  }
  assert.ok(flagged >= 32, `10% shift flagged on ${flagged}/${seeds} seeds`)
  assert.ok(falseAlarms <= 2, `same distribution flagged on ${falseAlarms}/${seeds} seeds`)
})

test('compare says first when the runs differ in set-up', () => {
  const base = syntheticRun(1, 50, 100)
  const next = syntheticRun(2, 50, 100)
  next.meta = {
    ...next.meta,
    target: { ...next.meta.target, model: 'other' },
    workload: { ...next.meta.workload, output_tokens: 64 },
  }
  assert.deepEqual(compareRuns(base, next, {}).mismatches, [
    'model: "m" vs "other"',
    'output tokens: 20 vs 64',
  ])
  // Newer keys are compared when both runs have them: a rate sweep is not a gradient.
  const rate = syntheticRun(3, 50, 100)
  rate.meta = {
    ...rate.meta,
    load: { ...rate.meta.load, mode: 'request_rate', arrival: 'poisson' },
    workload: { ...rate.meta.workload, input: 'normal(512, 64)' },
  }
  const withInput = { ...base, meta: { ...base.meta, workload: { ...base.meta.workload, input: '256' } } }
  assert.deepEqual(compareRuns(withInput, rate, {}).mismatches, [
    'load mode: "concurrency" vs "request_rate"',
    'input lengths: "256" vs "normal(512, 64)"',
  ])
  assert.equal(compareRuns(withInput, rate, {}).mode, 'concurrency')
})
