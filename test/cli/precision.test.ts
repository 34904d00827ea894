// test-lane: long
// (test/run.sh starts the long files first, so the shared lane does not end on one of them)
// wall-clock: a level stops when measured TTFTs are precise (or on the clock: --max-duration)
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import type { LevelSummary } from '../../src/metrics/summarize.js'
import { runCli } from '../helpers/cli.js'
import { startSimulatorProcess } from '../helpers/sim-process.js'
import { readResult, withSimRun } from '../helpers/sim-run.js'

/**
 * --precision against the simulator (issue 27): a level keeps sending past --requests until the
 * named figures are precise, and stops there, or at a ceiling, saying which figure fell short.
 * Steady: one stream, fixed prompts, a fixed prefill: TTFT is the same but for timer noise, and
 * its median is precise long before the ceiling. Noisy: prompts of normal(128, 64) tokens at 1 ms a
 * token of prefill: TTFT spreads over hundreds of ms (85-600 ms in a run at load 19), and a median
 * within ±5% needs hundreds of requests, far past a ceiling of 30 (that run: ±26% at 30). At 2 ms a
 * token (before) the level took 9 s rather than 6.
 */

const STEADY = {
  slots: 4,
  prefill_base_ms: 20,
  prefill_ms_per_token: 0,
  decode_base_ms: 10,
  decode_ms_per_seq: 0,
}
const NOISY = { ...STEADY, prefill_ms_per_token: 1 }
const COMMON = { warmup: 1, 'output-tokens': 8, 'no-control': true } as const

/** A run with --precision against a simulator of these capacity settings; `check` gets its level. */
function precisionRun(
  params: typeof STEADY,
  flags: Record<string, string | number>,
  check: (level: LevelSummary | undefined, stderr: string, out: string) => void | Promise<void>,
): Promise<void> {
  return withSimRun(
    startSimulatorProcess(params),
    { flags: { ...COMMON, ...flags }, timeoutMs: 100_000 },
    async ({ out, run }) => {
      assert.equal(run.code, 0, run.stderr)
      await check(readResult(out).levels[0], run.stderr, out)
    },
  )
}

test('--precision on a steady server: the level stops once its TTFT median is precise, before the ceiling, and says so', {
  timeout: 120_000,
}, async () => {
  await precisionRun(
    STEADY,
    {
      levels: '1',
      requests: 12,
      'max-requests': 200,
      'input-tokens': 64,
      precision: 'ttft_p50=25%',
    },
    (level, stderr) => {
      const precision = level?.precision
      assert.ok(precision !== undefined, 'the level carries its precision')
      assert.equal(precision.stopped_by, 'precise', JSON.stringify(precision))
      assert.equal(precision.floor, 12)
      assert.equal(precision.max_requests, 200)
      assert.ok((level?.requests ?? 0) >= 12 && (level?.requests ?? 0) < 200, `${level?.requests} requests`)
      assert.equal(precision.requests, level?.requests)
      const figure = precision.figures[0]
      assert.equal(figure?.key, 'ttft_p50')
      // It stays precise over 4 records before stopping (preciseHold), and the request then in
      // flight (the stream's next one is sent as its record travels back from the worker) is
      // measured too: one slow TTFT under a busy host can still open the median's interval again
      // (about 1 level in 100 in a simulation of correlated noise; 2 runs in 8 at load 10 when it
      // held one record). The level then says so rather than claim a precision it no longer has.
      const bounded = figure.reached_pct !== null && figure.reached_pct <= 25
      assert.equal(precision.met, bounded, JSON.stringify(figure))
      assert.ok((level?.requests ?? 0) >= 12 + 4, `precise over 4 records past the floor: ${level?.requests}`)
      if (!precision.met)
        assert.match(
          stderr,
          /level 1: stopped as its figures reached their targets, but with the requests then in flight \(\d+ in all\) ttft_p50 ended past its target: ttft_p50 /,
        )
      assert.match(stderr, /12–200 requests until ttft_p50 ±25%/, 'the plan says floor, ceiling and target')
      assert.match(
        stderr,
        /sample size: requests a level needs, from the warm probes' spread .*ttft_p50 ±25% about \d+/,
      )
      assert.match(
        stderr,
        /level 1: (ran \d+ requests until precise|stopped as its figures reached their targets, but with the requests then in flight \(\d+ in all\) ttft_p50 ended past its target): ttft_p50 /,
      )
    },
  )
})

test('--precision on a noisy server: the level extends to its ceiling and says which figure was not precise, by how much', {
  timeout: 120_000,
}, async () => {
  await precisionRun(
    NOISY,
    {
      levels: '2',
      requests: 10,
      'max-requests': 30,
      'input-tokens': 'normal(128,64)',
      precision: 'ttft_p50=5%',
    },
    async (level, stderr, out) => {
      const precision = level?.precision
      assert.ok(precision !== undefined)
      assert.equal(precision.stopped_by, 'max_requests', JSON.stringify(precision))
      assert.equal(precision.met, false)
      assert.equal(level?.requests, 30, 'the ceiling, all of it')
      const figure = precision.figures[0]
      assert.ok(
        figure !== undefined && (figure.reached_pct === null || figure.reached_pct > 5),
        JSON.stringify(figure),
      )
      assert.match(
        stderr,
        /level 2: reached the ceiling of 30 requests \(30 requests\) before ttft_p50 (was within ±5% \(it is ±[\d.]+%, [\d.]+× the target\)|could be bounded)/,
      )
      // Said beside the table too, and drawn again by `report` from what the run stored.
      const note = /not precise: reached the ceiling of 30 requests \(30 requests\) before ttft_p50/
      assert.match(readFileSync(join(out, 'summary.md'), 'utf8'), note)
      const report = await runCli(['report', out])
      assert.equal(report.code, 0, report.stderr)
      assert.match(report.stdout, note)
      assert.equal(readResult(out).levels[0]?.precision?.stopped_by, 'max_requests')
    },
  )
})

test('--precision with --max-duration: a noisy level stops on the clock, well short of its request ceiling', {
  timeout: 120_000,
}, async () => {
  await precisionRun(
    NOISY,
    {
      levels: '2',
      requests: 4,
      'max-requests': 5000,
      'max-duration': 2,
      'input-tokens': 'normal(128,64)',
      precision: 'ttft_p50=1%',
    },
    (level, stderr) => {
      assert.equal(level?.precision?.stopped_by, 'max_duration', JSON.stringify(level?.precision))
      // Two streams of requests of ~0.4 s for 2 s, then the ones in flight finish.
      assert.ok((level?.requests ?? 0) < 100, `${level?.requests} requests`)
      assert.match(stderr, /level 2: reached the ceiling of 2 s \(\d+ requests\) before ttft_p50/)
    },
  )
})

test('--precision refused where it cannot work, and its ceilings without it: exit 2 naming the setting', async () => {
  const base = ['run', '--base-url', 'http://127.0.0.1:9/v1', '--model', 'm', '--levels', '1']
  const cases: { args: string[]; says: RegExp }[] = [
    {
      args: ['--precision', 'ttft_p95=5%', '--duration', '10'],
      says: /^--precision and --duration: precision: expected levels sized by requests.*got duration_per_level/m,
    },
    {
      args: ['--precision', 'ttft_q95=5%'],
      says: /--precision.*a figure like ttft_p95, tpot_p50, e2e_p99 or tput/,
    },
    { args: ['--precision', 'tput=0'], says: /--precision.*a percent above 0/ },
    {
      args: ['--precision', 'tput=5', '--mode', 'rate'],
      says: /^--precision and --mode: precision: expected a concurrency gradient/m,
    },
    {
      args: ['--max-requests', '100'],
      says: /^--max-requests: max_requests_per_level: expected precision with max_requests_per_level/m,
    },
    {
      args: ['--precision', 'tput=5', '--requests', '50', '--max-requests', '20'],
      says: /at least requests_per_level/,
    },
    { args: ['--precision', 'tput=5', '--shard', '0/2'], says: /--precision with --shard/ },
    {
      args: ['--precision', 'tput=5', '--repeat', '3'],
      says: /^--precision and --repeat: precision: expected precision or repeat, not both/m,
    },
  ]
  for (const { args, says } of cases) {
    const run = await runCli([...base, ...args], { inProcess: true })
    assert.equal(run.code, 2, `${args.join(' ')}: ${run.stderr}`)
    assert.match(run.stderr, says, args.join(' '))
  }
})
