import assert from 'node:assert/strict'
import { join } from 'node:path'
import { test } from 'node:test'
import type { BenchResult } from '../../src/result/bench-result.js'
import { buildResult } from '../../src/result/build-result.js'
import { loadRun } from '../../src/result/load-run.js'
import { SIM_MODEL, startSimulator } from '../../src/sim/server.js'
import { tempDir, testConfig } from '../helpers/run-config.js'
import { runToResult } from '../helpers/run-result.js'
import { writeVirtualRun } from '../helpers/virtual-run.js'

/**
 * Two endpoints of different capacity behind one run: simulators of 2 and 6 slots whose requests
 * take 30 ms to the first token and 16 tokens of 10 ms whatever the batch, so each one's throughput
 * grows exactly up to its slots and not past them. The run's levels 2–16 give each endpoint half
 * the streams (1–8): each must get its own knee at its own slots, from its own records.
 *
 * Where each knee lies is judged on the run made in virtual time (test/helpers/virtual-run.ts: the
 * simulators' engines on one clock, the level split as the run splits it), by the same buildResult
 * as `run` and `report`. The live run against two simulators is checked for what it does: the split,
 * the records' endpoints, and `report` rebuilding the same targets.
 */
const FLAT = { prefill_base_ms: 30, prefill_ms_per_token: 0, decode_base_ms: 10, decode_ms_per_seq: 0 }

/** The split of a run: each endpoint's loads and requests per level. */
function assertSplit(result: BenchResult, loads: number[], requests: number): void {
  const targets = result.targets ?? []
  assert.equal(targets.length, 2)
  assert.deepEqual(
    targets[0]?.levels.map((level) => level.load),
    loads,
    'each endpoint holds half the streams of every level',
  )
  assert.deepEqual(
    targets.map((target) => target.levels.map((level) => level.requests)),
    targets.map(() => loads.map(() => requests)),
  )
}

/** Every measured record says where it went, and `report` rebuilds the same targets from them. */
function assertRebuilt(out: string, result: BenchResult, perEndpoint: number): void {
  const loaded = loadRun(out)
  const measured = (loaded.records ?? []).filter((record) => record.phase === 'measure')
  assert.equal(measured.filter((record) => record.target?.endpoint === 1).length, perEndpoint)
  const rebuilt = buildResult(loaded.records ?? [], result.meta, loaded.serverScrapes ?? [])
  assert.deepEqual(
    rebuilt.targets?.map((target) => target.saturation?.value),
    result.targets?.map((target) => target.saturation?.value),
  )
}

test('two endpoints of 2 and 6 slots get their own knees, at 2 and 6 streams, in one run', () => {
  const out = join(tempDir('run-split-'), 'run')
  const result = writeVirtualRun(out, {
    sim: { slots: 2, ...FLAT },
    moreEndpoints: [{ slots: 6, ...FLAT }],
    levels: [2, 4, 8, 12, 16],
    requests: 48,
    inputTokens: 32,
    outputTokens: 16,
    seed: 1,
    stagger: true,
  })
  assertSplit(result, [1, 2, 4, 6, 8], 24)
  const targets = result.targets ?? []
  for (const [target, slots] of [
    [targets[0], 2],
    [targets[1], 6],
  ] as const) {
    const knee = target?.saturation
    assert.ok(knee != null, target?.saturation_summary)
    const bracket = knee.bracket ?? [knee.value, knee.value]
    assert.ok(
      knee.value === slots || (bracket[0] <= slots && slots <= bracket[1]),
      `${target?.endpoint}: ${target?.saturation_summary}`,
    )
  }
  // The faster endpoint carried more of the top level's throughput than the 2-slot one.
  const top = (i: number) => targets[i]?.levels.at(-1)?.output_tokens_per_s ?? 0
  assert.ok(top(1) > 2 * top(0), `${top(1)} against ${top(0)} tok/s`)
  assertRebuilt(out, result, 5 * 24)
})

test('a live run over two simulators splits every level between them and records where each request went', {
  timeout: 60_000,
}, async () => {
  const small = await startSimulator({ slots: 2, ...FLAT })
  const large = await startSimulator({ slots: 6, ...FLAT })
  const out = tempDir()
  try {
    const config = testConfig(small.url, SIM_MODEL, {
      levels: [2, 4],
      requests: 8,
      output_tokens: 4,
      out_dir: out,
    })
    config.target.more_base_urls = [large.url]
    const result = await runToResult(config, out)
    assertSplit(result, [1, 2], 4)
    assertRebuilt(out, result, 2 * 4)
  } finally {
    await small.close()
    await large.close()
  }
})
