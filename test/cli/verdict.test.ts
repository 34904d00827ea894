// test-lane: long
// (test/run.sh starts the long files first, so the shared lane does not end on one of them)
import assert from 'node:assert/strict'
import { cpSync, existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { runCli } from '../helpers/cli.js'
import { tempDir } from '../helpers/run-config.js'
import { writeVirtualRun } from '../helpers/virtual-run.js'

/** Two short demo runs against the built-in simulator: the second decodes 40% slower. */
const DEMO = [
  'demo',
  '--levels',
  '2,8',
  '--duration',
  '1.5',
  '--warmup',
  '2',
  '--output-tokens',
  '32',
  '--quiet',
]

/**
 * A demo starts a simulator process and a run in another: on a host at load 24 one took over a
 * minute (the CLI's default wait in these tests), where a quiet host takes a few seconds.
 */
const DEMO_TIME = { timeoutMs: 180_000 }

test('SLOs, --fail-on-slo, summary.md, history, report and compare through the CLI', {
  timeout: 300_000,
}, async () => {
  const dir = tempDir()
  const base = join(dir, 'base')
  const slower = join(dir, 'slower')
  const history = join(dir, 'history')

  // The two demos run side by side (each serves its own simulator): they see the host in the same
  // seconds, and the pair costs one run's time. Both append to one history.
  // An objective no level can meet (TTFT p50 under 1 ms): the gate fails with exit 1.
  const [gated, second] = await Promise.all([
    runCli(
      [...DEMO, '--slo', 'ttft_p50_ms=1', '--fail-on-slo', '--history', history, '--out', base],
      DEMO_TIME,
    ),
    runCli([...DEMO, '--decode-base-ms', '14', '--history', history, '--out', slower], DEMO_TIME),
  ])
  assert.equal(gated.code, 1, gated.stderr)
  assert.match(gated.stderr, /SLO gate failed: no level meets the SLOs \(ttft_p50_ms ≤ 1\)/)
  const result = JSON.parse(readFileSync(join(base, 'bench_result.json'), 'utf8'))
  assert.equal(result.capacity, null)
  assert.equal(result.levels[0].slo.meets, false)
  assert.equal(result.levels[0].slo.good_share, 0)
  assert.ok(result.levels[0].ttft_ms_error_adjusted.p50 > 0)
  const summary = readFileSync(join(base, 'summary.md'), 'utf8')
  assert.match(summary, /\| concurrency \| requests \| success \|/)
  assert.match(summary, /^\*\*Capacity: no level meets the SLOs \(ttft_p50_ms ≤ 1\)\*\*$/m)
  assert.match(summary, /outputs of 32 tokens are short/)
  assert.equal(second.code, 0, second.stderr)

  // The trend, the report and the compares are independent processes, started together: they cost the
  // longest, not the sum. (report rewrites its folder: it runs on a copy of the slower run, which the
  // compares read at the same time.)
  const reported = join(dir, 'reported')
  cpSync(slower, reported, { recursive: true })
  const markdown = join(dir, 'compare.md')
  // The regression compare is shown is made in virtual time (test/helpers/virtual-run.ts): the demo's
  // simulator (16 slots, decode 10 ms a step) and one decoding 40% slower, the levels and lengths of
  // the demos, 5% noise on every step from a seed; on real timers a loaded host moved the pair.
  const [virtualBase, virtualSlower] = [join(dir, 'virtual-base'), join(dir, 'virtual-slower')]
  const levels = { levels: [2, 8], requests: 24, inputTokens: 64, outputTokens: 32 }
  writeVirtualRun(virtualBase, { ...levels, sim: { decode_base_ms: 10 }, seed: 1 })
  writeVirtualRun(virtualSlower, { ...levels, sim: { decode_base_ms: 14 }, seed: 2 })
  const [trend, report, compared, same] = await Promise.all([
    runCli(['report', '--history', history]),
    runCli(['report', reported]),
    runCli(['compare', virtualBase, virtualSlower, '--markdown', markdown]),
    runCli(['compare', base, base]),
  ])

  // The history shows both runs.
  assert.equal(trend.code, 0, trend.stderr)
  assert.equal(trend.stdout.trim().split('\n').length, 2 + 2)
  // ... and as charts: three trends, each with a point per run that has the figure.
  assert.match(trend.stderr, /history: wrote .*history\.html/)
  const page = readFileSync(join(history, 'history.html'), 'utf8')
  assert.match(page, /llmbench history: 2 runs/)
  assert.equal((page.match(/<figure data-chart="history-\d">/g) ?? []).length, 3)
  // (Vega labels each point, and the line again with its first point's figures.)
  assert.equal(new Set(page.match(/aria-label="[^"]*series: peak output tokens\/s; run: #\d /g)).size, 2)

  // report regenerates the same figures from the records alone.
  assert.equal(report.code, 0, report.stderr)
  assert.deepEqual(
    JSON.parse(readFileSync(join(reported, 'bench_result.json'), 'utf8')).levels,
    JSON.parse(readFileSync(join(slower, 'bench_result.json'), 'utf8')).levels,
  )

  // compare: 40% slower decoding is a TPOT and E2E regression (exit 1), with Markdown; on the median,
  // since levels as short as the demos' hold too few requests to gate p95 (100 needed).
  assert.equal(compared.code, 1, compared.stdout + compared.stderr)
  assert.match(compared.stdout, /\| 8 \| tpot_p50 \| .* \| REGRESSION \|/)
  assert.ok(existsSync(markdown))
  // The same run against itself: no regression, exit 0.
  assert.equal(same.code, 0, same.stdout)
  assert.match(same.stdout, /No regression/)
  assert.match(same.stdout.split('\n')[0] ?? '', /^\*\*PASS\*\*: no regression/)
})

test('compare refuses runs that differ in set-up (exit 2) unless told to', { timeout: 240_000 }, async () => {
  const dir = tempDir()
  const a = join(dir, 'a')
  const b = join(dir, 'b')
  // Two runs that differ in set-up: only their set-ups are compared, so they may run side by side.
  const made = await Promise.all([
    runCli(['demo', '--levels', '2', '--duration', '0.5', '--quiet', '--out', a], DEMO_TIME),
    runCli(
      ['demo', '--levels', '2', '--duration', '0.5', '--output-tokens', '16', '--quiet', '--out', b],
      DEMO_TIME,
    ),
  ])
  assert.deepEqual(
    made.map((run) => run.code),
    [0, 0],
    made.map((run) => run.stderr).join('\n'),
  )
  const [refused, forced, bad] = await Promise.all([
    runCli(['compare', a, b]),
    runCli(['compare', a, b, '--allow-mismatch']),
    runCli(['compare', a, b, '--max-regression', 'latency=5%']),
  ])
  assert.equal(refused.code, 2)
  assert.match(refused.stderr, /output tokens: 64 vs 16/)
  assert.match(forced.stdout, /The runs differ in set-up/)
  assert.equal(bad.code, 2)
  assert.match(bad.stderr, /--max-regression: expected KEY=N% pairs/)
})
