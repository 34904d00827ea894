import assert from 'node:assert/strict'
import type { RunConfig } from '../../src/config/types.js'
import type { BenchResult } from '../../src/result/bench-result.js'
import { type RunOutcome, runGradient } from '../../src/run/run-gradient.js'
import { StopSignal } from '../../src/run/stop-signal.js'

/** Runs the gradient of `config` into `out` (default: its own out_dir), quietly: whatever came of it. */
export function runQuietly(config: RunConfig, out = config.run.out_dir as string): Promise<RunOutcome> {
  return runGradient({
    config,
    apiKey: null,
    outDir: out,
    log: () => {},
    stop: new StopSignal(),
  })
}

/** Runs the gradient of `config` into `out`, quietly, and returns its result; anything but a finished run fails the test. */
export async function runToResult(config: RunConfig, out: string): Promise<BenchResult> {
  const outcome = await runQuietly(config, out)
  assert.equal(outcome.kind, 'done', JSON.stringify(outcome).slice(0, 300))
  return (outcome as Extract<RunOutcome, { kind: 'done' }>).result
}
