import assert from 'node:assert/strict'
import { cpSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import type { Comparison } from '../../src/compare/compare.js'
import type { BenchResult } from '../../src/result/bench-result.js'
import { runCli } from '../helpers/cli.js'
import { tempDir } from '../helpers/run-config.js'
import { writeVirtualRun } from '../helpers/virtual-run.js'

/**
 * A short gradient past a 4-slot simulator's slots: the knee, queueing and the decode speed all show.
 * The runs are made in virtual time (test/helpers/virtual-run.ts: the simulator's engine with 5% noise
 * on every step, a seed per run), so the gate judges the same folders on any machine: the A/A pair is
 * one server under two seeds, the other run the same server with 2 slots.
 */
const RUN = { levels: [1, 2, 4, 8], requests: 16, inputTokens: 64, outputTokens: 24 } as const
const SIM = { slots: 4, prefill_base_ms: 10, decode_base_ms: 5, decode_ms_per_seq: 0.5 }

const compare = (a: string, b: string, ...extra: string[]) => runCli(['compare', a, b, '--json', ...extra])

/**
 * A/A passes: no regression and nothing left open. (On real timers a busy host could make a client
 * untrustworthy and a level inconclusive; the virtual runs' clients are the template's, never bound.)
 */
function assertNoRegression(compared: { code: number | null; stdout: string; stderr: string }): Comparison {
  const comparison = JSON.parse(compared.stdout) as Comparison
  assert.deepEqual(comparison.regressions, [], compared.stdout)
  assert.equal(comparison.outcome, 'pass', compared.stdout)
  assert.equal(compared.code, 0, compared.stderr)
  return comparison
}

test('compare on the simulator: A/A passes both ways, fewer slots fail with the metric named, drift and a bound client are inconclusive (exit 5)', {
  timeout: 120_000,
}, async () => {
  const dir = tempDir()
  const [first, second, fewer] = ['first', 'second', 'fewer'].map((name) => join(dir, name)) as [
    string,
    string,
    string,
  ]
  writeVirtualRun(first, { ...RUN, sim: SIM, seed: 1 })
  writeVirtualRun(second, { ...RUN, sim: SIM, seed: 2 })
  writeVirtualRun(fewer, { ...RUN, sim: { ...SIM, slots: 2 }, seed: 3 })

  // The folders the gate is shown, made before any compare runs: the new run saying its environment
  // drifted (nothing gated), the same with a drift sized by the result, an A/A run with a 3% drift, and
  // an A/A run with a client-bound level.
  const sized = (from: number, to: number) => ({
    moved: true,
    reason: `control TPOT ${from} → ${to} ms`,
    first: { tpot_ms: { p50: from, low: from, high: from, count: 8 } },
    control: { tpot_ms: { p50: to, low: to, high: to, count: 8 } },
  })
  /** A copy of `from` in `name` whose bench_result.json is `edit` of its own. */
  const edited = (from: string, name: string, edit: (result: BenchResult) => object): string => {
    const copy = join(dir, name)
    cpSync(from, copy, { recursive: true })
    const file = join(copy, 'bench_result.json')
    writeFileSync(file, JSON.stringify(edit(JSON.parse(readFileSync(file, 'utf8')) as BenchResult)))
    return copy
  }
  const drifted = edited(fewer, 'drifted', (result) => ({
    ...result,
    drift: { moved: true, reason: 'control c=1 TPOT +40%' },
  }))
  const sizedDrift = edited(fewer, 'sized-drift', (result) => ({ ...result, drift: sized(10, 14) }))
  const nudged = edited(second, 'nudged', (result) => ({ ...result, drift: sized(10, 10.3) }))
  const bound = edited(second, 'bound', (result) => {
    const level = result.levels[3] as BenchResult['levels'][number]
    level.client = { ...level.client, bound: true, reasons: ['CPU 98%'] }
    return result
  })
  // The compares are independent processes, started together: they cost the longest, not the sum.
  const [
    forward,
    backward,
    slower,
    markdown,
    onDrift,
    onDriftShown,
    beyondDrift,
    small,
    onBound,
    strictBound,
  ] = await Promise.all([
    compare(first, second),
    compare(second, first),
    compare(first, fewer, '--strict-client'),
    runCli(['compare', first, fewer, '--strict-client']),
    compare(first, drifted),
    runCli(['compare', drifted, first]),
    compare(first, sizedDrift),
    compare(first, nudged),
    compare(first, bound),
    compare(first, bound, '--strict-client'),
  ])

  // A/A, in both orderings: two runs of one server (two seeds of its noise) are not a regression.
  const aa: Comparison[] = []
  for (const compared of [forward, backward]) {
    const comparison = assertNoRegression(compared)
    aa.push(comparison)
    // The median is gated beside the tails, and the knee is a gate item.
    const gated = comparison.levels[0]?.metrics
      .filter((metric) => metric.threshold !== null)
      .map((m) => m.metric)
    assert.ok(gated?.includes('ttft_p50') && gated.includes('tpot_p50') && gated.includes('ttft_p95'))
    assert.equal(comparison.knee?.threshold, 0)
    assert.equal(comparison.knee?.regressed, false)
  }

  // 4 → 2 slots: at c=4 half the requests wait for a slot (at c=8 the queue is bimodal in 16 requests: wide).
  // --strict-client: a run's client bound at c=4 would make that level inconclusive (tested below); here
  // the question is whether the gate names the slower TTFT.
  assert.equal(slower.code, 1, slower.stdout)
  const comparison = JSON.parse(slower.stdout) as Comparison
  assert.equal(comparison.outcome, 'regression')
  const named = comparison.regressions.map((r) => `c=${r.value} ${r.metric}`)
  const atFour = JSON.stringify(comparison.levels.find((level) => level.value === 4))
  assert.ok(named.includes('c=4 ttft_p50'), `${named.join(', ')}\n${atFour}`)
  assert.ok(!named.some((name) => name.startsWith('c=1 ')), `c=1 has a slot either way: ${named.join(', ')}`)
  assert.match(markdown.stdout, /\*\*\d+ regression\(s\):\*\* .*c=4 ttft_p50 \+\d/)
  assert.match(markdown.stdout, /\| 4 \| ttft_p50 \| .* \| REGRESSION \|/)
  assert.match(markdown.stdout, /^Knee: base .* → new .*; gated/m)
  assert.match(markdown.stdout, /^Not gated for too few requests .*: ttft_p95, ttft_p99,/m)

  // The new run says its environment drifted: nothing is gated, exit 5, and the reason is shown.
  assert.equal(onDrift.code, 5, onDrift.stdout)
  const driftComparison = JSON.parse(onDrift.stdout) as Comparison
  assert.deepEqual(driftComparison.regressions, [])
  assert.ok(driftComparison.inconclusive.some((entry) => entry.metric === 'ttft_p50' && entry.value === 4))
  assert.deepEqual(driftComparison.drift, ['new run drifted: control c=1 TPOT +40%'])
  assert.match(onDriftShown.stdout, /The environment drifted.*\n- base run drifted: control c=1 TPOT \+40%/)

  // A drift the result sizes vouches for what clears it: a control 40% slower still lets c=4's TTFT
  // p50 (+800% or so) gate (exit 1); a 3% drift beside an A/A pair, under the 5% threshold, leaves a pass.
  assert.equal(beyondDrift.code, 1, beyondDrift.stdout)
  const beyond = JSON.parse(beyondDrift.stdout) as Comparison
  // The larger of the two runs' drifts: the injected 40%, or the other run's own control where it moved
  // further.
  assert.ok(beyond.drift_size >= 0.4 - 1e-9, String(beyond.drift_size))
  assert.ok(beyond.regressions.some((entry) => entry.metric === 'ttft_p50' && entry.value === 4))
  const smallComparison = JSON.parse(small.stdout) as Comparison
  assert.deepEqual(smallComparison.regressions, [], small.stdout)
  // The pair's own differences are the same with the drift as without. Noise can push one of them past
  // its threshold (on real timers CI saw an A/A throughput at c=1 18% apart), which the A/A comparison
  // puts down to the runs' noise; beside a drifted run the same difference is left open instead.
  // Nothing else may be: the small drift itself turns no agreeing figure inconclusive.
  const putDownToNoise = new Set(
    (aa[0] as Comparison).levels.flatMap((level) =>
      level.metrics
        .filter((metric) => metric.within_noise === true)
        .map((metric) => `${level.value} ${metric.metric}`),
    ),
  )
  for (const entry of smallComparison.inconclusive)
    assert.ok(
      putDownToNoise.has(`${entry.value} ${entry.metric}`),
      `${entry.value} ${entry.metric}: ${small.stdout}`,
    )
  assert.equal(small.code, smallComparison.inconclusive.length === 0 ? 0 : 5, small.stdout)

  // A client-bound level: its load was not what was asked, so even an A/A is inconclusive there.
  assert.equal(onBound.code, 5, onBound.stdout)
  assert.match(JSON.parse(onBound.stdout).levels[3].inconclusive, /new run: client-bound \(CPU 98%\)/)
  // --strict-client judges it: an A/A then passes.
  assertNoRegression(strictBound)
})
