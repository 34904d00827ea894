// test-lane: long
// wall-clock: each endpoint knee is placed on throughput measured on real timers
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { buildResult } from '../../src/result/build-result.js'
import { loadRun } from '../../src/result/load-run.js'
import { SIM_MODEL } from '../../src/sim/server.js'
import { TIMING_FIGURES, tempDir, testConfig } from '../helpers/run-config.js'
import { runToResult } from '../helpers/run-result.js'
import { startSimulatorProcess as startSimulator } from '../helpers/sim-process.js'

/**
 * Two endpoints of different capacity behind one run: simulators of 2 and 6 slots whose requests
 * take 30 ms to the first token and 16 tokens of 10 ms whatever the batch, so each one's throughput
 * grows exactly up to its slots and not past them. The run's levels 2–16 give each endpoint half
 * the streams (1–8): each must get its own knee at its own slots, from its own records.
 */
const FLAT = { prefill_base_ms: 30, prefill_ms_per_token: 0, decode_base_ms: 10, decode_ms_per_seq: 0 }

test('two endpoints of 2 and 6 slots get their own knees, at 2 and 6 streams, in one run', {
  timeout: 180_000,
}, async () => {
  const small = await startSimulator({ slots: 2, ...FLAT })
  const large = await startSimulator({ slots: 6, ...FLAT })
  const out = tempDir()
  try {
    const config = testConfig(small.url, SIM_MODEL, {
      levels: [2, 4, 8, 12, 16],
      requests: 48,
      output_tokens: 16,
      out_dir: out,
      ...TIMING_FIGURES,
    })
    config.target.more_base_urls = [large.url]
    const result = await runToResult(config, out)
    const targets = result.targets ?? []
    assert.equal(targets.length, 2)
    const [first, second] = targets
    assert.ok(first !== undefined && second !== undefined)
    assert.deepEqual(
      first.levels.map((level) => level.load),
      [1, 2, 4, 6, 8],
      'each endpoint holds half the streams of every level',
    )
    assert.deepEqual(
      targets.map((target) => target.levels.map((level) => level.requests)),
      [
        [24, 24, 24, 24, 24],
        [24, 24, 24, 24, 24],
      ],
    )
    for (const [target, slots] of [
      [first, 2],
      [second, 6],
    ] as const) {
      const knee = target.saturation
      assert.ok(knee !== null, target.saturation_summary)
      const bracket = knee.bracket ?? [knee.value, knee.value]
      assert.ok(
        knee.value === slots || (bracket[0] <= slots && slots <= bracket[1]),
        `${target.endpoint}: ${target.saturation_summary}`,
      )
    }
    // The faster endpoint carried more of the top level's throughput than the 2-slot one.
    const top = (i: number) => targets[i]?.levels.at(-1)?.output_tokens_per_s ?? 0
    assert.ok(top(1) > 2 * top(0), `${top(1)} against ${top(0)} tok/s`)
    // Every measured record says where it went, and `report` rebuilds the same targets from them.
    const loaded = loadRun(out)
    const measured = (loaded.records ?? []).filter((record) => record.phase === 'measure')
    assert.equal(measured.filter((record) => record.target?.endpoint === 1).length, 5 * 24)
    const rebuilt = buildResult(loaded.records ?? [], result.meta, loaded.serverScrapes ?? [])
    assert.deepEqual(
      rebuilt.targets?.map((target) => target.saturation?.value),
      targets.map((target) => target.saturation?.value),
    )
  } finally {
    await small.close()
    await large.close()
  }
})
