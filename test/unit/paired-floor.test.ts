import assert from 'node:assert/strict'
import { test } from 'node:test'
import { hostCosts, Target } from '../../bench/gate/virtual-target.js'
import {
  compareRuns,
  DEFAULT_MAX_REGRESSION,
  type MetricComparison,
  PAIRED_FLOOR_PERCENTILE,
  type RunRecords,
} from '../../src/compare/compare.js'
import { resolveSimParams, VirtualClock } from '../../src/model/engine.js'
import { seededRandom } from '../../src/random.js'
import type { RequestRecord } from '../../src/records/types.js'
import type { RunMeta } from '../../src/result/run-meta.js'
import { blockRequests, pairedOrder } from '../../src/run/plan/paired-blocks.js'

/**
 * Issue 38: under a neighbour that switches on and off every few seconds, four interleaved pairs of
 * blocks judge TPOT p50 on a t interval of three degrees of freedom and miss a 10% decode slowdown
 * about half the time. The floor (TPOT p10 over both sides' pooled blocks) is what a neighbour does
 * not move: the simulator's own engine in virtual time, as `npm run bench:gate` runs it.
 */
const LEVEL = 4
const REQUESTS = 80
const PAIRS = 4
const LENGTHS = { input: 256, output: 64 }
const SERVER = resolveSimParams({
  slots: 4,
  prefill_base_ms: 10,
  prefill_ms_per_token: 0.2,
  decode_base_ms: 10,
  decode_ms_per_seq: 0.9,
})
/** Every latency percentile and throughput gated at 5%, so that a 10% slowdown can clear it. */
const GATES = Object.fromEntries(
  Object.entries(DEFAULT_MAX_REGRESSION).map(([key, value]) => [
    key,
    /^(ttft|tpot|e2e)_p|^throughput$/.test(key) ? 0.05 : value,
  ]),
)

const META = {
  target: { model: 'sim' },
  workload: { input_tokens: LENGTHS.input, output_tokens: LENGTHS.output, stream: true },
  load: { mode: 'concurrency', levels: [LEVEL], warmup_requests: 0 },
  levels_run: [{ value: LEVEL, workers: 1, client: { cpu_percent: 0, loops: [] } }],
  percentiles: [50, 95, 99],
} as unknown as RunMeta

/** One interleaved paired level under the neighbour (+40% for half of each period); B's decode × `decode`. */
function pairedLevel(seed: number, decode: number): MetricComparison[] {
  const random = seededRandom(seed)
  const clock = new VirtualClock()
  const period = 8_000 + 12_000 * random()
  const phase = period * random()
  const host = (t: number): number => (((t + phase) % period) / period < 0.5 ? 1.4 : 1)
  const targets = [1, decode].map(
    (factor) =>
      new Target(hostCosts(SERVER, { decode: factor, prefill: 1 }, host, clock, random), clock, LENGTHS),
  )
  const sides: RequestRecord[][] = [[], []]
  const size = blockRequests(REQUESTS, LEVEL, PAIRS)
  for (const block of pairedOrder(seed, 0, PAIRS))
    sides[block.target]?.push(
      ...(targets[block.target] as Target).block(LEVEL, size, {
        level: LEVEL,
        phase: 'measure',
        pair: block.pair,
      }),
    )
  const side = (records: RequestRecord[] | undefined): RunRecords => ({
    meta: META,
    records: records ?? [],
    drift: null,
  })
  return compareRuns(side(sides[0]), side(sides[1]), GATES, { paired: true }).levels[0]?.metrics ?? []
}

const floorOf = (metrics: MetricComparison[]): MetricComparison => {
  const floor = metrics.find((metric) => metric.metric === `tpot_p${PAIRED_FLOOR_PERCENTILE}`)
  assert.ok(floor !== undefined, `a paired level judges tpot_p${PAIRED_FLOOR_PERCENTILE}`)
  return floor
}

test('paired, a neighbour switching on and off: TPOT p10 over the pooled blocks holds still on A/A and finds a 10% decode slowdown', () => {
  const seeds = Array.from({ length: 10 }, (_, i) => 4_000_000 + i)
  const moved: number[] = []
  let caught = 0
  let p50Caught = 0
  for (const seed of seeds) {
    const same = floorOf(pairedLevel(seed, 1))
    assert.equal(same.regressed, false, `A/A, seed ${seed}: ${JSON.stringify(same)}`)
    assert.ok(Math.abs(same.change ?? 1) < 0.06, `A/A, seed ${seed}: the floor moved ${same.change}`)
    assert.equal(same.pairs, undefined, 'the floor is judged on the pooled blocks, not pair by pair')
    assert.equal(same.threshold, 0.05, "gated at TPOT p50's threshold when none names it")

    const metrics = pairedLevel(seed, 1.1)
    const slower = floorOf(metrics)
    moved.push(slower.change ?? 0)
    if (slower.regressed) caught++
    if (metrics.find((metric) => metric.metric === 'tpot_p50')?.regressed === true) p50Caught++
  }
  // A side that saw the quiet state only briefly (one block of A in the neighbour's on phase 80% of
  // its requests) cannot show its floor: the first seed here moved 2%. The others move about 10%.
  moved.sort((x, y) => x - y)
  const median = ((moved[4] ?? 0) + (moved[5] ?? 0)) / 2
  assert.ok(median > 0.08 && median < 0.12, `decode +10%: the floor's median change ${median}`)
  assert.ok(caught >= 8, `the floor caught ${caught} of ${seeds.length}`)
  assert.ok(caught > p50Caught, `the floor caught ${caught}, TPOT p50 pair by pair ${p50Caught}`)
})

test('a two-run comparison judges no floor: its drift between runs moves the fastest requests too', () => {
  const metrics = pairedLevel(4_000_000, 1)
  assert.ok(metrics.some((metric) => metric.metric === 'tpot_p10'))
  const random = seededRandom(1)
  const clock = new VirtualClock()
  const target = new Target(
    hostCosts(SERVER, { decode: 1, prefill: 1 }, () => 1, clock, random),
    clock,
    LENGTHS,
  )
  const run = (): RunRecords => ({
    meta: META,
    records: target.block(LEVEL, 24, { level: LEVEL, phase: 'measure' }),
    drift: null,
  })
  const twoRun = compareRuns(run(), run(), GATES).levels[0]?.metrics ?? []
  assert.ok(!twoRun.some((metric) => metric.metric === 'tpot_p10'))
})
