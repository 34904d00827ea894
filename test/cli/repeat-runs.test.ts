// test-lane: long
import assert from 'node:assert/strict'
import { cpSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import type { Comparison } from '../../src/compare/compare.js'
import { readRecords } from '../../src/records/jsonl-reader.js'
import type { RequestRecord } from '../../src/records/types.js'
import { RECORDS_FILE } from '../../src/result/folder-layout.js'
import { startSimulator } from '../../src/sim/server.js'
import { runCli, simRunArgs } from '../helpers/cli.js'
import { tempDir } from '../helpers/run-config.js'
import { readResult } from '../helpers/sim-run.js'
import { writeVirtualRun } from '../helpers/virtual-run.js'

/**
 * Three levels past the simulator's 4 slots, each run 3 times: at 8 streams half the requests wait.
 * Decode 8 ms a step plus 1 ms a sequence; the slow server doubles both. The run on real timers is
 * checked for what it does (the order, the pooling, the files); where each run's knee lies, and what
 * compare makes of repeated runs, is checked on runs of the same server in virtual time, since a
 * loaded host moves a knee measured on its timers (CI at load 20: no knee in one run of three).
 */
const RUNS = 3
const REQUESTS = 12
const FLAGS = {
  levels: '1,4,8',
  requests: REQUESTS,
  warmup: 1,
  'output-tokens': 16,
  'input-tokens': 32,
  repeat: RUNS,
  'no-calibrate': true,
  quiet: true,
} as const
const SIM = {
  slots: 4,
  prefill_base_ms: 10,
  prefill_ms_per_token: 0,
  decode_base_ms: 8,
  decode_ms_per_seq: 1,
}
const SLOW = { ...SIM, decode_base_ms: 16, decode_ms_per_seq: 2 }

/** The measured records' runs in the order they were sent: "level/repeat" for each run, first send first. */
function runOrder(records: readonly RequestRecord[]): string[] {
  const first = new Map<string, number>()
  for (const record of records) {
    if (record.phase !== 'measure') continue
    const key = `${record.level}/${record.repeat}`
    first.set(key, Math.min(first.get(key) ?? Number.POSITIVE_INFINITY, record.sent_at))
  }
  return [...first.entries()].sort(([, a], [, b]) => a - b).map(([key]) => key)
}

test('--repeat 3 on the simulator: each level run 3 times back to back, the runs pooled per level, each run knee at 4; compare judges repeated runs on the spread between them: A/A passes, a 2× slower decode is a regression', {
  timeout: 600_000,
}, async () => {
  const dir = tempDir()
  const first = join(dir, 'first')
  const sim = await startSimulator(SIM)
  try {
    const made = await runCli(simRunArgs(sim.url, first, FLAGS), { timeoutMs: 150_000, charts: true })
    assert.equal(made.code, 0, made.stderr)
  } finally {
    await sim.close()
  }

  // The records: every measured one carries its run, each run of a level has its requests, and a
  // level's runs follow each other before the next level starts (interleaved by level), none overlapping.
  const records = readRecords(join(first, RECORDS_FILE)).records
  const measured = records.filter((record) => record.phase === 'measure')
  assert.ok(
    measured.every((record) => record.repeat !== undefined && record.repeat >= 0 && record.repeat < RUNS),
  )
  assert.ok(
    records
      .filter((r) => r.phase === 'preflight' || r.phase === 'control')
      .every((r) => r.repeat === undefined),
    'probes and the control belong to no run',
  )
  const order = runOrder(records)
  assert.deepEqual(order, ['1/0', '1/1', '1/2', '4/0', '4/1', '4/2', '8/0', '8/1', '8/2'])
  for (const key of order) {
    const [level, repeat] = key.split('/').map(Number)
    const run = measured.filter((r) => r.level === level && r.repeat === repeat)
    assert.equal(run.length, REQUESTS, key)
    const next = order[order.indexOf(key) + 1]
    if (next === undefined) continue
    const [nextLevel, nextRepeat] = next.split('/').map(Number)
    const nextStart = Math.min(
      ...records.filter((r) => r.level === nextLevel && r.repeat === nextRepeat).map((r) => r.sent_at),
    )
    assert.ok(Math.max(...run.map((r) => r.end_at)) <= nextStart, `run ${key} ended before ${next} began`)
  }

  // The result: one entry per level pooling its runs, and result.repeats beside it.
  const result = readResult(first)
  assert.equal(result.meta.load.repeat, RUNS)
  assert.deepEqual(
    result.levels.map((level) => [level.value, level.requests]),
    [
      [1, RUNS * REQUESTS],
      [4, RUNS * REQUESTS],
      [8, RUNS * REQUESTS],
    ],
  )
  const repeats = result.repeats
  assert.ok(repeats !== undefined)
  assert.equal(repeats.count, RUNS)
  assert.equal(repeats.order, 'interleaved')
  for (const level of repeats.levels) {
    assert.deepEqual(
      level.runs.map((run) => [run.repeat, run.requests]),
      [0, 1, 2].map((repeat) => [repeat, REQUESTS]),
    )
    const between = level.between.output_tokens_per_s
    assert.ok(
      between !== null &&
        between.runs === RUNS &&
        between.low <= between.mean &&
        between.mean <= between.high,
    )
    // The level's throughput is the mean over its runs, not the pooled records over their span.
    const pooled = result.levels.find((l) => l.value === level.value)?.output_tokens_per_s as number
    assert.ok(Math.abs(pooled - between.mean) < 0.02, `${pooled} vs ${between.mean}`)
  }
  assert.equal(repeats.knees.length, RUNS)
  assert.deepEqual(
    repeats.knees.map((knee) => knee.repeat),
    [0, 1, 2],
  )
  assert.equal(
    repeats.knee_distribution.map((entry) => entry.runs).reduce((a, b) => a + b),
    RUNS,
  )
  const summary = readFileSync(join(first, 'summary.md'), 'utf8')
  assert.ok(summary.includes(`\nAcross 3 runs: ${repeats.knee_summary}\n`), summary)
  assert.match(summary, /^\*\*Between runs \(3 runs, .*\n\n\| level \| runs \| tok\/s: mean ± SD/m)
  const html = readFileSync(join(first, 'report.html'), 'utf8')
  assert.ok(html.includes(`Across 3 runs: ${repeats.knee_summary}`))
  assert.match(html, /<h2>Between runs \(3 runs[^<]*<\/h2><table class="repeats">/)
  // `report` rebuilds the same repeats from requests.jsonl (in a copy of the folder, as a user would
  // keep the run's own). The compares judge repeated runs made in virtual time
  // (test/helpers/virtual-run.ts: the same server and lengths, 3 runs a level, 5% noise on every
  // step, a seed per run), so what they are shown is the same on any machine: an A/A pair, and the
  // slow server. The report and the compares are independent processes, started together.
  const copy = join(dir, 'rebuilt')
  cpSync(first, copy, { recursive: true })
  const virtual = { levels: [1, 4, 8], requests: REQUESTS, inputTokens: 32, outputTokens: 16, repeat: RUNS }
  const [base, second, slow] = ['base', 'second', 'slow'].map((name) => join(dir, name)) as [
    string,
    string,
    string,
  ]
  // Each virtual run's knee at 4: the server's 4 slots, whatever the noise.
  const baseRepeats = writeVirtualRun(base, { ...virtual, sim: SIM, seed: 1 }).repeats
  assert.deepEqual(baseRepeats?.knee_distribution, [{ value: 4, runs: RUNS }], JSON.stringify(baseRepeats))
  assert.equal(baseRepeats?.knee_summary, `knee 4 in ${RUNS} of ${RUNS} runs`)
  writeVirtualRun(second, { ...virtual, sim: SIM, seed: 2 })
  writeVirtualRun(slow, { ...virtual, sim: SLOW, seed: 3 })
  const [rebuilt, forward, backward, slower, markdown] = await Promise.all([
    runCli(['report', copy]),
    runCli(['compare', base, second, '--json']),
    runCli(['compare', second, base, '--json']),
    runCli(['compare', base, slow, '--json', '--strict-client']),
    runCli(['compare', base, slow, '--strict-client']),
  ])
  assert.equal(rebuilt.code, 0, rebuilt.stderr)
  assert.deepEqual(readResult(copy).repeats?.knees, repeats.knees)

  // A/A in both orders: judged between runs, no regression, nothing left open.
  for (const compared of [forward, backward]) {
    const comparison = JSON.parse(compared.stdout) as Comparison
    assert.deepEqual(comparison.basis, { kind: 'between-run', runs: { base: RUNS, new: RUNS } })
    assert.deepEqual(comparison.regressions, [], compared.stdout)
    assert.equal(compared.code, 0, compared.stdout)
  }
  // Decode twice as slow: TPOT p50 is a regression at every level, on the between-run basis.
  assert.equal(slower.code, 1, slower.stdout)
  const comparison = JSON.parse(slower.stdout) as Comparison
  const named = comparison.regressions.map((r) => `c=${r.value} ${r.metric}`)
  for (const level of [1, 4, 8]) assert.ok(named.includes(`c=${level} tpot_p50`), named.join(', '))
  assert.match(markdown.stdout, /^Basis: between-run variance: both runs repeated each level \(3 and 3 runs/m)
  assert.match(
    markdown.stdout,
    /^Knee over the runs: base knee 4 in 3 of 3 runs → new .* \(shown, not gated\)\.$/m,
  )
})

test('--repeat refuses what it cannot interleave: --refine (exit 2, naming both) and --shard', {
  timeout: 60_000,
}, async () => {
  const out = join(tempDir(), 'never')
  const [refine, shard] = await Promise.all([
    runCli(simRunArgs('http://127.0.0.1:9/v1', out, { repeat: 2, refine: true }), { inProcess: true }),
    runCli(simRunArgs('http://127.0.0.1:9/v1', out, { repeat: 2, shard: '0/2' }), { inProcess: true }),
  ])
  assert.equal(refine.code, 2, refine.stderr)
  assert.match(refine.stderr, /repeat or refine, not both/)
  assert.equal(shard.code, 2, shard.stderr)
  assert.match(shard.stderr, /--repeat 2 cannot be combined with --shard/)
})
