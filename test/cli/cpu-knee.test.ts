// test-lane: long
// (test/run.sh starts the long files first, so the shared lane does not end on one of them)
// wall-clock: the verdicts rest on throughput steps measured on real timers
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { runCli } from '../helpers/cli.js'
import { tempDir } from '../helpers/run-config.js'

/**
 * The gradient of issue 12 against the simulator in CPU-like mode (8 slots): throughput grows
 * sub-linearly from c=1 (+60% for the first doubling, ~+25% for the last), then stays flat while
 * TTFT climbs. The old "first weak step" rule would have said 1 or 2; the knee is the slot count.
 * Levels of 2 s (3 s before): the knee and the verdicts rest on the server's gauges (up to 8 it ran
 * every stream it was sent; at 16, 8 running and 8 waiting), which a shorter level shows as well; a
 * run at load 26 still gave knee 8 and these verdicts, with timers up to 34 ms late.
 */
test('demo --cpu-like: a sub-linear gradient has its knee at the 8 slots', { timeout: 180_000 }, async () => {
  const out = join(tempDir(), 'cpu')
  const run = await runCli(
    [
      'demo',
      '--cpu-like',
      '--levels',
      '1,2,4,8,16',
      '--duration',
      '2',
      '--warmup',
      '2',
      '--input-tokens',
      '32',
      '--output-tokens',
      '32',
      '--quiet',
      '--out',
      out,
    ],
    { timeoutMs: 170_000 },
  )
  assert.equal(run.code, 0, run.stderr)
  const result = JSON.parse(readFileSync(join(out, 'bench_result.json'), 'utf8'))
  const figures = result.levels.map(
    (level: { value: number; output_tokens_per_s_steady: number; ttft_ms: { p95: number } }) =>
      `${level.value}: ${level.output_tokens_per_s_steady} tok/s, TTFT p95 ${level.ttft_ms.p95} ms`,
  )
  assert.equal(result.saturation?.value, 8, `${result.saturation_summary}\n${figures.join('\n')}`)
  const verdicts = result.levels.map((level: { verdict: string }) => level.verdict)
  assert.deepEqual(verdicts, ['healthy', 'healthy', 'healthy', 'healthy', 'saturated'])
  // Every level quotes its own step; none that rose is called flat.
  // (The per-doubling figure follows when the achieved concurrency made the step not quite a doubling.)
  assert.match(result.levels[1].advice, /^throughput \+\d+% from 1( \(\+\d+% per doubling\))?, TTFT p95 x\d/)
  assert.ok(
    result.levels.every(
      (level: { achieved_concurrency: { max: number } }) => level.achieved_concurrency.max > 0,
    ),
  )
})
