import assert from 'node:assert/strict'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { runGradient } from '../../src/run/run-gradient.js'
import { type RunPhase, StopSignal } from '../../src/run/stop-signal.js'
import { SIM_MODEL, startSimulator } from '../../src/sim/server.js'
import { tempDir, testConfig } from '../helpers/run-config.js'

/** A stop that arrives the moment the run starts drawing its report, as a Ctrl-C would then. */
class StopWhenReporting extends StopSignal {
  override enter(phase: RunPhase): void {
    super.enter(phase)
    if (phase === 'report') this.request()
  }
}

test('a stop while the report is drawn lets it finish: every level kept, the result complete, report.html written', {
  timeout: 60_000,
}, async () => {
  const sim = await startSimulator({ prefill_base_ms: 5, decode_base_ms: 2 })
  const out = tempDir()
  try {
    const config = testConfig(sim.url, SIM_MODEL, { levels: [1, 2], requests: 4, warmup: 0, out_dir: out })
    // The subject is the drawing a stop lets finish.
    config.run.charts = true
    const stop = new StopWhenReporting()
    const outcome = await runGradient({ config, apiKey: null, outDir: out, log: () => {}, stop })
    assert.equal(stop.requested, true)
    assert.equal(outcome.kind, 'done')
    const result = JSON.parse(readFileSync(join(out, 'bench_result.json'), 'utf8'))
    assert.equal(result.meta.partial, false, 'every level was measured before the stop')
    assert.deepEqual(
      result.levels.map((level: { value: number }) => level.value),
      [1, 2],
    )
    assert.ok(existsSync(join(out, 'report.html')), 'the report being drawn is finished')
  } finally {
    await sim.close()
  }
})
