// test-lane: long
// (test/run.sh starts the long files first, so the shared lane does not end on one of them)
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { startSimulator } from '../../src/sim/server.js'
import { runCli, simRunArgs } from '../helpers/cli.js'
import { tempDir } from '../helpers/run-config.js'
import { readResult, withSimRun } from '../helpers/sim-run.js'

/** A short gradient with no preflight-sized surprises: no calibration probes, no warm-up. */
const FLAGS = { levels: '1,2', requests: 4, warmup: 0, 'no-calibrate': true } as const

function runArgs(url: string, out: string, extra: string[]): string[] {
  return simRunArgs(url, out, FLAGS, extra)
}

test('prompt + max_tokens over the context: the preflight passes, every request gets HTTP 400, the run exits 1 with the server sentence', {
  timeout: 120_000,
}, async () => {
  // 256 tokens of context per request: the preflight (a few tokens) fits, 100 + 256 does not.
  const starting = startSimulator({ context_size: 256, prefill_base_ms: 1, decode_base_ms: 1 })
  const overContext = {
    flags: FLAGS,
    extra: ['--input-tokens', '100', '--output-tokens', '256'],
    folder: 'ctx-fail',
    charts: true,
  }
  await withSimRun(starting, overContext, async ({ sim, out, run }) => {
    assert.equal(run.code, 1, run.stderr)
    assert.match(run.stderr, /preflight ok/)
    assert.match(run.stderr, /Run failed \(exit 1\)/)
    assert.match(run.stderr, /c=1 is misconfigured: prompt \+ max_tokens over the model's context: HTTP 400/)
    const sentence = /4× HTTP 400: the request exceeds the available context size .*\(its figures vary\)/
    assert.match(run.stdout, sentence)
    assert.match(run.stdout, /c=1(, c=2)?: misconfigured: .*lower --input-tokens/)
    assert.doesNotMatch(run.stdout, /back off|keep adding concurrency/)
    assert.match(readFileSync(join(out, 'summary.md'), 'utf8'), sentence)
    assert.match(readFileSync(join(out, 'report.html'), 'utf8'), sentence)
    const result = readResult(out)
    assert.deepEqual(
      result.levels.map((level) => level.verdict),
      ['misconfigured', 'misconfigured'],
    )
    assert.equal(result.saturation, null)

    // The same server with lengths that fit: healthy, exit 0.
    const fits = await runCli(
      runArgs(sim.url, join(tempDir(), 'fits'), ['--input-tokens', '100', '--output-tokens', '16']),
    )
    assert.equal(fits.code, 0, fits.stderr)
    assert.doesNotMatch(fits.stderr, /Run failed/)
  })
})

test('--min-success-rate: failures at the lowest level fail the run below the threshold, not above it', {
  timeout: 120_000,
}, async () => {
  const sim = await startSimulator({
    faults: [{ kind: '503', rate: 0.3 }],
    seed: 5,
    prefill_base_ms: 1,
    decode_base_ms: 1,
  })
  try {
    const args = ['--input-tokens', '32', '--output-tokens', '16', '--no-preflight', '--levels', '1']
    const strict = join(tempDir(), 'strict')
    const failing = await runCli(
      runArgs(sim.url, strict, [...args, '--requests', '20', '--min-success-rate', '100']),
    )
    const result = readResult(strict)
    const level = result.levels[0]
    assert.ok(level !== undefined && level.failed > 0 && level.ok > 0, 'the seeded faults hit some requests')
    // 503s are load: the level is overloaded, not misconfigured; only the threshold fails the run. A
    // client that its own watch found busy (a loaded test machine) is named first, by design.
    assert.equal(
      level.verdict,
      level.client.bound ? 'client-bound' : 'overloaded',
      level.client.reasons.join('; '),
    )
    assert.equal(failing.code, 1, failing.stderr)
    assert.match(failing.stderr, /lowest level \(c=1\) succeeded on \d+\.\d% .*below --min-success-rate 100%/)
    assert.match(failing.stdout, /\d+× HTTP 503: Service unavailable/)

    const lenient = await runCli(
      runArgs(sim.url, join(tempDir(), 'lenient'), [...args, '--requests', '20', '--min-success-rate', '0']),
    )
    assert.equal(lenient.code, 0, lenient.stderr)

    const bad = await runCli(runArgs(sim.url, join(tempDir(), 'bad'), [...args, '--min-success-rate', '120']))
    assert.equal(bad.code, 2)
    assert.match(bad.stderr, /--min-success-rate.*percentage from 0 to 100/)
  } finally {
    await sim.close()
  }
})
