// test-lane: long
// (test/run.sh starts the long files first, so the shared lane does not end on one of them)
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { renderMarkdown } from '../../src/report/markdown.js'
import { renderTable } from '../../src/report/terminal.js'
import { SIM_MODEL } from '../../src/sim/server.js'
import { tempDir, testConfig } from '../helpers/run-config.js'
import { runToResult } from '../helpers/run-result.js'
import { startSimulatorProcess } from '../helpers/sim-process.js'

/**
 * The simulator drafts 4 tokens a step and the target accepts 60% of the drafts (accepted / drafted,
 * vLLM's rate): every way llmbench reads it must recover that rate within 5% of it. The client's own
 * cadence (bursts of events written back to back, steps 15 ms apart), llama.cpp's timings draft
 * counts and vLLM's spec_decode counters on /metrics. 24 requests of 240 tokens give about 2,400
 * steps: the sample's own spread in the rate is about 0.007, a quarter of the 0.03 allowed.
 */
const RATE = 0.6
const DRAFT_MAX = 4
const STEP_MS = 15

test('a draft model of a set acceptance rate: cadence, timings and /metrics recover it within 5%', {
  timeout: 180_000,
}, async () => {
  const sim = await startSimulatorProcess(
    { slots: 8, prefill_base_ms: 20, prefill_ms_per_token: 0, decode_base_ms: STEP_MS, decode_ms_per_seq: 0 },
    { args: ['--draft-acceptance', String(RATE), '--draft-max', String(DRAFT_MAX), '--timings'] },
  )
  try {
    const out = tempDir()
    const config = testConfig(sim.url, SIM_MODEL, {
      levels: [4],
      requests: 24,
      output_tokens: 240,
      out_dir: out,
    })
    config.server_metrics.interval_s = 0.5
    const result = await runToResult(config, out)
    const level = result.levels[0]
    assert.ok(level?.speculative, 'the level has speculative figures')
    const { cadence, server } = level.speculative
    const near = (value: number | null | undefined, what: string) =>
      assert.ok(value != null && Math.abs(value - RATE) <= 0.05 * RATE, `${what}: ${value}, set ${RATE}`)
    assert.ok(cadence, 'the cadence was read')
    assert.equal(cadence.tells, true, cadence.why)
    assert.equal(cadence.longest_step, DRAFT_MAX + 1)
    near(cadence.draft_acceptance_rate, 'cadence')
    near(server?.acceptance_rate, "llama.cpp's timings")
    near(level.server?.spec_decode?.acceptance_rate, "vLLM's spec_decode counters")
    // Acceptance length: 1 + the expected accepted drafts per step, the same truth from the rate.
    const expectedLength = 1 + RATE * DRAFT_MAX
    assert.ok(
      Math.abs(cadence.acceptance_length - expectedLength) <= 0.05 * expectedLength,
      `acceptance length ${cadence.acceptance_length}, expected ${expectedLength}`,
    )
    assert.equal(level.acceptance_length, server?.acceptance_length, "the table shows the engine's figure")
    const histogram = Object.values(cadence.steps_by_tokens).reduce((a, b) => a + b, 0)
    assert.equal(histogram, cadence.steps)
    // The reports show it where it is (absent elsewhere: the rendered folders hold that).
    const summary = renderMarkdown(result)
    for (const from of ['engine, per request', 'engine, /metrics', 'client cadence'])
      assert.ok(summary.includes(`| ${from} |`), `summary.md has the ${from} row`)
    assert.match(renderTable(result, { width: 400 }), /accept/)
  } finally {
    await sim.close()
  }
})
