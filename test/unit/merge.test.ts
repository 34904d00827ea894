import assert from 'node:assert/strict'
import { test } from 'node:test'
import { finishResult } from '../../src/result/build-result.js'
import type { LoadedRun } from '../../src/result/load-run.js'
import type { RunMeta } from '../../src/result/run-meta.js'
import { MergeError, mergeShards } from '../../src/run/shard/merge.js'
import { makeRecord } from '../helpers/records.js'

/** A shard's meta: the minimum merge reads, on a process clock whose zero is `origin` (wall ms). */
function shardMeta(index: number, origin: number, digest = 'sha256:same'): RunMeta {
  return {
    tool_version: 'test',
    started_at: new Date(origin).toISOString(),
    finished_at: new Date(origin + 60_000).toISOString(),
    partial: false,
    target: { base_url: 'http://x/v1', endpoint: '/v1/chat/completions', model: 'm' },
    workload: { input_tokens: 10, output_tokens: 5, dataset: 'synthetic', tokenizer: 'o200k', stream: true },
    load: { mode: 'concurrency', levels: [2], warmup_requests: 0 },
    client: {
      timeout_s: 30,
      retry: 0,
      workers: 1,
      architecture: 'a',
      node_version: 'v20',
      cpus: 2,
      host: `host-${index}`,
    },
    percentiles: [50, 99],
    slo: {},
    time_origin_ms: origin,
    levels_run: [{ value: 2, workers: 1, client: { cpu_percent: 10 + index, loops: [] } }],
    shard: {
      index,
      count: 2,
      host: `host-${index}`,
      start_at: null,
      clock_offset_ms: 0,
      config_digest: digest,
    },
  }
}

/** `n` requests of one stream: request i sent at start + 100 i, first token 20 ms later, 5 tokens 10 ms apart. */
function stream(start: number, n: number) {
  return Array.from({ length: n }, (_, i) => {
    const sent = start + 100 * i
    return makeRecord({
      level: 2,
      sent_at: sent,
      token_times: [sent + 20, sent + 30, sent + 40, sent + 50, sent + 60],
    })
  })
}

function run(meta: RunMeta, records: ReturnType<typeof stream>): LoadedRun {
  return {
    dir: `shard-${meta.shard?.index}`,
    resultFile: '',
    result: finishResult([], meta),
    records,
    tornLastLine: false,
  }
}

test('merge puts shards on one clock, sums their own rates, and flags windows that did not overlap', () => {
  // Shard 1's process started 5 s after shard 0's; both sent at wall time origin0 + 1000.
  const together = mergeShards([
    run(shardMeta(0, 1_000_000), stream(1_000, 10)),
    run(shardMeta(1, 1_005_000), stream(-4_000, 10)),
  ])
  const starts = together.records.map((r) => r.sent_at)
  assert.equal(Math.min(...starts), 1_000)
  assert.equal(
    together.records.filter((r) => r.sent_at === 1_000).length,
    2,
    'the same wall time on one clock',
  )
  // Without a coordinator the hosts' clocks are trusted, and the merge says so.
  assert.deepEqual(together.warnings, [
    "the shards ran without a coordinator: their records are aligned by the hosts' wall clocks, whose error is not known",
  ])
  assert.equal(together.result.meta.merged?.time_base, 'wall-clock')
  assert.equal(together.result.meta.merged?.alignment_error_ms, null)
  const level = together.result.levels[0]
  assert.equal(level?.requests, 20)
  // Each shard: 50 tokens over 960 ms (first send to last end) = 52.08 tok/s; the level is the sum.
  assert.equal(level?.output_tokens_per_s, 104.17)
  assert.equal(together.result.meta.merged?.overlap[0]?.ratio, 1)
  assert.equal(together.result.meta.client.workers, 2)
  assert.equal(together.result.meta.levels_run[0]?.client.cpu_percent, 11, 'the busiest shard')
  assert.equal(together.result.meta.shard, undefined)

  // Shard 1 started its level half a window late: windows [1000, 1960] and [1480, 2440] share 480 of
  // 1440 ms; flagged. The rate is still each shard's own.
  const apart = mergeShards([
    run(shardMeta(0, 1_000_000), stream(1_000, 10)),
    run(shardMeta(1, 1_000_000), stream(1_480, 10)),
  ])
  assert.equal(apart.result.meta.merged?.overlap[0]?.ratio, 0.333)
  assert.equal(apart.warnings.length, 2)
  assert.match(apart.warnings[1] ?? '', /level 2: the shards' measured windows overlapped 33%/)
  assert.equal(apart.result.meta.merged?.overlap[0]?.flagged, true)
  assert.equal(apart.result.levels[0]?.output_tokens_per_s, 104.17)
})

test('merge refuses different runs, a missing or repeated shard, and results that are not shards', () => {
  const ok = run(shardMeta(0, 0), stream(0, 2))
  assert.throws(
    () => mergeShards([ok, run(shardMeta(1, 0, 'sha256:other'), stream(0, 2))]),
    /config digests differ/,
  )
  assert.throws(() => mergeShards([ok]), /shard\(s\) 1 of 2 missing/)
  assert.throws(() => mergeShards([ok, ok]), /shard 0 given twice/)
  const { shard: _, ...single } = shardMeta(1, 0)
  assert.throws(() => mergeShards([ok, run(single as RunMeta, stream(0, 2))]), MergeError)
  assert.throws(
    () => mergeShards([ok, { ...run(shardMeta(1, 0), stream(0, 2)), records: null }]),
    /no requests\.jsonl/,
  )
})

/** A coordinated shard: its clock `offset` ms behind the coordinator's (measured within `bound`), level 2 as it went. */
function coordinated(
  meta: RunMeta,
  offset: number,
  bound: number,
  level: { complete: boolean; cut?: { shard: number; at_ms: number } },
): RunMeta {
  const shard = meta.shard as NonNullable<RunMeta['shard']>
  shard.coordinator = {
    url: 'http://coordinator:7878',
    offset_ms: offset,
    bound_ms: bound,
    rtt_ms: 2 * bound,
    levels: [
      {
        level: 0,
        value: 2,
        start_at_ms: 2_000_000,
        started_ms: 2_000_000,
        complete: level.complete,
        incomplete:
          level.cut === undefined
            ? null
            : { ...level.cut, reason: `shard ${level.cut.shard} lost (its connection closed)` },
      },
    ],
    ended: null,
  }
  return meta
}

test('merge aligns coordinated shards by their measured offsets, states the error, and never judges a level cut by a lost shard', () => {
  // Both processes started at the same true time, but shard 1's wall clock reads 900 ms ahead: its
  // origin says 900 ms later. Its measured offset (coordinator − shard = −900) puts it back.
  const aligned = mergeShards([
    run(coordinated(shardMeta(0, 1_000_000), 0, 0.5, { complete: true }), stream(1_000, 10)),
    run(coordinated(shardMeta(1, 1_000_900), -900, 1.25, { complete: true }), stream(1_000, 10)),
  ])
  assert.equal(aligned.result.meta.merged?.time_base, 'coordinator')
  assert.equal(aligned.result.meta.merged?.alignment_error_ms, 1.75, 'the two bounds added')
  assert.equal(aligned.result.meta.merged?.overlap[0]?.ratio, 1)
  assert.deepEqual(aligned.warnings, [])
  assert.deepEqual(
    aligned.result.meta.merged?.shards.map((s) => s.coordinator_offset_ms),
    [0, -900],
  )
  assert.notEqual(aligned.result.levels[0]?.verdict, 'interrupted')
  // Trusting the wall clocks instead, the same records would sit 900 ms apart.
  const trusted = mergeShards([
    run(shardMeta(0, 1_000_000), stream(1_000, 10)),
    run(shardMeta(1, 1_000_900), stream(1_000, 10)),
  ])
  assert.ok((trusted.result.meta.merged?.overlap[0]?.ratio ?? 1) < 0.95)

  // Shard 1 was lost in level 2: the coordinator's account on the surviving shard marks it, and the merge
  // carries it as interrupted (shown, not judged), naming the shard and the time.
  const at = Date.parse('2026-12-06T21:00:00.000Z')
  const cut = mergeShards([
    run(
      coordinated(shardMeta(0, 1_000_000), 0, 0.5, { complete: false, cut: { shard: 1, at_ms: at } }),
      stream(1_000, 10),
    ),
    run(coordinated(shardMeta(1, 1_000_000), 0, 0.5, { complete: true }), stream(1_000, 4)),
  ])
  assert.deepEqual(cut.result.meta.merged?.incomplete, [
    { level: 2, shard: 1, at: '2026-12-06T21:00:00.000Z', reason: 'shard 1 lost (its connection closed)' },
  ])
  assert.equal(cut.result.meta.levels_run[0]?.interrupted, true)
  assert.equal(cut.result.levels[0]?.verdict, 'interrupted')
  assert.match(
    cut.warnings.join('\n'),
    /level 2: incomplete \(shard 1 lost .* at 2026-12-06T21:00:00.000Z\): shown, not judged/,
  )
})
