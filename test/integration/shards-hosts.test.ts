// test-lane: long
// (test/run.sh starts the long files first, so the shared lane does not end on one of them)
// wall-clock: the shards release levels on real timers; their starts are held to each one's lateness and the offsets
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import type { BenchResult } from '../../src/result/bench-result.js'
import type { CoordinationReport } from '../../src/run/shard/coordinator-server.js'
import { runCli, simRunArgs } from '../helpers/cli.js'
import { makeHosts, type NsProcess, netnsUnavailable, spawnCliIn, type TestHosts } from '../helpers/netns.js'
import { tempDir } from '../helpers/run-config.js'
import { waitUntil } from '../helpers/wait.js'

/**
 * Shards on hosts of their own: each in a network namespace with its own address, its wall clock
 * shifted by LLMBENCH_TEST_CLOCK_SHIFT_MS (a host whose clock is off), reaching the coordinator and
 * the simulator in a third namespace over veth pairs. All on this machine, so the true clocks are one
 * and the injected shifts are the truth the measured offsets are held to.
 */
const unavailable = netnsUnavailable()

// As shards.test.ts: enough slots that shards do not queue behind each other, and a prefill short
// beside a decode step.
const SIM_FLAGS = [
  '--slots',
  '32',
  '--prefill-base-ms',
  '1',
  '--prefill-ms-per-token',
  '0',
  '--decode-base-ms',
  '10',
  '--decode-ms-per-seq',
  '0',
]
const SIM_PORT = 8000
const COORDINATOR_PORT = 7878

function runArgs(url: string, out: string, requests: number, levels: number[], extra: string[]): string[] {
  // No drift control: not a shard's (merge and the coordinator know each level once).
  return simRunArgs(
    url,
    out,
    {
      levels: levels.join(','),
      requests,
      warmup: 2,
      'input-tokens': 64,
      'output-tokens': 16,
      json: true,
    },
    ['--no-control', ...extra],
  )
}

/** The hub's simulator and coordinator, then one shard per host; everything stopped, and the namespaces removed, however the test ends. */
async function withHosts(
  count: number,
  tag: string,
  body: (hosts: TestHosts, started: NsProcess[]) => Promise<void>,
): Promise<void> {
  const hosts = makeHosts(count, tag)
  const started: NsProcess[] = []
  try {
    await body(hosts, started)
  } catch (error) {
    // What each process said, to read a failure by.
    const said = started.map(
      (one, i) =>
        `--- process ${i} (${one.child.spawnargs.slice(4, 6).join(' ')}):\n${one.stderr().slice(-1200)}`,
    )
    throw new Error(`${String(error)}\n${said.join('\n')}`)
  } finally {
    for (const one of started)
      if (one.child.exitCode === null && one.child.signalCode === null) one.child.kill('SIGKILL')
    await Promise.all(started.map((one) => one.exited))
    hosts.remove()
  }
}

async function startHub(hosts: TestHosts, started: NsProcess[], shards: number): Promise<NsProcess> {
  const sim = spawnCliIn(hosts.hub, ['sim', '--host', '0.0.0.0', '--port', String(SIM_PORT), ...SIM_FLAGS])
  const coordinator = spawnCliIn(hosts.hub, [
    'coordinate',
    '--shards',
    String(shards),
    '--host',
    '0.0.0.0',
    '--port',
    String(COORDINATOR_PORT),
    '--json',
  ])
  started.push(sim, coordinator)
  await waitUntil(() => /listening on/.test(sim.stdout() + sim.stderr()), 'the simulator listening', 30_000)
  await waitUntil(
    () => /coordinator listening on/.test(coordinator.stderr()),
    'the coordinator listening',
    30_000,
  )
  return coordinator
}

function startShard(
  hosts: TestHosts,
  started: NsProcess[],
  index: number,
  count: number,
  shiftMs: number,
  out: string,
  requests: number,
  levels: number[],
): NsProcess {
  const host = hosts.hosts[index] as TestHosts['hosts'][number]
  const shard = spawnCliIn(
    host.ns,
    runArgs(`http://${hosts.hubAddress}:${SIM_PORT}/v1`, out, requests, levels, [
      '--shard',
      `${index}/${count}`,
      '--coordinator',
      `http://${hosts.hubAddress}:${COORDINATOR_PORT}`,
    ]),
    { LLMBENCH_TEST_CLOCK_SHIFT_MS: String(shiftMs) },
  )
  started.push(shard)
  return shard
}

test('four shards on hosts of their own, clocks off by -300, 0, +150 and +900 ms: offsets recovered, levels started together, merged from every shard', {
  timeout: 240_000,
  skip: unavailable ?? false,
}, async (t) => {
  const shifts = [-300, 0, 150, 900]
  const levels = [4, 8]
  const requests = 40
  const dir = tempDir()
  await withHosts(shifts.length, 'a', async (hosts, started) => {
    const coordinator = await startHub(hosts, started, shifts.length)
    const shards = shifts.map((shift, i) =>
      startShard(hosts, started, i, shifts.length, shift, join(dir, `s${i}`), requests, levels),
    )
    // Merged against one client of the same total load is shards.test.ts's question (one host, the
    // single process on the shards' own schedule): here 4 shards, a hub and a coordinator already load
    // 2 cores, and a fifth client beside them measured its own starvation (523 against 751 tok/s at load 10).
    const codes = await Promise.all(shards.map((shard) => shard.exited))
    for (const [i, code] of codes.entries()) assert.equal(code, 0, shards[i]?.stderr())
    assert.equal(await coordinator.exited, 0, coordinator.stderr())
    const report = JSON.parse(coordinator.stdout()) as CoordinationReport
    const results = shards.map((shard) => JSON.parse(shard.stdout()) as BenchResult)

    // Each shard's measured offset (coordinator − shard) recovers its injected shift within its bound.
    const accounts = results.map((result) => result.meta.shard?.coordinator)
    for (const [i, account] of accounts.entries()) {
      assert.ok(account !== undefined, `shard ${i} has its coordinator account`)
      const error = Math.abs(account.offset_ms + (shifts[i] as number))
      t.diagnostic(
        `shard ${i}: shift ${shifts[i]} ms, measured offset ${account.offset_ms} ± ${account.bound_ms} ms (error ${error.toFixed(3)} ms)`,
      )
      assert.ok(
        error <= account.bound_ms + 0.01,
        `shard ${i}: off by ${error} ms, bound ${account.bound_ms} ms`,
      )
    }
    // Each shard releases a level at the instant the coordinator set (start_at_ms), translated to its
    // own clock by its measured offset; how late its timer fired is its own lateness (started − planned,
    // on its clock: a host's scheduling, which this loaded machine decides, not llmbench). What the
    // offsets decide is the rest: on the true clock (the injected shift taken out) the shards started
    // within the spread of their lateness plus what the offsets' bounds allow them to be wrong by.
    const bounds = accounts.map((account) => account?.bound_ms as number).sort((a, b) => b - a)
    const alignment = (bounds[0] as number) + (bounds[1] as number)
    const spread = (list: number[]) => Math.max(...list) - Math.min(...list)
    for (const [position, value] of levels.entries()) {
      const entries = accounts.map((account) => account?.levels[position])
      const said = entries.map((entry) => entry?.started_ms as number)
      const planned = entries.map((entry) => entry?.start_at_ms as number)
      const lateness = said.map((ms, i) => ms - (planned[i] as number))
      const truth = said.map((ms, i) => ms - (accounts[i]?.offset_ms as number) - (shifts[i] as number))
      t.diagnostic(
        `level ${value}: lateness ${lateness.map((ms) => ms.toFixed(1)).join(', ')} ms; started within ${spread(said).toFixed(1)} ms on the coordinator's clock, ${spread(truth).toFixed(1)} ms on the true clock (alignment error ${alignment.toFixed(2)} ms)`,
      )
      assert.equal(report.levels[position]?.complete, true)
      assert.equal(new Set(planned).size, 1, `one planned instant for level ${value}: ${planned}`)
      for (const late of lateness) assert.ok(late >= 0, `a shard released level ${value} early: ${lateness}`)
      // The coordinator's account is the shards' own (rounded to 0.1 ms).
      assert.ok(
        Math.abs((report.levels[position]?.start_spread_ms ?? Number.NaN) - spread(said)) <= 0.2,
        `level ${value}: coordinator says ${report.levels[position]?.start_spread_ms}, shards ${spread(said)}`,
      )
      assert.ok(
        spread(truth) <= spread(lateness) + alignment + 0.2,
        `level ${value}: ${spread(truth)} ms apart on the true clock, lateness spread ${spread(lateness)}, alignment ${alignment}`,
      )
    }

    const merge = await runCli([
      'merge',
      ...shifts.map((_, i) => join(dir, `s${i}`)),
      '--out',
      join(dir, 'merged'),
      '--json',
    ])
    assert.equal(merge.code, 0, merge.stderr)
    const merged = JSON.parse(merge.stdout) as BenchResult
    assert.equal(merged.meta.merged?.time_base, 'coordinator')
    assert.equal(merged.meta.merged?.alignment_error_ms, Math.ceil(alignment * 1000) / 1000)
    // The merge is the shards' records together: every request of every shard, the level's tokens
    // per second over the union of the shards' windows (no more than their sum, no less than one's).
    for (const [position, level] of merged.levels.entries()) {
      const parts = results.map((result) => result.levels[position])
      assert.equal(
        level.requests,
        parts.reduce((sum, part) => sum + (part?.requests ?? 0), 0),
      )
      const rates = parts.map((part) => part?.output_tokens_per_s ?? 0)
      const overlap = merged.meta.merged?.overlap.find((one) => one.level === level.value)
      t.diagnostic(
        `c=${level.value}: merged ${level.output_tokens_per_s} tok/s, shards ${rates.join(', ')}; TTFT p50 ${level.ttft_ms.p50} ms; windows overlap ${((overlap?.ratio ?? 0) * 100).toFixed(0)}%`,
      )
      assert.notEqual(level.verdict, 'interrupted')
      const sum = rates.reduce((a, b) => a + b, 0)
      assert.ok(
        level.output_tokens_per_s <= sum * 1.001 && level.output_tokens_per_s >= Math.max(...rates) * 0.999,
        `c=${level.value}: merged ${level.output_tokens_per_s} tok/s outside [${Math.max(...rates)}, ${sum}]`,
      )
    }
  })
})

test('a shard killed mid-level: the coordinator ends the level, says which shard and when, and the merge never judges that level', {
  timeout: 180_000,
  skip: unavailable ?? false,
}, async () => {
  const levels = [2, 4]
  const dir = tempDir()
  await withHosts(2, 'k', async (hosts, started) => {
    const coordinator = await startHub(hosts, started, 2)
    // Level 4 is long (200 requests, 100 per shard at 2 streams of ~170 ms: ~8 s): it is cut long before its end.
    const shards = [0, 150].map((shift, i) =>
      startShard(hosts, started, i, 2, shift, join(dir, `s${i}`), 200, levels),
    )
    const victim = shards[1] as NsProcess
    // Mid-level: the coordinator has ended level 2 and started level 4, and the victim has sent some of it.
    await waitUntil(() => /level 2 ended/.test(coordinator.stderr()), 'level 2 ended', 120_000)
    const records = join(dir, 's1', 'requests.jsonl')
    await waitUntil(
      () => {
        try {
          return readFileSync(records, 'utf8').includes('"level":4')
        } catch {
          return false
        }
      },
      'shard 1 recording level 4',
      60_000,
    )
    const killedAt = Date.now()
    victim.child.kill('SIGKILL')
    const [coordinatorCode, survivorCode] = await Promise.all([coordinator.exited, shards[0]?.exited])
    assert.equal(coordinatorCode, 6, coordinator.stderr())
    assert.equal(survivorCode, 6, shards[0]?.stderr())
    const report = JSON.parse(coordinator.stdout()) as CoordinationReport
    assert.equal(report.levels[0]?.complete, true)
    const cut = report.levels[1]
    assert.equal(cut?.value, 4)
    assert.equal(cut?.complete, false)
    assert.equal(cut?.incomplete?.shard, 1)
    // Seen when its connection closed: after the kill, and well before a heartbeat would have been missed.
    const seen = cut?.incomplete?.at_ms as number
    assert.ok(seen >= killedAt - 5 && seen - killedAt < 5_000, `lost at ${seen - killedAt} ms after the kill`)
    assert.match(coordinator.stderr(), /shard 1 lost \(its connection closed\) during level 4 at /)
    assert.match(shards[0]?.stderr() ?? '', /coordinated run ended: shard 1 lost/)
    const survivor = JSON.parse(shards[0]?.stdout() ?? '') as BenchResult
    assert.equal(survivor.levels.find((level) => level.value === 4)?.verdict, 'interrupted')
    assert.equal(survivor.meta.shard?.coordinator?.levels[1]?.incomplete?.shard, 1)

    // The merge of both folders (the lost shard's as it was left) shows the level, never judged.
    const merge = await runCli([
      'merge',
      join(dir, 's0'),
      join(dir, 's1'),
      '--out',
      join(dir, 'merged'),
      '--json',
    ])
    assert.equal(merge.code, 0, merge.stderr)
    const merged = JSON.parse(merge.stdout) as BenchResult
    assert.deepEqual(
      merged.meta.merged?.incomplete?.map((one) => [one.level, one.shard, Date.parse(one.at)]),
      [[4, 1, Math.floor(seen)]],
    )
    assert.equal(merged.levels.find((level) => level.value === 4)?.verdict, 'interrupted')
    assert.notEqual(merged.levels.find((level) => level.value === 2)?.verdict, 'interrupted')
    assert.match(merge.stderr, /level 4: incomplete \(shard 1 lost/)
  })
})
