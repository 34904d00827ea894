import assert from 'node:assert/strict'
import { test } from 'node:test'
import { SIM_MODEL } from '../../src/sim/server.js'
import { tempDir, testConfig } from '../helpers/run-config.js'
import { runToResult } from '../helpers/run-result.js'
import { startSimulatorProcess as startSimulator } from '../helpers/sim-process.js'

/**
 * A 4-slot simulator whose prefills stall every running stream (a CPU engine): up to 4 streams a
 * stream's tokens come on pace; past the slots every request that takes a freed slot stalls the
 * others, so their tokens miss the run's own deadlines and the fluidity index falls, and an objective
 * on it is missed where the TTFT of the running streams alone would not say so.
 */
test('fluidity p90 falls past the slots of a simulator whose prefills stall decoding', {
  timeout: 120_000,
}, async () => {
  const sim = await startSimulator({
    slots: 4,
    prefill_base_ms: 30,
    prefill_ms_per_token: 0,
    decode_base_ms: 10,
    decode_ms_per_seq: 0,
    prefill_blocks_decode: 1,
  })
  const out = tempDir()
  try {
    const config = testConfig(sim.url, SIM_MODEL, {
      levels: [2, 8],
      requests: 32,
      output_tokens: 32,
      out_dir: out,
    })
    config.metrics.slo = { fluidity_p90: 0.95 }
    const result = await runToResult(config, out)
    const deadlines = result.meta.fluidity
    assert.ok(deadlines !== undefined, 'the warm probes set the deadlines')
    const [two, eight] = result.levels.map((level) => level.fluidity?.p90 ?? Number.NaN)
    assert.ok(two !== undefined && eight !== undefined)
    assert.ok(eight <= two - 0.05, `p90 ${two} at 2 streams, ${eight} at 8`)
    assert.equal(result.levels[1]?.slo?.meets, false, JSON.stringify(result.levels[1]?.slo))
    assert.equal(result.levels[1]?.slo?.checks[0]?.at_least, true)
  } finally {
    await sim.close()
  }
})
