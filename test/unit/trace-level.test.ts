import assert from 'node:assert/strict'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { setupMismatches } from '../../src/compare/compare.js'
import { DEFAULTS, loadRunConfig } from '../../src/config/load.js'
import type { RunConfig } from '../../src/config/types.js'
import { loadRun } from '../../src/result/load-run.js'
import { estimateRun } from '../../src/run/plan/estimate.js'
import { levelValues, planLevel } from '../../src/run/plan/level-plan.js'
import { planTraceWorkload, WARMUP_MARK } from '../../src/run/plan/trace-plan.js'
import { type LevelShare, shareOf } from '../../src/schedule/level-share.js'
import { ExactPromptSource } from '../../src/workload/exact-prompts.js'
import { loadTokenizer } from '../../src/workload/tokenizers.js'
import { loadTraceReplay } from '../../src/workload/trace-replay.js'

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

const MOONCAKE = fileURLToPath(
  new URL('../fixtures/trace-replay/mooncake-fast25-conversation.head30.jsonl', import.meta.url),
)

test("a trace's warm-up prompts: after the rows, of the rows' lengths, sharing no leading token with any row", () => {
  const replay = loadTraceReplay(MOONCAKE, { start_s: 0, duration_s: null, max_requests: null }, [1])
  const tokenizer = loadTokenizer('o200k')
  const sources = { body: { model: 'm', endpoint: '/v1/completions', stream: true }, tokenizer }
  const without = planTraceWorkload(replay, { ...sources, prompts: new ExactPromptSource(tokenizer) })
  const plan = planTraceWorkload(replay, { ...sources, prompts: new ExactPromptSource(tokenizer) }, 5)
  const rows = replay.rows.length
  assert.equal(plan.prompts.length, rows + 5)
  assert.deepEqual(plan.warmup_prompts, { first: rows, count: 5 })
  assert.equal(without.warmup_prompts, undefined)
  // The rows' bodies and means are the same with or without a warm-up.
  assert.deepEqual(plan.prompts.slice(0, rows), without.prompts)
  assert.equal(plan.input_mean, without.input_mean)
  const text = (body: Buffer): string => (JSON.parse(body.toString()) as { prompt: string }).prompt
  const rowIds = plan.prompts.slice(0, rows).map((p) => tokenizer.encode(text(p.body)))
  for (const [k, warm] of plan.prompts.slice(rows).entries()) {
    const row = replay.rows[k] as (typeof replay.rows)[number]
    const ids = tokenizer.encode(text(warm.body))
    assert.ok(text(warm.body).startsWith(WARMUP_MARK))
    assert.equal(warm.output_tokens, row.output_tokens)
    assert.ok(
      Math.abs(ids.length - row.input_tokens) <= 2,
      `warm-up ${k}: ${ids.length} tokens for ${row.input_tokens}`,
    )
    // Not one leading token in common with any measured prompt: no cache block to find.
    for (const measured of rowIds) assert.notEqual(ids[0], measured[0])
  }
})

test('a trace level with warm-up requests points its warm-up at the prompts after the rows', () => {
  const config = traceConfig([1])
  config.load.warmup_requests = 3
  const level = planLevel(config, 1, { index: 0, count: 1 }, OFFSETS)
  assert.deepEqual(level?.warmupPrompts, { first: OFFSETS.length, count: 3 })
  assert.deepEqual(shareOf(level as LevelShare, 1, 2).warmupPrompts, level?.warmupPrompts)
  config.load.warmup_requests = 0
  assert.equal(planLevel(config, 1, { index: 0, count: 1 }, OFFSETS)?.warmupPrompts, undefined)
})
