import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import { crossing, pchip } from '../../src/analysis/pchip.js'
import type { Saturation } from '../../src/analysis/saturation.js'
import {
  bracketed,
  bracketLadder,
  defaultTolerance,
  nextProbe,
  type SearchLevel,
  type SearchPlan,
  searchOutcome,
} from '../../src/analysis/search.js'
import type { BenchResult } from '../../src/result/bench-result.js'
import { finishResult } from '../../src/result/build-result.js'

test('pchip: through every point, monotone where the data is, no overshoot between two points', () => {
  const xs = [1, 2, 4, 8, 16]
  const ys = [1, 1.1, 1.3, 4, 40]
  const f = pchip(xs, ys)
  for (const [i, x] of xs.entries()) assert.ok(Math.abs(f(x) - (ys[i] as number)) < 1e-12)
  let previous = f(1)
  for (let x = 1; x <= 16; x += 0.05) {
    const y = f(x)
    assert.ok(y >= previous - 1e-12, `monotone at ${x}`)
    previous = y
  }
  // A flat stretch stays flat (a spline would dip below it before the rise).
  const flat = pchip([1, 2, 3, 4], [5, 5, 5, 9])
  for (let x = 1; x <= 3; x += 0.1) assert.ok(Math.abs(flat(x) - 5) < 1e-12)
  assert.throws(() => pchip([1, 1], [0, 1]), /x must increase/)
})

test('crossing: where the curve goes through zero inside the bracket; null when it does not change sign', () => {
  const root = crossing((x) => x * x - 2, 0, 2, 1e-9)
  assert.ok(root !== null && Math.abs(root - Math.SQRT2) < 1e-8)
  assert.equal(
    crossing((x) => x + 10, 0, 2, 1e-9),
    null,
  )
})

/** A level with one objective, TTFT p95 under `threshold`, measured at `ttft`. */
function level(value: number, ttft: number, threshold = 500): SearchLevel {
  const met = ttft <= threshold
  return {
    value,
    slo: {
      checks: [{ key: 'ttft_p95_ms', threshold_ms: threshold, value_ms: ttft, met }],
      meets: met,
      good_share: met ? 1 : 0,
      goodput_requests_per_s: 0,
      goodput_tokens_per_s: 0,
    },
  }
}

const SLO_PLAN: SearchPlan = { target: 'slo', range: [1, 32], tolerance: 1 }

test('the bracket ladder doubles from the lowest level to the highest; the tolerance is a stream, or a twentieth of the top rate', () => {
  assert.deepEqual(bracketLadder([1, 32]), [1, 2, 4, 8, 16, 32])
  assert.deepEqual(bracketLadder([1, 12]), [1, 2, 4, 8, 12])
  assert.deepEqual(bracketLadder([3, 20]), [3, 6, 12, 20])
  assert.equal(defaultTolerance('concurrency', [1, 64]), 1)
  assert.equal(defaultTolerance('request_rate', [0.5, 20]), 1)
})

test('an SLO search: bracketed at the first level that misses, then probes inside until the bracket is one stream', () => {
  // TTFT grows geometrically past 20 streams: 1..20 meet 500 ms, 21 and up miss it.
  const ttftAt = (c: number): number => (c <= 20 ? 100 + 15 * c : 400 * 1.3 ** (c - 20))
  const run: SearchLevel[] = []
  for (const value of bracketLadder(SLO_PLAN.range)) {
    run.push(level(value, ttftAt(value)))
    if (bracketed(SLO_PLAN, run, null)) break
  }
  assert.deepEqual(
    run.map((l) => l.value),
    [1, 2, 4, 8, 16, 32],
    'the ladder stops at the first miss',
  )
  const hows: string[] = []
  for (let step = 0; step < 8; step++) {
    const probe = nextProbe(SLO_PLAN, 'concurrency', run, null)
    if (probe === null) break
    assert.ok(probe.value > 16 && probe.value < 32, `probe ${probe.value} inside the bracket`)
    hows.push(probe.how)
    run.push(level(probe.value, ttftAt(probe.value)))
  }
  const outcome = searchOutcome(SLO_PLAN, 'concurrency', run, null)
  assert.equal(outcome.value, 20)
  assert.deepEqual(outcome.bracket, [20, 21])
  assert.equal(outcome.converged, true)
  assert.ok(run.length <= 11, `${run.length} levels, against 32 for every level`)
  assert.equal(hows[0], 'interpolated', 'a bracket of 16 streams is probed where the curve crosses')
  assert.equal(hows.at(-1), 'bisected', 'one of a few streams is bisected')
  assert.match(
    outcome.summary,
    /^20 streams meet every SLO and 21 do not \(within 1 stream\); \d+ levels run$/,
  )
})

test('an SLO search at the ends: every level meets them, or the lowest already misses them', () => {
  const all = [1, 2, 4, 8, 16, 32].map((c) => level(c, 100))
  assert.equal(bracketed(SLO_PLAN, all, null), false)
  assert.equal(nextProbe(SLO_PLAN, 'concurrency', all, null), null)
  const top = searchOutcome(SLO_PLAN, 'concurrency', all, null)
  assert.equal(top.value, 32)
  assert.match(top.summary, /capacity is above the range searched/)
  const none = [level(1, 900)]
  assert.equal(bracketed(SLO_PLAN, none, null), true)
  assert.equal(nextProbe(SLO_PLAN, 'concurrency', none, null), null)
  const bottom = searchOutcome(SLO_PLAN, 'concurrency', none, null)
  assert.equal(bottom.value, null)
  assert.match(bottom.summary, /the lowest level, 1 stream, misses the SLOs/)
})

test('the probe stays in the middle half of the bracket, so a wild interpolation still shrinks it', () => {
  // The ratio jumps right after 8: interpolation alone would probe next to 8 every time.
  const run = [level(1, 10), level(2, 11), level(4, 12), level(8, 13), level(64, 50_000)]
  const plan: SearchPlan = { target: 'slo', range: [1, 64], tolerance: 1 }
  const probe = nextProbe(plan, 'concurrency', run, null)
  assert.ok(probe !== null && probe.value >= 8 + 56 / 4 && probe.value <= 64 - 56 / 4, JSON.stringify(probe))
  // Request rates are not rounded to whole numbers.
  const rates = [level(0.5, 100), level(1, 200), level(2, 900)]
  const ratePlan: SearchPlan = { target: 'slo', range: [0.5, 2], tolerance: 0.1 }
  const rate = nextProbe(ratePlan, 'request_rate', rates, null)
  assert.ok(rate !== null && rate.value > 1 && rate.value < 2 && !Number.isInteger(rate.value))
})

test('a knee search bisects the knee bracket and stops at the tolerance', () => {
  const plan: SearchPlan = { target: 'knee', range: [1, 32], tolerance: 1 }
  const levels = [1, 2, 4, 8, 16].map((value) => ({
    value,
    slo: null,
    ttft_ms: { p95: value > 8 ? 400 : 40 + value },
  }))
  const knee = (value: number, bracket: [number, number]): Saturation => ({
    value,
    mode: 'concurrency',
    reason: 'test',
    bracket,
  })
  assert.equal(bracketed(plan, levels.slice(0, 3), null), false)
  assert.equal(bracketed(plan, levels, knee(8, [8, 16])), true)
  // A knee placed while the highest level shows no queue: keep climbing (it may move) ...
  assert.equal(bracketed(plan, levels.slice(0, 2), knee(1, [1, 2])), false)
  // ... unless the server's gauges saw a level full.
  assert.equal(bracketed(plan, levels.slice(0, 2), { ...knee(1, [1, 2]), full_from: 2 }), true)
  assert.deepEqual(nextProbe(plan, 'concurrency', levels, knee(8, [8, 16])), { value: 12, how: 'bisected' })
  assert.equal(nextProbe(plan, 'concurrency', levels, knee(8, [8, 9])), null)
  const outcome = searchOutcome(plan, 'concurrency', levels, knee(8, [8, 9]))
  assert.equal(outcome.value, 8)
  assert.equal(outcome.converged, true)
  assert.match(outcome.summary, /^knee at 8 streams, between 8 and 9 \(within 1 stream\); 5 levels run$/)
})

test('a search across a server that changed says its answer is uncertain (issue 36: a degrading server gave a converged answer)', () => {
  const template = JSON.parse(
    readFileSync(new URL('../fixtures/rendered/conc/expected/bench_result.json', import.meta.url), 'utf8'),
  ) as BenchResult
  const meta = {
    ...template.meta,
    load: {
      ...template.meta.load,
      search: { target: 'knee' as const, range: [1, 8] as [number, number], tolerance: 1 },
    },
  }
  const steady = finishResult(template.levels, meta)
  assert.equal(steady.search?.uncertain, undefined)
  const reason = 'the environment drifted: c=1 measured again at the end differs from its first measurement'
  const drift = { level: 1, first: {}, control: {}, moved: true, reason } as never
  const moved = finishResult(template.levels, meta, { drift })
  assert.equal(moved.search?.uncertain, reason)
  assert.match(moved.search?.summary ?? '', /; uncertain: the server changed during the search \(see Drift\)/)
  assert.equal(moved.search?.value, steady.search?.value, 'the answer stands, said to be uncertain')
})
