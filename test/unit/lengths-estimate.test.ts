import assert from 'node:assert/strict'
import { test } from 'node:test'
import { DEFAULTS } from '../../src/config/load.js'
import type { RunConfig } from '../../src/config/types.js'
import { costOf, outputFigures, scheduleFigures, tokenTotals } from '../../src/metrics/workload-figures.js'
import { seededRandom } from '../../src/random.js'
import { describeEstimate, estimateRun, formatDuration } from '../../src/run/plan/estimate.js'
import { drawLength, formatLength, parseLength } from '../../src/workload/lengths.js'
import { makeRecord } from '../helpers/records.js'

test('lengths: the accepted spellings, and everything else refused', () => {
  assert.deepEqual(parseLength(256), { kind: 'fixed', value: 256 })
  assert.deepEqual(parseLength('300'), { kind: 'fixed', value: 300 })
  assert.deepEqual(parseLength('normal(512, 64)'), { kind: 'normal', mean: 512, sd: 64 })
  assert.deepEqual(parseLength(' Uniform(100,900) '), { kind: 'uniform', min: 100, max: 900 })
  assert.deepEqual(parseLength('dataset'), { kind: 'dataset' })
  for (const bad of [
    -1,
    1.5,
    'normal(0, 5)',
    'uniform(9, 3)',
    'gauss(1,2)',
    'normal(5)',
    '',
    'uniform(1.5, 3)',
  ])
    assert.equal(parseLength(bad), null, String(bad))
  assert.equal(formatLength({ kind: 'normal', mean: 512, sd: 64 }), 'normal(512, 64)')
})

test('length draws: normal and uniform have the asked moments and bounds; whole tokens, at least 1', () => {
  const random = seededRandom(4)
  const normal = Array.from({ length: 20_000 }, () =>
    drawLength({ kind: 'normal', mean: 512, sd: 64 }, random, 0),
  )
  const mean = normal.reduce((a, b) => a + b, 0) / normal.length
  const sd = Math.sqrt(normal.reduce((a, b) => a + (b - mean) ** 2, 0) / normal.length)
  assert.ok(Math.abs(mean - 512) < 2, `mean ${mean}`)
  assert.ok(Math.abs(sd - 64) < 2, `sd ${sd}`)
  assert.ok(normal.every(Number.isInteger))
  const uniform = Array.from({ length: 5_000 }, () =>
    drawLength({ kind: 'uniform', min: 10, max: 20 }, random, 0),
  )
  assert.equal(Math.min(...uniform), 10)
  assert.equal(Math.max(...uniform), 20)
  const wide = Array.from({ length: 2_000 }, () => drawLength({ kind: 'normal', mean: 5, sd: 50 }, random, 0))
  assert.ok(wide.every((n) => n >= 1))
  assert.equal(drawLength({ kind: 'dataset' }, random, 77), 77)
})

function config(patch: (c: RunConfig) => void): RunConfig {
  const c = structuredClone(DEFAULTS) as RunConfig
  patch(c)
  return c
}

test('estimate: counted levels are exact; rates × windows; closed timed levels projected; cost from prices', () => {
  const counted = config((c) => {
    c.load.levels = [1, 4, 8]
    c.load.requests_per_level = 100
    c.load.warmup_requests = 5
    c.pricing = { input_per_mtok: 2, output_per_mtok: 8, currency: 'USD' }
  })
  const inputs = { input_mean: 1000, output_mean: 500, request_seconds: null, share: 1 }
  const a = estimateRun(counted, inputs)
  assert.equal(a?.requests, 315)
  assert.equal(a?.input_tokens, 315_000)
  assert.equal(a?.output_tokens, 157_500)
  // 315k × $2/M + 157.5k × $8/M = 0.63 + 1.26
  assert.equal(a?.cost, 1.89)
  // --repeat 3 runs every level, warm-up included, three times: --max-cost sees all of it.
  const repeated = estimateRun(
    config((c) => {
      Object.assign(c.load, counted.load, { repeat: 3 })
      c.pricing = counted.pricing
    }),
    inputs,
  )
  assert.equal(repeated?.requests, 3 * 315)
  assert.equal(repeated?.cost, 3 * 1.89)
  assert.match(repeated?.basis ?? '', /× 3 runs \(--repeat\)/)
  const rates = config((c) => {
    c.load.mode = 'request_rate'
    c.load.rates = [2, 4]
    c.load.requests_per_level = null
    c.load.duration_per_level_s = 10
    c.load.warmup_s = 2
    c.load.cooldown_s = 3
    c.load.warmup_requests = 0
  })
  assert.equal(estimateRun(rates, inputs)?.requests, 2 * 15 + 4 * 15)
  assert.equal(estimateRun(rates, inputs)?.cost, null)
  const timed = config((c) => {
    c.load.levels = [2, 4]
    c.load.requests_per_level = null
    c.load.duration_per_level_s = 10
    c.load.warmup_requests = 0
  })
  assert.equal(estimateRun(timed, inputs), null, 'no request time: no estimate')
  assert.equal(estimateRun(timed, { ...inputs, request_seconds: 2 })?.requests, 2 * 5 + 4 * 5)
  // A shard estimates its own share.
  assert.equal(estimateRun(counted, { ...inputs, share: 1 / 3 })?.requests, 105)
})

test('workload figures: early stops, lateness and dropped arrivals, token totals and cost', () => {
  const records = [
    makeRecord({ output_tokens: 64, requested_output_tokens: 64, scheduled_at: 0, sent_at: 1 }),
    makeRecord({
      output_tokens: 20,
      requested_output_tokens: 64,
      scheduled_at: 0,
      sent_at: 500,
      finish_reason: 'stop',
    }),
    makeRecord({
      output_tokens: 10,
      requested_output_tokens: 64,
      scheduled_at: 10,
      sent_at: 400,
      input_tokens: 300,
      finish_reason: null,
    }),
  ]
  const output = outputFigures(records, [50])
  assert.equal(output.stopped_early, 2)
  // No usage, and our tokenizer counted fewer tokens than max_tokens, but the server said "length":
  // it reached max_tokens; the shortfall is our count, not an early stop.
  const miscounted = makeRecord({
    output_tokens: 58,
    requested_output_tokens: 64,
    token_source: 'tokenizer',
    finish_reason: 'length',
  })
  assert.equal(outputFigures([miscounted], [50]).stopped_early, 0)
  assert.equal(output.requested_mean, 64)
  const schedule = scheduleFigures(records, { planned: 5, sent: 3, dropped: 2 }, 2)
  assert.equal(schedule.late, 2)
  assert.equal(schedule.dropped, 2)
  assert.equal(schedule.fell_behind, true)
  assert.match(schedule.reason ?? '', /2 arrival\(s\) dropped/)
  const onTime = scheduleFigures(records.slice(0, 1), null, null)
  assert.equal(onTime.fell_behind, false)
  const totals = tokenTotals(records)
  assert.equal(totals.output_tokens, 94)
  assert.deepEqual(
    costOf(
      { input_tokens: 1_000_000, output_tokens: 500_000 },
      { input_per_mtok: 0.5, output_per_mtok: 1.5, currency: 'EUR' },
    ),
    {
      input_tokens: 1_000_000,
      output_tokens: 500_000,
      amount: 1.25,
      currency: 'EUR',
    },
  )
})

test('estimate from the warm probes: a range of requests and cost for timed levels, and the whole run’s duration', () => {
  const timed = config((c) => {
    c.load.levels = [1, 4]
    c.load.requests_per_level = null
    c.load.duration_per_level_s = 10
    c.load.warmup_requests = 4
    c.pricing = { input_per_mtok: 2, output_per_mtok: 8, currency: 'USD' }
  })
  const seconds = { median: 2, low: 1, high: 4 }
  const e = estimateRun(timed, { input_mean: 100, output_mean: 50, request_seconds: seconds, share: 1 })
  // Per stream: ceil(10 / s) requests; 5 streams in all; + 8 warm-up.
  assert.equal(e?.requests, 5 * 5 + 8)
  assert.deepEqual(e?.requests_range, [5 * 3 + 8, 5 * 10 + 8])
  assert.equal(e?.cost_range?.length, 2)
  assert.ok((e?.cost_range?.[0] ?? 0) < (e?.cost ?? 0) && (e?.cost ?? 0) < (e?.cost_range?.[1] ?? 0))
  // Level 1: 4 warm-up rounds × 2 s + 10 s + 2 s drain = 20; level 4: 1 round × 2 + 10 + 2 = 14;
  // the drift control a third of level 1 (20 / 3), cut at a tenth of the levels' 34 s, 5 s at least: 5;
  // the end of the run 2 s.
  assert.equal(e?.duration_s, 34 + 5 + 2)
  // Fast end: 1 s requests, no queueing, nothing after the last level. Slow end: 4 s requests one at a time (level 4's warm-up
  // and drain are 4 requests in a row), the control as long as level 1 (30 s) but cut at a tenth of
  // the levels' 72 s, the end of the run 8 s.
  assert.deepEqual(e?.duration_s_range, [
    4 + 10 + 1 + (1 + 10 + 1) + Math.min(15 / 3, 5),
    16 + 10 + 4 + (16 + 10 + 16) + 0.1 * 72 + 8,
  ])
  const text = describeEstimate(e as NonNullable<typeof e>)
  assert.match(text, /plan: 33 \(23–58\) requests/)
  assert.match(text, /plan: about 41 s \(32 s–1 min 27 s\) for the whole run/)
  // Declared slots: a level past them queues at the point estimate.
  const slotted = estimateRun(timed, {
    input_mean: 100,
    output_mean: 50,
    request_seconds: seconds,
    share: 1,
    slots: 2,
  })
  // The control: a third of level 1 cut at 5 s (a tenth of the levels' 38 s, 5 s at least).
  assert.equal(slotted?.duration_s, 20 + (4 + 10 + 4) + 5 + 2)
  // Counted levels: rounds of the streams.
  const counted = config((c) => {
    c.load.levels = [1, 8]
    c.load.requests_per_level = 16
    c.load.warmup_requests = 0
  })
  const c = estimateRun(counted, { input_mean: 1, output_mean: 1, request_seconds: 1.5, share: 1 })
  assert.equal(c?.requests_range, undefined, 'a counted level’s requests do not depend on their time')
  // The control: a third of level 1 (8 s) cut at 5 s (a tenth of the levels' 27 s, 5 s at least).
  assert.equal(c?.duration_s, 16 * 1.5 + 2 * 1.5 + Math.min((16 * 1.5) / 3, 5) + 2)
  // --precision: the point midway between the floor (fast) and the ceiling (slow), capped in time.
  const precise = config((c) => {
    c.load.levels = [1, 8]
    c.load.requests_per_level = 20
    c.load.precision = { tput: 5 }
    c.load.max_duration_per_level_s = 20
    c.load.warmup_requests = 0
    c.load.control = false
  })
  const p = estimateRun(precise, {
    input_mean: 1,
    output_mean: 1,
    request_seconds: { median: 1, low: 1, high: 1 },
    share: 1,
  })
  // Fast: the floor and the records the figures must stay precise over, a round of the streams and
  // 4 at least (24 at c=1, cut to the cap and its drain, 21; 28 on 8 streams, 4 rounds); slow: each
  // level to its cap and the drain of its streams one by one.
  assert.deepEqual(p?.duration_s_range, [21 + 4, 20 + 1 + (20 + 8) + 8])
  assert.equal(p?.duration_s, (21 + 21) / 2 + (4 + 20 + 1) / 2 + 2)
  assert.equal(formatDuration(460), '7 min 40 s')
  assert.equal(formatDuration(3900), '1 h 05 min')
})
