// test-lane: long
// (test/run.sh starts the long files first, so the shared lane does not end on one of them)
// wall-clock: the control level is judged against the first on measured timings
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { readRecords } from '../../src/records/jsonl-reader.js'
import { type SimulatorOptions, startSimulator } from '../../src/sim/server.js'
import { runCli } from '../helpers/cli.js'
import { readResult, withSimRun } from '../helpers/sim-run.js'

/**
 * 2 slots, llama.cpp timings, ~60 ms to the first token and 15 ms a token: c=1 and c=2 scale, c=4
 * queues. No preflight, so the simulator's request count is the levels' own: 13 per level (1 warm-up
 * + 12), 39 for the gradient, the control after them.
 */
const SIM: SimulatorOptions = {
  slots: 2,
  prefill_base_ms: 60,
  prefill_ms_per_token: 0,
  decode_base_ms: 15,
  decode_ms_per_seq: 0,
  timings: true,
  prefix_cache: true,
}
const FLAGS = {
  levels: '1,2,4',
  requests: 12,
  warmup: 1,
  'input-tokens': 32,
  'output-tokens': 12,
  'no-preflight': true,
  'no-server-metrics': true,
} as const

function phases(out: string): Map<string, number> {
  const counts = new Map<string, number>()
  for (const record of readRecords(join(out, 'requests.jsonl')).records)
    counts.set(`${record.phase}@${record.level}`, (counts.get(`${record.phase}@${record.level}`) ?? 0) + 1)
  return counts
}

test('a gradient on a steady server: the first level measured again at the end matches (moved false), kept out of its figures', {
  timeout: 220_000,
}, async (t) => {
  // The server is steady, the host under the suite is not: the first level runs as the shared lane
  // starts (tsc, the unit batches, three other long files), the control some seconds later. Once, in
  // a quiet .ci/run, that made c=1's TTFT p50 73.5 ms first and 63.0 ms in the control, a drift the
  // control rightly reported. Such a run is made once more; a control that always moves fails both.
  for (let attempt = 1; attempt <= 2; attempt++)
    if (await steadyRun(attempt === 2, (reason) => t.diagnostic(`run ${attempt}: ${reason}; once more`)))
      return
})

/** One run of the steady gradient, checked; false (nothing more checked) when its control moved and `last` is not set. */
function steadyRun(last: boolean, movedBefore: (reason: string) => void): Promise<boolean> {
  return withSimRun(startSimulator(SIM), { flags: FLAGS, timeoutMs: 100_000 }, async ({ out, run }) => {
    assert.equal(run.code, 0, run.stderr)
    const result = readResult(out)
    const drift = result.drift
    assert.ok(drift !== undefined, 'a control was run')
    if (drift.moved && !last) {
      movedBefore(drift.reason)
      return false
    }
    assert.equal(drift.level, 1)
    // A third of 12 requests is 4: raised to the minimum of 8.
    assert.equal(drift.control.requests, 8)
    assert.equal(drift.first.requests, 12)
    assert.equal(drift.moved, false, drift.reason)
    assert.ok(drift.control.server_decode_ms_per_token !== null, 'the server timings are compared')
    assert.equal(result.saturation?.uncertain, undefined)
    // The control's records are on disk as such and are not in the first level's figures.
    assert.equal(phases(out).get('control@1'), 8)
    assert.equal(result.levels.find((level) => level.value === 1)?.requests, 12)
    // The control sends prompts no level sent (issue 36: it re-sent prompts the server had cached,
    // TTFT 18 ms against 252): the prefix cache is as cold for them as for the first level's.
    const records = readRecords(join(out, 'requests.jsonl')).records
    const control = records.filter((record) => record.phase === 'control')
    const levelIds = new Set(
      records.filter((r) => r.phase === 'measure' || r.phase === 'warmup').map((r) => r.prompt_id),
    )
    assert.deepEqual(
      control.filter((record) => levelIds.has(record.prompt_id)),
      [],
    )
    assert.equal(new Set(control.map((record) => record.prompt_id)).size, control.length, 'none sent twice')
    assert.deepEqual(
      control.map((record) => record.cached_tokens ?? 0),
      control.map(() => 0),
    )
    assert.match(run.stdout, /Control: c=1 measured again at the end matches its first measurement/)
    // `report` rebuilds the same comparison from the records.
    const report = await runCli(['report', out])
    assert.equal(report.code, 0, report.stderr)
    assert.deepEqual(readResult(out).drift, drift)
    return true
  })
}

test('a server that gets 3x slower during the last level: the control moved, the run says the environment drifted', {
  timeout: 120_000,
}, async () => {
  // Requests 27 to 39 are level 4; from the 31st on, every cost is tripled.
  const slowing = startSimulator({ ...SIM, slowdown: { after_requests: 30, factor: 3 } })
  await withSimRun(slowing, { flags: FLAGS, timeoutMs: 100_000, charts: true }, ({ out, run }) => {
    assert.equal(run.code, 0, run.stderr)
    const result = readResult(out)
    const drift = result.drift
    assert.ok(drift !== undefined, 'a control was run')
    assert.equal(drift.moved, true, drift.reason)
    const before = drift.first.server_decode_ms_per_token?.p50 ?? Number.NaN
    const after = drift.control.server_decode_ms_per_token?.p50 ?? Number.NaN
    assert.ok(after > 2.5 * before, `server decode ${before} -> ${after} ms/token`)
    assert.match(drift.reason, /the environment drifted: .*server decode .*\(slower\)/)
    if (result.saturation !== null) assert.equal(result.saturation.uncertain, drift.reason)
    assert.match(run.stdout, /Drift: the environment drifted/)
    assert.match(readFileSync(join(out, 'summary.md'), 'utf8'), /\*\*Drift: the environment drifted/)
    assert.match(readFileSync(join(out, 'report.html'), 'utf8'), /Drift: the environment drifted/)
  })
})

test('--no-control: no control requests and no drift in the result', { timeout: 120_000 }, async () => {
  await withSimRun(
    startSimulator(SIM),
    { flags: { ...FLAGS, levels: '1,2', 'no-control': true }, timeoutMs: 100_000 },
    ({ out, run }) => {
      assert.equal(run.code, 0, run.stderr)
      assert.equal(readResult(out).drift, undefined)
      assert.equal(phases(out).get('control@1'), undefined)
      assert.equal(phases(out).get('measure@1'), 12)
    },
  )
})
