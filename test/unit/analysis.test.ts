import assert from 'node:assert/strict'
import { test } from 'node:test'
import { findSaturation } from '../../src/analysis/saturation.js'
import { stepsFromBelow } from '../../src/analysis/scaling-step.js'
import { adviceFor, levelVerdict } from '../../src/analysis/verdict.js'
import type { Distribution } from '../../src/metrics/distribution.js'

function level(value: number, tokensPerS: number, ttftP95: number, successRate = 1) {
  const ttft: Distribution = { count: 10, mean: ttftP95, min: ttftP95, max: ttftP95, p95: ttftP95 }
  return { value, output_tokens_per_s: tokensPerS, ttft_ms: ttft, success_rate: successRate }
}

test('a clear knee: throughput flat and TTFT up 4x from 32 to 64 → saturation at 32', () => {
  const saturation = findSaturation([
    level(1, 100, 50),
    level(8, 780, 55),
    level(32, 2900, 80),
    level(64, 2990, 330),
  ])
  assert.equal(saturation?.value, 32)
  assert.equal(
    saturation?.reason,
    'throughput +3% from 32 to 64 while TTFT p95 x4.1; up to 32: +93% per doubling from 8',
  )
  assert.deepEqual(saturation?.bracket, [32, 64])
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
  assert.equal(saturation?.value, 8)
  assert.match(saturation?.reason ?? '', /success rate fell from 100.0% to 80.0%/)
})

test('verdicts: client-bound beats overloaded beats saturated', () => {
  const errors = { timeout: 0, http_4xx: 0, http_429: 0, http_5xx: 0, connection: 0, stream: 0, other: 0 }
  const base = {
    value: 64,
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
  const knee = { value: 32, mode: 'concurrency' as const, reason: '' }
  assert.equal(levelVerdict(base, knee), 'saturated')
  assert.equal(levelVerdict({ ...base, value: 32 }, knee), 'healthy')
  assert.equal(levelVerdict({ ...base, errors: { ...errors, timeout: 1 } }, knee), 'overloaded')
  assert.equal(levelVerdict({ ...base, success_rate: 0.9 }, null), 'overloaded')
  assert.equal(
    levelVerdict({ ...base, success_rate: 0.9, client: { ...base.client, bound: true } }, knee),
    'client-bound',
  )
})

/**
 * The issue's three gradients against llama.cpp on CPU (8 slots): output tok/s at 1, 2, 4, 8, 16 and
 * the TTFT p50 measured at 8 and 16; the lower levels' TTFTs are made up to rise gently, as a CPU
 * engine's do (prefill competes with decode). The knee is 8 in each.
 */
const CPU_SERIES: Record<string, [number, number][]> = {
  A: [
    [77.4, 140],
    [83.9, 190],
    [124.1, 300],
    [164.1, 554],
    [167.3, 3037],
  ],
  B: [
    [72.7, 150],
    [87.2, 210],
    [126.8, 340],
    [189.0, 881],
    [177.3, 3105],
  ],
  C: [
    [73.5, 160],
    [80.6, 240],
    [95.7, 430],
    [132.8, 1288],
    [149.0, 3649],
  ],
}

for (const [run, series] of Object.entries(CPU_SERIES)) {
  test(`CPU engine run ${run}: sub-linear from c=1, the knee is the slot count 8`, () => {
    const levels = series.map(([tokensPerS, ttft], i) => level(2 ** i, tokensPerS, ttft))
    const saturation = findSaturation(levels)
    assert.equal(saturation?.value, 8, saturation?.reason)
    assert.deepEqual(saturation?.bracket, [8, 16])
    assert.match(saturation?.reason ?? '', /from 8 to 16 while TTFT p95 x[2-6]\.\d/)
  })
}

test('CPU run C: verdicts quote their own figures and no rising level is "saturated"', () => {
  const levels = (CPU_SERIES.C as [number, number][]).map(([t, ttft], i) => level(2 ** i, t, ttft))
  const saturation = findSaturation(levels)
  const steps = stepsFromBelow(levels, 'p95')
  const verdicts = levels.map((l) => levelVerdict(withHealth(l), saturation, steps.get(l.value) ?? null))
  assert.deepEqual(verdicts, ['healthy', 'healthy', 'healthy', 'healthy', 'saturated'])
  const advice = levels.map((l, i) =>
    adviceFor(verdicts[i] ?? 'healthy', withHealth(l), saturation, steps.get(l.value) ?? null),
  )
  assert.match(advice[3] ?? '', /^throughput \+39% from 4, TTFT p95 x3\.0: saturation point/)
  assert.match(advice[4] ?? '', /^throughput \+12% from 8, TTFT p95 x2\.8: past the knee/)
  assert.match(advice[1] ?? '', /^throughput \+10% from 1, TTFT p95 x1\.5: below the knee at 8/)
  assert.doesNotMatch(advice.join('\n'), /flat/)
})

test('a level above the knee whose throughput rose meaningfully from the one below is not "saturated"', () => {
  // 32 dipped (noise), 64 recovered: 64 rose +23% over 32, yet stays within reach of the knee at 16.
  const levels = [level(8, 780, 52), level(16, 1500, 60), level(32, 1300, 200), level(64, 1600, 700)]
  const saturation = findSaturation(levels)
  assert.equal(saturation?.value, 16)
  const steps = stepsFromBelow(levels, 'p95')
  assert.equal(
    levelVerdict(withHealth(levels[2] as ReturnType<typeof level>), saturation, steps.get(32) ?? null),
    'saturated',
  )
  assert.equal(
    levelVerdict(withHealth(levels[3] as ReturnType<typeof level>), saturation, steps.get(64) ?? null),
    'healthy',
  )
})

test('a gain spread over several doublings still counts once it adds 25% in all', () => {
  // +40% from 8 to 64 is 12% per doubling, but 40% more throughput is worth having: 8 is not the knee.
  // From 16, 64 adds +24% (11% per doubling): not enough, so 16 is the knee.
  const levels = [
    level(4, 400, 50),
    level(8, 780, 60),
    level(16, 850, 200),
    level(32, 950, 400),
    level(64, 1050, 900),
  ]
  const saturation = findSaturation(levels)
  assert.equal(saturation?.value, 16, saturation?.reason)
  assert.match(saturation?.reason ?? '', /at most \+24% up to 64, while TTFT p95 x2\.0 \(x4\.5 by 64\)/)
})

test('achieved concurrency: an under-driven level counts as what it had in flight', () => {
  // Nominally 16 → 64 is two doublings for +18%: not worth it, knee 16. But "64" only ever had 24
  // requests in flight (too few requests for its streams): +18% for 1.5x the streams is still scaling.
  const levels = [level(8, 780, 52), level(16, 1500, 60), level(64, 1770, 300)]
  assert.equal(findSaturation(levels)?.value, 16)
  const underDriven = { ...level(64, 1770, 300), achieved_concurrency: { mean: 24, max: 40 } }
  assert.equal(findSaturation([...levels.slice(0, 2), underDriven]), null)
})

test('a knee whose own step was weak is uncertain: the bracket is the level below and the knee', () => {
  // 8 → 16 +8% (weak), but 8 is no knee because 32 adds +30% over it; 16 → 32 +20% total at d=1
  // is not "meaningful" (< 20% per doubling): knee 16, placed between 8 and 16.
  const levels = [level(4, 500, 50), level(8, 1000, 55), level(16, 1080, 120), level(32, 1290, 500)]
  const saturation = findSaturation(levels)
  assert.equal(saturation?.value, 16, saturation?.reason)
  assert.deepEqual(saturation?.bracket, [8, 16])
})

test('steady throughput and achieved concurrency are used when present', () => {
  // Whole-window figures dragged down by a drain tail would show a knee at 4; the steady ones do not.
  const ramped = (c: number, whole: number, steady: number, ttft: number) => ({
    ...level(c, whole, ttft),
    output_tokens_per_s_steady: steady,
    steady_window: { start_s: 0, end_s: 1, mean_in_flight: c, output_tokens_per_s: steady },
    achieved_concurrency: { mean: c * 0.8, max: c },
  })
  const levels = [
    ramped(2, 200, 210, 50),
    ramped(4, 380, 420, 55),
    ramped(8, 400, 830, 80),
    ramped(16, 420, 850, 400),
  ]
  assert.equal(
    findSaturation(levels.map((l) => ({ ...l, output_tokens_per_s_steady: undefined, steady_window: null })))
      ?.value,
    4,
  )
  assert.equal(findSaturation(levels)?.value, 8)
})

test('a level without a steady window is judged against whole-window figures at both ends of its step', () => {
  // llama.cpp, 8 slots, --levels 16,64 --requests 40: the 64 level never held its streams (23.8 in
  // flight on average). Its whole-window rate, kept high by a saturated server's drain, set against
  // 16's steady rate (kept low by the start-up burst) looked like +12% for +0.57 doublings: "keep
  // adding concurrency". Like against like, it is +6%: past the knee.
  const sixteen = {
    ...level(16, 184.4, 5315),
    output_tokens_per_s_steady: 174.3,
    steady_window: { start_s: 0.2, end_s: 9.1, mean_in_flight: 15.8, output_tokens_per_s: 174.3 },
    achieved_concurrency: { mean: 14.0, max: 16 },
  }
  const sixtyFour = {
    ...level(64, 195.2, 10532),
    output_tokens_per_s_steady: 195.2,
    steady_window: null,
    achieved_concurrency: { mean: 23.8, max: 40 },
  }
  const saturation = findSaturation([sixteen, sixtyFour])
  assert.equal(saturation?.value, 16)
  assert.match(saturation?.reason ?? '', /^throughput \+6% from 16 to 64/)
})

function withHealth(l: ReturnType<typeof level>) {
  const errors = { timeout: 0, http_4xx: 0, http_429: 0, http_5xx: 0, connection: 0, stream: 0, other: 0 }
  const client = {
    cpu_percent: 10,
    notes: [],
    rss_mib: 100,
    event_loop_delay_p99_ms: 1,
    event_loop_utilization: 0.1,
    dispatch_lateness_p99_ms: 0.2,
    effective_concurrency_ratio: 1,
    bound: false,
    reasons: [],
  }
  return { ...l, errors, requests: 10, client }
}

test('a success-rate blip that later levels recover from does not end the search for the knee', () => {
  // One failed request of 40 at c=2 on a server that then scales to 8 and flattens at 16.
  const levels = [
    level(1, 100, 50),
    level(2, 200, 52, 0.975),
    level(4, 400, 55),
    level(8, 800, 60),
    level(16, 820, 240),
  ]
  assert.equal(findSaturation(levels)?.value, 8)
  // A fall that lasts still ends it: the last level that held is the knee.
  const collapse = [level(1, 100, 50), level(2, 200, 52), level(4, 300, 55, 0.9), level(8, 320, 400, 0.6)]
  assert.equal(findSaturation(collapse)?.value, 2)
})

test('a CPU engine sharing one core among its slots: throughput flattens early, but the knee is where streams start to wait', () => {
  // The llama.cpp kit (4 slots, one thread) in a CI run: c=1 already near the core's speed.
  const gauged = (value: number, tokensPerS: number, ttftP95: number, inFlight: number, running: number) => ({
    ...level(value, tokensPerS, ttftP95),
    achieved_concurrency: { mean: inFlight, max: value, streams: value },
    server: { running: { mean: running, max: Math.ceil(running) } } as never,
  })
  const levels = [
    gauged(1, 224.4, 34.9, 0.99, 1),
    gauged(2, 258.6, 52.4, 1.99, 1.8),
    gauged(4, 271.3, 117.0, 3.98, 4),
    gauged(8, 275.9, 436.7, 7.53, 4),
  ]
  const saturation = findSaturation(levels)
  assert.equal(saturation?.value, 4, saturation?.reason)
  assert.match(saturation?.reason ?? '', /grew little from 1, but up to 4 the server ran every stream/)
  // Without the server's gauges the throughput curve is all there is: it flattens from 1.
  const bare = levels.map(({ server: _, achieved_concurrency: __, ...rest }) => rest)
  assert.equal(findSaturation(bare)?.value, 1)
  // In request-rate mode the gauges do not move the knee (a rate is not a count of streams).
  assert.equal(findSaturation(levels, 'p95', true)?.value, findSaturation(bare, 'p95', true)?.value)
})

test('a level no scrape read says nothing of the slots: a curve knee at the highest level the gauges saw not full stands', () => {
  // A 4-slot server with a flat throughput from 4 (the --refine test's shape): level 6's one scrape missed.
  const gauged = (value: number, tokensPerS: number, running: number | null, waiting: number) => ({
    ...level(value, tokensPerS, 40 + 10 * Math.max(0, value - 4)),
    achieved_concurrency: { mean: value * 0.95, max: value, streams: value },
    server: (running === null
      ? null
      : { running: { mean: running, max: running }, waiting: { mean: waiting, max: waiting } }) as never,
  })
  const levels = [gauged(1, 100, 1, 0), gauged(4, 400, 4, 0), gauged(6, 404, null, 0), gauged(7, 402, 4, 3)]
  const saturation = findSaturation(levels)
  assert.equal(saturation?.value, 4, saturation?.reason)
  assert.deepEqual(saturation?.bracket, [4, 7])
  // Read and not full, level 6 is where the gauges put it (the curve alone would say 4).
  const read = levels.map((l) => (l.value === 6 ? gauged(6, 404, 4, 0.2) : l))
  assert.equal(findSaturation(read)?.value, 6)
})

test('gauges that read no level between one not full and one full leave the knee to the throughput curve when it places it there', () => {
  // A --repeat run's short level 4 fell between two scrapes: the gauges say "not full at 1, full at 8".
  const gauged = (
    value: number,
    tokensPerS: number,
    ttft: number,
    running: number | null,
    waiting: number,
  ) => ({
    ...level(value, tokensPerS, ttft),
    achieved_concurrency: { mean: value * 0.95, max: value, streams: value },
    server: (running === null
      ? { running: null, waiting: null }
      : { running: { mean: running, max: running }, waiting: { mean: waiting, max: waiting } }) as never,
  })
  const levels = [gauged(1, 100, 40, 1, 0), gauged(4, 400, 45, null, 0), gauged(8, 404, 400, 4, 4)]
  const saturation = findSaturation(levels)
  assert.equal(saturation?.value, 4, saturation?.reason)
  assert.match(saturation?.reason ?? '', /the server's gauges agree/)
  // Where the curve places no knee there, the level just below the full one (throughput grew up to it).
  const growing = [gauged(1, 100, 40, 1, 0), gauged(4, 400, 45, null, 0), gauged(8, 800, 400, 4, 4)]
  assert.equal(findSaturation(growing)?.value, 4)
})
