import assert from 'node:assert/strict'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { setupMismatches } from '../../src/compare/compare.js'
import { DEFAULTS, loadRunConfig } from '../../src/config/load.js'
import type { RunConfig } from '../../src/config/types.js'
import { loadRun } from '../../src/result/load-run.js'
import { estimateRun } from '../../src/run/estimate.js'
import { levelValues, planLevel } from '../../src/run/level-plan.js'
import { type LevelShare, shareOf } from '../../src/schedule/level-share.js'

/** Trace offsets at speed 1 (ms), out of step with any round-robin pattern on purpose. */
const OFFSETS = Float64Array.from([0, 0, 0, 3000, 3000, 5999, 9000, 9000, 9001, 12_500, 13_000])

function traceConfig(speeds: number[]): RunConfig {
  const config = structuredClone(DEFAULTS) as RunConfig
  config.workload.trace = 'trace.jsonl'
  config.workload.trace_speeds = speeds
  config.load.mode = 'request_rate'
  return config
}

test('a trace level: row i at offset_i / speed, sending prompt i, however shards and threads divide it', () => {
  const config = traceConfig([1, 4])
  assert.deepEqual(levelValues(config), [1, 4])
  for (const shards of [1, 2, 3]) {
    const seen: [number, number][] = []
    for (let shard = 0; shard < shards; shard++) {
      const level = planLevel(config, 4, { index: shard, count: shards }, OFFSETS)
      if (level === null) continue
      assert.equal(level.window, null, 'a trace level is its rows, not a timed window')
      for (let thread = 0; thread < 2; thread++) {
        const load: LevelShare['load'] = shareOf(level, thread, 2).load
        assert.equal(load.kind, 'open')
        if (load.kind !== 'open') continue
        assert.equal(load.promptIds?.length, load.offsets.length)
        for (let i = 0; i < load.offsets.length; i++)
          seen.push([load.promptIds?.[i] as number, load.offsets[i] as number])
      }
    }
    seen.sort((a, b) => a[0] - b[0])
    assert.deepEqual(
      seen,
      Array.from(OFFSETS, (offset, row) => [row, offset / 4]),
      `${shards} shard(s)`,
    )
  }
})

test('--trace makes the run an open loop with one level per speed; the plan counts rows × speeds', () => {
  const config = loadRunConfig({
    configFiles: [],
    flags: {
      base_url: 'http://127.0.0.1:1',
      model: 'm',
      trace: 't.csv',
      trace_speed: [1, 2, 4],
      trace_max_requests: 50,
    },
  })
  assert.equal(config.load.mode, 'request_rate')
  assert.deepEqual(levelValues(config), [1, 2, 4])
  assert.equal(config.workload.trace_max_requests, 50)
  const estimate = estimateRun(config, {
    input_mean: 100,
    output_mean: 10,
    request_seconds: null,
    share: 1,
    trace_rows: 50,
  })
  assert.equal(estimate?.requests, 3 * 50 + 3 * config.load.warmup_requests)
  assert.throws(
    () =>
      loadRunConfig({
        configFiles: [],
        flags: { base_url: 'http://x', model: 'm', trace: 't', trace_speed: [0] },
      }),
    /trace-speed/,
  )
})

test('compare: two replays of different windows of a trace are a set-up difference', () => {
  const meta = loadRun(fileURLToPath(new URL('../fixtures/result-v1/rate/', import.meta.url))).result.meta
  const trace = {
    file: 'mooncake.jsonl',
    format: 'mooncake' as const,
    rows_in_file: 30,
    rows_used: 30,
    skipped: null,
    window: { start_s: 0, duration_s: null, max_requests: null },
    span_s: 9,
    speeds: [1],
  }
  const a = { ...meta, trace }
  assert.deepEqual(setupMismatches(a, { ...meta, trace: { ...trace, speeds: [2] } }), [])
  const later = { ...trace, rows_used: 17, window: { ...trace.window, start_s: 3 } }
  assert.deepEqual(
    setupMismatches(a, { ...meta, trace: later }).map((line) => line.split(':')[0]),
    ['trace replayed'],
  )
})
