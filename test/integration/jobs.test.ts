import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { readRecords } from '../../src/records/jsonl-reader.js'
import type { RequestRecord } from '../../src/records/types.js'
import type { BenchResult } from '../../src/result/bench-result.js'
import { RECORDS_FILE } from '../../src/result/folder-layout.js'
import { type RunOutcome, runGradient } from '../../src/run/run-gradient.js'
import { StopSignal } from '../../src/run/stop-signal.js'
import { SIM_MODEL, startSimulator } from '../../src/sim/server.js'
import { tempDir, testConfig } from '../helpers/run-config.js'

/**
 * Agentic jobs end to end: llmbench's workers against the simulator with its prefix cache, synthetic
 * jobs of 3 steps with a fan-out of 2 (a plan, two parallel sub-agents, their join) and tool waits.
 */
test('synthetic jobs on the simulator: the fan-out runs in parallel, the join after both, and the level gets job figures', {
  timeout: 120_000,
}, async () => {
  const sim = await startSimulator({
    slots: 8,
    prefill_base_ms: 5,
    prefill_ms_per_token: 0.5,
    decode_base_ms: 2,
    decode_ms_per_seq: 0,
    prefix_cache: true,
  })
  try {
    const config = testConfig(sim.url, SIM_MODEL, {
      levels: [2],
      requests: 16,
      input_tokens: 60,
      output_tokens: 20,
      out_dir: tempDir(),
    })
    Object.assign(config.workload, { jobs: true, turns: 3, fan_out: 2, tool_wait_s: 0.05, shared_prefix: 64 })
    config.run.workers = 1
    const outcome: RunOutcome = await runGradient({
      config,
      apiKey: null,
      outDir: config.run.out_dir as string,
      log: () => {},
      stop: new StopSignal(),
    })
    assert.equal(outcome.kind, 'done', JSON.stringify(outcome).slice(0, 300))
    const { result } = outcome as Extract<RunOutcome, { kind: 'done' }>
    const records = readRecords(join(config.run.out_dir as string, RECORDS_FILE)).records.filter(
      (r) => r.phase === 'measure',
    )
    // 16 requests of 4-turn jobs over 2 streams: 4 whole jobs.
    const jobs = new Map<string, RequestRecord[]>()
    for (const r of records) jobs.set(r.job as string, [...(jobs.get(r.job as string) ?? []), r])
    assert.equal(jobs.size, 4)
    for (const turns of jobs.values()) {
      const byTurn = new Map(turns.map((r) => [r.turn as number, r]))
      assert.deepEqual([...byTurn.keys()].sort(), [0, 1, 2, 3])
      const [plan, left, right, join_] = [0, 1, 2, 3].map((t) => byTurn.get(t) as RequestRecord) as [
        RequestRecord,
        RequestRecord,
        RequestRecord,
        RequestRecord,
      ]
      assert.deepEqual(
        [plan, left, right, join_].map((r) => r.job_depth),
        [0, 1, 1, 2],
      )
      // The branches start after the plan and its tool wait, and overlap each other.
      assert.ok(left.sent_at >= plan.end_at + (plan.tool_wait_ms as number) - 1)
      assert.ok(
        left.sent_at < right.end_at && right.sent_at < left.end_at,
        'the two branches ran in parallel',
      )
      // The join waits for both branches and the tool waits after them.
      const ready = Math.max(
        left.end_at + (left.tool_wait_ms as number),
        right.end_at + (right.tool_wait_ms as number),
      )
      assert.ok(join_.sent_at >= ready - 1, `join sent at ${join_.sent_at}, ready at ${ready}`)
      // The join carries both branches: its prompt is longer than either branch's.
      assert.ok(
        (join_.input_tokens as number) > Math.max(left.input_tokens as number, right.input_tokens as number),
      )
    }
    const figures = (result as BenchResult).levels[0]?.jobs
    assert.ok(figures !== undefined)
    assert.equal(figures.complete, 4)
    assert.equal(figures.incomplete, 0)
    // With tool waits a job takes longer than its requests alone.
    assert.ok((figures.jct_p50_ms as number) > (figures.jct_without_tools_p50_ms as number))
    assert.deepEqual(
      figures.by_depth.map((d) => [d.depth, d.requests]),
      [
        [0, 4],
        [1, 8],
        [2, 4],
      ],
    )
    // The join finds its trunk and a branch in the cache; the roots only the system prompt.
    assert.ok((figures.by_depth[2]?.cached_share as number) > (figures.by_depth[0]?.cached_share as number))
    const summary = readFileSync(join(config.run.out_dir as string, 'summary.md'), 'utf8')
    assert.match(summary, /Jobs \(completion time/)
    assert.match(summary, /Jobs, per turn depth/)
  } finally {
    await sim.close()
  }
})
