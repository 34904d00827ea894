// test-lane: long
// (test/run.sh starts the long files first, so the shared lane does not end on one of them)
// wall-clock: merged shards match one process in throughput and TTFT, measured on real timers
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { test } from 'node:test'
import { summarizeSamples } from '../../src/metrics/distribution.js'
import { readRecords } from '../../src/records/jsonl-reader.js'
import type { BenchResult } from '../../src/result/bench-result.js'
import { startSimulator } from '../../src/sim/server.js'
import { runCli, simRunArgs } from '../helpers/cli.js'
import { tempDir } from '../helpers/run-config.js'
import { startSimulatorProcess } from '../helpers/sim-process.js'
import { withSimRun } from '../helpers/sim-run.js'

const LEVELS = [2, 4]
const REQUESTS = 40

function runArgs(url: string, out: string, extra: string[] = []): string[] {
  const flags = {
    levels: LEVELS.join(','),
    requests: REQUESTS,
    warmup: 2,
    'input-tokens': 64,
  }
  // No drift control: merging is the subject, and the control would be a level more of each run's time.
  return simRunArgs(url, out, { ...flags, 'output-tokens': 16, json: true }, ['--no-control', ...extra])
}

test('two shard processes started together, merged, match one process running the same load', {
  timeout: 180_000,
}, async (t) => {
  // Enough slots that two shards of a level do not queue behind each other more than one run would.
  // A prefill short beside a decode step: prompts admitted in the same step share their prefill (the
  // simulator's convoy), and whether two shard processes release their streams within one step of each
  // other is timing; with a 1 ms prefill (no per-token part: 64 tokens at the default 0.05 ms made it
  // 5.2 ms, and four sharing a step against two gave TTFT p50 22.9 against 12.7 ms in CI) that changes
  // TTFT by a few ms, not 2x, and the merge is what is tested.
  const params = {
    slots: 32,
    prefill_base_ms: 1,
    prefill_ms_per_token: 0,
    decode_base_ms: 10,
    decode_ms_per_seq: 0,
  }
  // The shards load one simulator; the single process another of the same parameters, on the same
  // schedule: the three processes start together and run each level in the same window, on the same
  // host, so single and merged see the same machine (and the single run costs no time of its own).
  const [sim, simAlone] = await Promise.all([startSimulatorProcess(params), startSimulatorProcess(params)])
  const dir = tempDir()
  try {
    // Time for the processes to start, preflight and calibrate before it on a busy CI host: with 4 s one
    // shard reached its first level 1.2 s late there (overlap 43%; the run logs such a late start),
    // and with 10 s one was 0.85 s late at a load of 15 (overlap 58%). The wait is idle time.
    const startAt = new Date(Date.now() + 20_000).toISOString()
    const schedule = ['--start-at', startAt, '--level-span', '5']
    // A shard of another run (other lengths, so another config digest), for merge to refuse below: it
    // runs against a simulator of its own while the three wait for start_at, in time that is idle anyway.
    const otherRun = withSimRun(
      startSimulator(params),
      {
        flags: {
          levels: LEVELS.join(','),
          requests: 4,
          warmup: 2,
          'input-tokens': 64,
          'output-tokens': 8,
        },
        extra: ['--shard', '1/2'],
        timeoutMs: 60_000,
        folder: 'other',
      },
      ({ out, run }) => ({ out, run }),
    )
    // Shards start their streams together (they cannot agree on one stagger spread): so does the
    // single process here, or the simulator's shared prefill would tell the two apart.
    const [single, first, second, other] = await Promise.all([
      runCli(runArgs(simAlone.url, join(dir, 'single'), ['--no-stagger', ...schedule]), {
        timeoutMs: 120_000,
      }),
      runCli(runArgs(sim.url, join(dir, 's0'), ['--shard', '0/2', ...schedule]), { timeoutMs: 120_000 }),
      // The second shard takes its identity from Kubernetes' Indexed Job variables.
      runCli(runArgs(sim.url, join(dir, 's1'), schedule), {
        timeoutMs: 120_000,
        env: { JOB_COMPLETION_INDEX: '1', JOB_COMPLETIONS: '2' },
      }),
      otherRun,
    ])
    assert.equal(single.code, 0, single.stderr)
    const whole = JSON.parse(single.stdout) as BenchResult
    assert.equal(first.code, 0, first.stderr)
    assert.equal(second.code, 0, second.stderr)
    const shard0 = JSON.parse(first.stdout) as BenchResult
    const shard1 = JSON.parse(second.stdout) as BenchResult
    assert.deepEqual([shard0.meta.shard?.index, shard1.meta.shard?.index], [0, 1])
    assert.equal(shard0.meta.shard?.count, 2)
    assert.equal(shard0.meta.shard?.config_digest, shard1.meta.shard?.config_digest)
    assert.equal(typeof shard0.meta.shard?.clock_offset_ms, 'number', 'estimated from the server Date header')
    assert.equal(shard0.meta.shard?.start_at, startAt)
    // Each shard ran half of every level: 1 + 1 and 2 + 2 streams, 20 + 20 requests.
    for (const shard of [shard0, shard1]) {
      assert.deepEqual(
        shard.levels.map((l) => l.requests),
        [20, 20],
      )
      // Its achieved concurrency is judged against its own share of the streams, not the level's.
      assert.deepEqual(
        shard.levels.map((l) => l.achieved_concurrency.streams),
        [1, 2],
      )
      for (const level of shard.levels) assert.ok(level.achieved_concurrency.max <= level.value / 2)
    }

    // The merge, its report and the refusals are independent processes: started together, they cost
    // the longest of them, not the sum.
    const [merge, again, missing, twice, mismatch, notShard] = await Promise.all([
      runCli(['merge', join(dir, 's0'), join(dir, 's1'), '--out', join(dir, 'merged'), '--json']).then(
        async (merge) => [merge, await runCli(['report', join(dir, 'merged'), '--json'])] as const,
      ),
      // Refusals: a missing shard, a shard twice, a shard of another run, a folder that is not a shard.
      runCli(['merge', join(dir, 's0'), '--out', join(dir, 'm2')]),
      runCli(['merge', join(dir, 's0'), join(dir, 's0'), '--out', join(dir, 'm3')]),
      runCli(['merge', join(dir, 's0'), other.out, '--out', join(dir, 'm4')]),
      runCli(['merge', join(dir, 'single'), join(dir, 's1'), '--out', join(dir, 'm5')]),
    ]).then(([[merge, again], ...refusals]) => [merge, again, ...refusals] as const)
    assert.equal(merge.code, 0, merge.stderr)
    const merged = JSON.parse(merge.stdout) as BenchResult
    assert.deepEqual(
      merged.levels.map((l) => l.value),
      LEVELS,
    )
    assert.deepEqual(
      merged.levels.map((l) => l.requests),
      whole.levels.map((l) => l.requests),
    )
    assert.equal(merged.meta.merged?.shards.length, 2)
    assert.deepEqual(
      merged.levels.map((l) => l.achieved_concurrency.streams),
      LEVELS,
    )
    const records = readRecords(join(dir, 'merged', 'requests.jsonl')).records
    assert.equal(
      records.length,
      readRecords(join(dir, 's0', 'requests.jsonl')).records.length +
        readRecords(join(dir, 's1', 'requests.jsonl')).records.length,
    )
    for (const level of merged.levels) {
      // Exact: the merged percentiles are those of the concatenated records, not averages of the shards'.
      const measured = records.filter((r) => r.phase === 'measure' && r.level === level.value)
      const ttft = summarizeSamples(
        measured.map((r) => (r.first_token_at as number) - r.sent_at),
        merged.meta.percentiles,
      )
      assert.deepEqual(level.ttft_ms, ttft)
      assert.deepEqual(new Set(measured.map((r) => r.shard)), new Set([0, 1]))
      // Throughput: the sum of each shard's own rate.
      const own = [shard0, shard1].map(
        (s) => s.levels.find((l) => l.value === level.value)?.output_tokens_per_s ?? 0,
      )
      assert.ok(Math.abs(level.output_tokens_per_s - (own[0] as number) - (own[1] as number)) < 0.05)
      const single = whole.levels.find((l) => l.value === level.value)
      assert.ok(single !== undefined)
      // Same load, same server: within the noise of a shared 2-core machine.
      const ratio = level.output_tokens_per_s / single.output_tokens_per_s
      assert.ok(
        ratio > 0.75 && ratio < 1.33,
        `c=${level.value}: merged ${level.output_tokens_per_s} vs single ${single.output_tokens_per_s} tok/s`,
      )
      t.diagnostic(
        `c=${level.value}: merged ${level.output_tokens_per_s} tok/s, TTFT p50 ${level.ttft_ms.p50} ms; ` +
          `single ${single.output_tokens_per_s} tok/s, TTFT p50 ${single.ttft_ms.p50} ms`,
      )
      // TTFT is 3-5 ms here on a quiet host; on a busy one a single process running all the streams
      // added 5 ms (8.1 against 3.1 in a run beside CI): within 8 ms, or 40% where it is larger. (The
      // test's first form, a ratio of 0.7-1.5 on TTFTs of 12-25 ms, allowed as much.)
      const mergedP50 = level.ttft_ms.p50 as number
      const alone = single.ttft_ms.p50 as number
      assert.ok(
        Math.abs(mergedP50 - alone) <= Math.max(8, 0.4 * alone),
        `c=${level.value}: TTFT p50 merged ${level.ttft_ms.p50} vs single ${single.ttft_ms.p50}`,
      )
    }
    // Started together at start_at: the first level's windows overlap closely. Later levels end by
    // count in each shard, so a shard slowed by a busy host starts its next level later (665 ms of a
    // 1.7 s level seen in CI: 44%): they still run at the same time, which is what merging needs.
    for (const [index, overlap] of (merged.meta.merged?.overlap ?? []).entries()) {
      t.diagnostic(`c=${overlap.level}: shard windows overlap ${(overlap.ratio * 100).toFixed(0)}%`)
      assert.ok(
        overlap.ratio > (index === 0 ? 0.6 : 0.2),
        `${JSON.stringify(overlap)}; shard 0: ${waitLine(first.stderr)}; shard 1: ${waitLine(second.stderr)}`,
      )
    }

    // `report` on the merged folder recomputes the same figures from its records.
    assert.equal(again.code, 0, again.stderr)
    const reported = JSON.parse(again.stdout) as BenchResult
    assert.deepEqual(
      reported.levels.map((l) => [l.ttft_ms, l.output_tokens_per_s, l.requests]),
      merged.levels.map((l) => [l.ttft_ms, l.output_tokens_per_s, l.requests]),
    )

    // Refusals: a missing shard, a shard twice, a shard of another run, a folder that is not a shard.
    assert.equal(missing.code, 2)
    assert.match(missing.stderr, /shard\(s\) 1 of 2 missing/)
    assert.equal(twice.code, 2)
    assert.match(twice.stderr, /shard 0 given twice/)
    assert.equal(other.run.code, 0, other.run.stderr)
    assert.equal(mismatch.code, 2)
    assert.match(mismatch.stderr, /different runs \(config digests differ\)/)
    assert.match(mismatch.stderr, /sha256:[0-9a-f]{32}/)
    assert.equal(notShard.code, 2)
    assert.match(notShard.stderr, /not a shard/)
  } finally {
    await Promise.all([sim.close(), simAlone.close()])
  }
})

/** What a shard said of its scheduled start: that it waited for it, or that it came late. */
function waitLine(stderr: string): string {
  return stderr.split('\n').find((line) => /scheduled (start|time)/.test(line)) ?? 'nothing of its start'
}
