/**
 * --ramp against the simulator: one level whose streams rise linearly; the knee read on the ramp
 * with the stepped knee's own rules lands where the simulator's slots end (4 slots, no per-stream
 * decode cost: throughput grows with the streams up to 4, then flat while TTFT climbs).
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { rampNotes } from '../../src/report/ramp-notes.js'
import { buildResult } from '../../src/result/build-result.js'
import { loadRun } from '../../src/result/load-run.js'
import { type RunOutcome, runGradient } from '../../src/run/run-gradient.js'
import { StopSignal } from '../../src/run/stop-signal.js'
import { SIM_MODEL, startSimulator } from '../../src/sim/server.js'
import { tempDir, testConfig } from '../helpers/run-config.js'

const SLOTS = 4
const TOP = 8

test('a ramp from 1 to 8 streams over one level: the knee read on it is at the slots', {
  timeout: 180_000,
}, async () => {
  const sim = await startSimulator({
    slots: SLOTS,
    prefill_base_ms: 5,
    decode_base_ms: 10,
    decode_ms_per_seq: 0,
  })
  const out = tempDir()
  try {
    const config = testConfig(sim.url, SIM_MODEL, {
      levels: [1, TOP],
      output_tokens: 20,
      out_dir: out,
      preflight: false,
    })
    config.load.ramp_s = 16
    // As config/load.ts makes a ramp: one timed level of the top streams.
    config.load.levels = [TOP]
    config.load.duration_per_level_s = 16
    config.load.requests_per_level = null
    config.load.control = false
    const logs: string[] = []
    const outcome: RunOutcome = await runGradient({
      config,
      apiKey: null,
      outDir: out,
      log: (line) => logs.push(line),
      stop: new StopSignal(),
    })
    assert.equal(outcome.kind, 'done')
    const result = (outcome as Extract<RunOutcome, { kind: 'done' }>).result
    assert.ok(
      logs.some((line) =>
        line.startsWith('ramp: one level whose streams rise linearly from 1 to 8 over 16 s'),
      ),
    )
    assert.deepEqual(result.meta.load.ramp, { from: 1, to: TOP, seconds: 16 })
    const ramp = result.ramp
    assert.ok(ramp !== undefined, 'the result reads the ramp')
    assert.equal(ramp.kind, 'ramp')
    assert.deepEqual(
      ramp.slices.map((slice) => slice.value),
      [1, 2, 3, 4, 5, 6, 7, 8],
    )
    // Each request is 20 tokens at 10 ms: a slice of 2 s sees many, at every stream count.
    for (const slice of ramp.slices)
      assert.ok(slice.requests >= 5, `${slice.value} streams: ${slice.requests} requests`)
    // Below the slots the streams each get their own: throughput at 4 streams is about 4 times 1's.
    const at = (streams: number) =>
      ramp.slices.find((slice) => slice.value === streams) as (typeof ramp.slices)[number]
    const gain = at(4).output_tokens_per_s / at(1).output_tokens_per_s
    assert.ok(gain > 2.5, `throughput 1 → 4 streams x${gain.toFixed(2)}`)
    assert.ok(ramp.saturation !== null, ramp.summary)
    assert.ok(
      ramp.saturation.value >= SLOTS - 1 && ramp.saturation.value <= SLOTS + 1,
      `knee at ${ramp.saturation.value}: ${ramp.summary}`,
    )
    assert.match(
      ramp.summary,
      /^ramp: streams rose linearly from 1 to 8 over 16 s, read in 8 slices; knee on the ramp at/,
    )
    assert.match(rampNotes(result)[0] ?? '', /^Ramp streams rose linearly/)
    // The run has one level: no knee on steps; its answer and its saturation summary are the ramp's.
    assert.equal(result.saturation, null)
    assert.equal(result.saturation_summary, ramp.summary)
    assert.equal(result.answer?.value, ramp.saturation.value)
    assert.match(result.answer?.text ?? '', /\(the knee on the ramp\)$/)
    // `report` reads the same ramp from the records.
    const run = loadRun(out)
    assert.ok(run.records !== null)
    assert.deepEqual(buildResult(run.records, run.result.meta, run.serverScrapes).ramp, ramp)
  } finally {
    await sim.close()
  }
})
