import assert from 'node:assert/strict'
import { test } from 'node:test'
import { untrustedClient } from '../../src/analysis/client-trust.js'
import { blockBootstrapChange, relativeChange } from '../../src/analysis/stats.js'
import { throughputStatistic } from '../../src/analysis/throughput-change.js'
import { compareRuns, driftSize, type RunRecords } from '../../src/compare/compare.js'
import type { ClientHealth } from '../../src/metrics/client-health.js'
import { seededRandom } from '../../src/random.js'
import type { RequestRecord } from '../../src/records/types.js'
import { renderComparison } from '../../src/report/compare-render.js'
import type { RunMeta } from '../../src/result/run-meta.js'
import { makeRecord } from '../helpers/records.js'

const STREAMS = 2
const TOKENS = 20

/**
 * A closed loop of STREAMS streams at one level: each request takes about `e2eMs` (jittered) for
 * TOKENS tokens, and the next one on its stream is sent `gapMs` after it ends.
 */
function closedLoop(seed: number, perStream: number, e2eMs: number, gapMs: number): RequestRecord[] {
  const random = seededRandom(seed)
  const records: RequestRecord[] = []
  for (let stream = 0; stream < STREAMS; stream++) {
    let clock = stream
    for (let i = 0; i < perStream; i++) {
      const e2e = e2eMs * (0.8 + 0.4 * random())
      const times = Array.from({ length: TOKENS }, (_, k) => clock + (e2e * (k + 1)) / TOKENS)
      records.push(
        makeRecord({
          seq: i,
          worker: stream,
          level: STREAMS,
          sent_at: clock,
          token_times: times,
          output_tokens: TOKENS,
        }),
      )
      clock += e2e + gapMs
    }
  }
  return records
}

function meta(overrides: Partial<RunMeta['load']> = {}): RunMeta {
  return {
    target: { model: 'm', base_url: 'http://x', endpoint: '/v1/chat/completions' },
    workload: { input_tokens: 8, output_tokens: TOKENS, stream: true },
    load: {
      mode: 'concurrency',
      levels: [STREAMS],
      warmup_requests: 0,
      requests_per_level: 200,
      ...overrides,
    },
    percentiles: [50, 95],
    levels_run: [{ value: STREAMS }],
  } as unknown as RunMeta
}

const throughputOf = (runs: ReturnType<typeof compareRuns>) =>
  runs.levels[0]?.metrics.find((metric) => metric.metric === 'throughput')

test('compare: the throughput change and its interval are on the same quantity (never opposite signs)', () => {
  // The new run's requests are 10% slower each, but its client sends without the old 40 ms gaps:
  // the level throughput rises by ~20% while every request's own token rate falls by ~10%.
  const base: RunRecords = { meta: meta(), records: closedLoop(1, 100, 100, 40) }
  const next: RunRecords = { meta: meta(), records: closedLoop(2, 100, 110, 0) }
  const throughput = throughputOf(compareRuns(base, next, { throughput: 0.05 }))
  assert.ok(throughput?.change !== null && throughput?.change !== undefined && throughput.interval !== null)
  assert.ok(throughput.change > 0.1, `the level figure rose: ${throughput.change}`)
  assert.ok(
    throughput.interval.low > 0 &&
      throughput.interval.low <= throughput.change &&
      throughput.change <= throughput.interval.high,
    `interval ${JSON.stringify(throughput.interval)} holds the change ${throughput.change}`,
  )
  assert.equal(throughput.regressed, false)

  // Reversed, it is a significant fall, and a regression.
  const reversed = throughputOf(compareRuns(next, base, { throughput: 0.05 }))
  assert.ok(reversed !== undefined && reversed.interval !== null && reversed.change !== null)
  assert.ok(reversed.interval.high < -0.05 && reversed.change < 0)
  assert.equal(reversed.regressed, true)

  // Over many seeds and shapes, the change lies within its own interval.
  for (let seed = 1; seed <= 30; seed++) {
    const random = seededRandom(seed * 31)
    const a = closedLoop(seed, 30, 80 + 40 * random(), 40 * random())
    const b = closedLoop(seed + 100, 30, 80 + 40 * random(), 40 * random())
    const metric = throughputOf(
      compareRuns({ meta: meta(), records: a }, { meta: meta(), records: b }, { throughput: 0.05 }),
    )
    const { change, interval } = metric ?? {}
    assert.ok(change != null && interval != null)
    assert.ok(
      interval.low <= change && change <= interval.high,
      `seed ${seed}: ${change} in ${JSON.stringify(interval)}`,
    )
  }
})

test("throughputStatistic: the unresampled change is the figures' own; an open loop varies only the tokens", () => {
  const sample = { tokens: [10, 10, 10], seconds: [1, 2, 3], figure: 30 }
  const side = (figure: number, closedLoop: boolean) => ({
    requests: 3,
    blockLength: 1,
    statistic: throughputStatistic({ ...sample, figure }, closedLoop),
  })
  const same = blockBootstrapChange(side(30, false), side(33, false), relativeChange)
  // Equal token counts: nothing to resample in an open loop, the interval is the change itself.
  assert.ok(same !== null)
  assert.ok(Math.abs(same.change - 0.1) < 1e-12)
  assert.ok(Math.abs(same.low - 0.1) < 1e-12 && Math.abs(same.high - 0.1) < 1e-12)
  // In a closed loop the request seconds vary too: the interval widens around the same change.
  const closed = blockBootstrapChange(side(30, true), side(33, true), relativeChange)
  assert.ok(closed !== null && closed.low < 0.1 && closed.high > 0.1 && Math.abs(closed.change - 0.1) < 1e-12)
  assert.equal(blockBootstrapChange(side(0, true), side(30, true), relativeChange), null)
})

test('compare: different stop rules are a set-up difference', () => {
  const records = closedLoop(1, 20, 100, 0)
  const byCount = { meta: meta({ requests_per_level: 40 }), records }
  const byTime = { meta: meta({ requests_per_level: undefined, duration_per_level: 30 }), records }
  assert.deepEqual(compareRuns(byCount, byTime, {}).mismatches, [
    'stop rule: "40 requests per level" vs "30 s per level"',
  ])
  assert.deepEqual(compareRuns(byCount, { meta: meta({ requests_per_level: 60 }), records }, {}).mismatches, [
    'stop rule: "40 requests per level" vs "60 requests per level"',
  ])
  const warm = { meta: meta({ requests_per_level: undefined, duration_per_level: 30, warmup_s: 5 }), records }
  assert.deepEqual(compareRuns(byTime, warm, {}).mismatches, [
    'stop rule: "30 s per level" vs "30 s per level (+5 s warm-up, +0 s cool-down)"',
  ])
  // Results from before the keys were recorded still compare on what they have.
  const unknown = { meta: meta({ requests_per_level: undefined }), records }
  assert.deepEqual(compareRuns(unknown, byTime, {}).mismatches, [])
})

const HEALTHY: ClientHealth = {
  cpu_percent: 10,
  rss_mib: 100,
  event_loop_delay_p99_ms: 1,
  event_loop_utilization: 0.1,
  dispatch_lateness_p99_ms: 0,
  effective_concurrency_ratio: 1,
  bound: false,
  reasons: [],
  notes: [],
  noisy: false,
}

test('compare: a level where either client was not trustworthy is inconclusive and does not fail the gate unless strict', () => {
  const base = { meta: meta(), records: closedLoop(1, 100, 100, 0) }
  const slower = closedLoop(2, 100, 150, 0)
  const bound = { ...HEALTHY, bound: true, reasons: ['event loop 85% busy (limit 70%)'] }
  const next = { meta: meta(), records: slower, levels: [{ value: STREAMS, client: bound }] }
  // E2E: the requests take 50 ms longer, well past its floor (their TTFT, a twentieth of it, is not).
  const gates = { e2e_p95: 0.1 }
  const lenient = compareRuns({ ...base, levels: [{ value: STREAMS, client: HEALTHY }] }, next, gates)
  assert.deepEqual(lenient.regressions, [])
  assert.equal(lenient.inconclusive.length, 1)
  assert.equal(lenient.inconclusive[0]?.metric, 'e2e_p95')
  assert.match(lenient.levels[0]?.inconclusive ?? '', /^new run: client-bound \(event loop 85% busy/)
  const text = renderComparison(lenient)
  assert.equal(lenient.outcome, 'inconclusive')
  assert.match(text, /\*\*Inconclusive:\*\*.*\(exit 5\)/)
  assert.match(
    text.split('\n')[0] ?? '',
    /^\*\*INCONCLUSIVE\*\*: cannot tell, exit 5 \(1 levels, \d+ gated figures compared\)$/,
  )
  assert.match(text, /\*\*Client not trustworthy\*\*.*--strict-client/)
  assert.match(text, /- c=2: new run: client-bound .*would have flagged e2e_p95 \+\d+\.\d%/)
  assert.match(text, /\| 2 \| e2e_p95 \|.*\| inconclusive \|/)
  assert.doesNotMatch(text, /REGRESSION/)

  const strict = compareRuns(base, next, gates, { strictClient: true })
  assert.equal(strict.outcome, 'regression')
  assert.deepEqual(
    strict.regressions.map((r) => r.metric),
    ['e2e_p95'],
  )
  assert.match(renderComparison(strict), /\| 2 \| e2e_p95 \|.*\| REGRESSION \|/)

  // A noisy base run makes the level inconclusive too where its late timers could explain the change
  // (50 ms against timers 30 ms late); older results (no `noisy`) go by their notes.
  const { noisy: _, ...older } = HEALTHY
  const noisyBy = (lateMs: number) => ({
    ...older,
    event_loop_delay_p99_ms: lateMs,
    notes: [`timers fired ${lateMs.toFixed(1)} ms late at p99 while the client was mostly idle`],
  })
  const fromNoisyBase = compareRuns(
    { ...base, levels: [{ value: STREAMS, client: noisyBy(30) }] },
    { meta: meta(), records: slower },
    gates,
  )
  assert.match(fromNoisyBase.levels[0]?.inconclusive ?? '', /^base run: noisy client/)
  assert.deepEqual(fromNoisyBase.regressions, [])
  assert.equal(fromNoisyBase.outcome, 'inconclusive')
  // Timers 5 ms late cannot add 50 ms to every request: the regression stands, the level still says why
  // it was looked at twice.
  const beyondNoise = compareRuns(
    { ...base, levels: [{ value: STREAMS, client: noisyBy(5) }] },
    { meta: meta(), records: slower },
    gates,
  )
  assert.match(beyondNoise.levels[0]?.inconclusive ?? '', /^base run: noisy client/)
  assert.deepEqual(
    beyondNoise.regressions.map((r) => r.metric),
    ['e2e_p95'],
  )
  assert.equal(beyondNoise.outcome, 'regression')
  // Healthy clients on both sides: the same slowdown is a regression.
  const judged = compareRuns(
    { ...base, levels: [{ value: STREAMS, client: HEALTHY }] },
    { meta: meta(), records: slower, levels: [{ value: STREAMS, client: HEALTHY }] },
    gates,
  )
  assert.equal(judged.levels[0]?.inconclusive, null)
  assert.deepEqual(
    judged.regressions.map((r) => r.metric),
    ['e2e_p95'],
  )
})

test("compare: a noisy client's reason names the client only, not the level's connection or event notes", () => {
  const noisyNote = 'timers fired 12.0 ms late at p99 while the client was mostly idle: the machine is noisy'
  const serverNotes = [
    'the server closed 40 of 40 connections after a response: they were not reused',
    'events carried 1.9 tokens each',
  ]
  const reason = untrustedClient({
    ...HEALTHY,
    noisy: true,
    notes: [serverNotes[0] ?? '', noisyNote, ...serverNotes.slice(1)],
  })
  assert.equal(reason, `noisy client (${noisyNote})`)
  // Server notes alone make no client untrustworthy, with or without the `noisy` flag (older results).
  assert.equal(untrustedClient({ ...HEALTHY, notes: serverNotes }), null)
  const { noisy: _, ...older } = HEALTHY
  assert.equal(untrustedClient({ ...older, notes: serverNotes }), null)
  const base = { meta: meta(), records: closedLoop(1, 100, 100, 0) }
  const next = { meta: meta(), records: closedLoop(2, 100, 150, 0) }
  const judged = compareRuns(
    { ...base, levels: [{ value: STREAMS, client: { ...older, notes: serverNotes } }] },
    next,
    { e2e_p95: 0.1 },
  )
  assert.equal(judged.levels[0]?.inconclusive, null)
  assert.deepEqual(
    judged.regressions.map((r) => r.metric),
    ['e2e_p95'],
  )
})

test('compare: +30% on a 2 ms TPOT is within the floor (a pass); the same share of a 20 ms TPOT is a regression', () => {
  // Requests of TOKENS tokens, e2eMs each: TPOT is about e2eMs / TOKENS (2 ms at 40 ms).
  const gates = { tpot_p50: 0.1 }
  const small = compareRuns(
    { meta: meta(), records: closedLoop(1, 100, 40, 0) },
    { meta: meta(), records: closedLoop(2, 100, 52, 0) },
    gates,
  )
  const tpot = small.levels[0]?.metrics.find((metric) => metric.metric === 'tpot_p50')
  assert.ok(tpot?.interval != null && tpot.absolute_change !== null)
  assert.ok(tpot.interval.low > 0.1, `the whole interval is above 10%: ${JSON.stringify(tpot.interval)}`)
  assert.ok(tpot.absolute_change < 1, `${tpot.absolute_change} ms`)
  assert.equal(tpot.floor, 1)
  assert.equal(tpot.regressed, false)
  assert.equal(small.outcome, 'pass')
  assert.match(renderComparison(small), /\| 2 \| tpot_p50 \|.*\| 1 ms \| worse, within the floor \|/)
  // The floor is what passed it: with a lower one, the same records regress.
  const floorless = compareRuns(
    { meta: meta(), records: closedLoop(1, 100, 40, 0) },
    { meta: meta(), records: closedLoop(2, 100, 52, 0) },
    gates,
    { minChange: { tpot: 0.1 } },
  )
  assert.deepEqual(
    floorless.regressions.map((r) => r.metric),
    ['tpot_p50'],
  )
  const large = compareRuns(
    { meta: meta(), records: closedLoop(1, 100, 400, 0) },
    { meta: meta(), records: closedLoop(2, 100, 520, 0) },
    gates,
  )
  assert.equal(large.outcome, 'regression')
  assert.deepEqual(
    large.regressions.map((r) => `${r.value} ${r.metric}`),
    ['2 tpot_p50'],
  )
})

test('compare: the knee gates on its bracket: overlapping brackets are no change, a bracket wholly below fails', () => {
  const records = closedLoop(1, 30, 100, 0)
  const knee = (value: number, bracket: [number, number]) => ({
    value,
    mode: 'concurrency' as const,
    reason: '',
    bracket,
  })
  const run = (saturation: ReturnType<typeof knee> | null): RunRecords => ({
    meta: meta(),
    records,
    saturation,
  })
  const gates = { knee: 0 }
  assert.equal(compareRuns(run(knee(4, [4, 8])), run(knee(2, [2, 4])), gates).knee?.moved, 'none')
  const fell = compareRuns(run(knee(4, [4, 8])), run(knee(1, [1, 2])), gates)
  assert.equal(fell.outcome, 'regression')
  assert.deepEqual(fell.regressions, [{ value: 4, metric: 'knee', change: -0.75 }])
  assert.match(renderComparison(fell), /knee 4 \(between 4 and 8\) → 1 \(between 1 and 2\)/)
  // No knee up to the top level (2 here) in the base; one below it in the new run: it fell.
  assert.equal(compareRuns(run(null), run(knee(1, [1, 1])), gates).knee?.regressed, true)
  // A tolerance of 60% lets a fall from [4, 8] to [1, 2] pass; not gated, it is only shown and said.
  assert.equal(compareRuns(run(knee(4, [4, 8])), run(knee(1, [1, 2])), { knee: 0.6 }).outcome, 'pass')
  const ungated = compareRuns(run(knee(4, [4, 8])), run(knee(1, [1, 2])), {})
  assert.equal(ungated.outcome, 'pass')
  assert.match(renderComparison(ungated), /moved down, past both brackets; the knee is not part of the gate/)
})

test('compare: a change gates only beyond its threshold by more than the runs remeasured their own first level', () => {
  // Requests 25% slower: E2E p50 +25% clears a 10% threshold, and clears it by more than a 10%
  // remeasurement noise, but not by more than a 20% one.
  const base: RunRecords = { meta: meta(), records: closedLoop(1, 100, 100, 0) }
  const slower = closedLoop(2, 100, 125, 0)
  const control = (moved: number) => ({
    moved: false,
    reason: 'matches',
    first: { tpot_ms: { p50: 10, low: 9, high: 11, count: 8 } },
    control: { tpot_ms: { p50: 10 * (1 + moved), low: 9, high: 11, count: 8 } },
  })
  const gate = { e2e_p50: 0.1 }
  const quiet = compareRuns(base, { meta: meta(), records: slower, drift: control(0.1) }, gate)
  assert.ok(Math.abs(quiet.drift_size - 0.1) < 1e-9)
  assert.deepEqual(
    quiet.regressions.map((r) => r.metric),
    ['e2e_p50'],
  )
  const noisy = compareRuns(base, { meta: meta(), records: slower, drift: control(0.2) }, gate)
  assert.deepEqual(noisy.regressions, [])
  assert.equal(noisy.outcome, 'pass')
  const e2e = noisy.levels[0]?.metrics.find((metric) => metric.metric === 'e2e_p50')
  assert.equal(e2e?.within_noise, true)
  // Without a control (older results) nothing widens the gate.
  assert.equal(compareRuns(base, { meta: meta(), records: slower }, gate).drift_size, 0)
})

test("the noise band is each metric's own: a control whose TTFT moved 23% does not widen TPOT's band", () => {
  const at = (p50: number) => ({ p50, low: p50, high: p50, count: 20 })
  const drift = {
    moved: true,
    reason: 'TTFT moved',
    first: { ttft_ms: at(30), tpot_ms: at(10), request_tokens_per_s: at(90) },
    control: { ttft_ms: at(37), tpot_ms: at(10.2), request_tokens_per_s: at(89) },
  }
  assert.ok(Math.abs(driftSize(drift) - 7 / 30) < 1e-9, 'the largest move, for the band shown')
  assert.ok(Math.abs(driftSize(drift, ['tpot_ms', 'server_decode_ms_per_token']) - 0.02) < 1e-9)
  assert.ok(Math.abs(driftSize(drift, ['ttft_ms']) - 7 / 30) < 1e-9)
  // Sized and not moved in its own figures: 0, not "unbounded".
  assert.equal(driftSize(drift, ['server_prefill_ms_per_token']), 0)
  // A drift the result does not size vouches for nothing.
  assert.equal(driftSize({ moved: true, reason: 'unsized' }, ['tpot_ms']), Number.POSITIVE_INFINITY)
})

test('compare: a pass says what it covers when an interval reaches past its threshold, and not when every one stays inside', () => {
  const gates = { tpot_p50: 0.1 }
  // Six requests a stream, each ±20%, 5% slower: the TPOT interval reaches past its 10% threshold, not wholly beyond it.
  const few = compareRuns(
    { meta: meta(), records: closedLoop(1, 6, 400, 0) },
    { meta: meta(), records: closedLoop(2, 6, 420, 0) },
    gates,
  )
  assert.equal(few.outcome, 'pass')
  const wide = few.resolution
  assert.ok(wide != null && wide.metric === 'tpot_p50' && wide.value === STREAMS, JSON.stringify(wide))
  const tpot = few.levels[0]?.metrics.find((metric) => metric.metric === 'tpot_p50')
  assert.equal(wide.worst_case, tpot?.interval?.high)
  assert.ok(wide.worst_case > 0.1, `interval ${JSON.stringify(tpot?.interval)}`)
  const sized = `+${(wide.worst_case * 100).toFixed(1)}%`
  assert.ok(
    renderComparison(few).includes(`c=2 tpot_p50 to be up to ${sized} worse (its threshold 10.0%)`),
    renderComparison(few),
  )
  // A thousand requests a stream: the interval stays inside the threshold, and the pass says nothing more.
  const many = compareRuns(
    { meta: meta(), records: closedLoop(1, 1000, 400, 0) },
    { meta: meta(), records: closedLoop(2, 1000, 400, 0) },
    gates,
  )
  assert.equal(many.outcome, 'pass')
  assert.ok(many.resolution != null && many.resolution.worst_case < 0.1, JSON.stringify(many.resolution))
  assert.doesNotMatch(renderComparison(many), /What the pass covers/)
})
