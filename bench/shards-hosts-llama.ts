/**
 * Issue 42's judgement, against the real engine: four shards in network namespaces of their own
 * (clocks shifted −300, 0, +150, +900 ms), the coordinator and llama.cpp (6 slots) in a hub namespace;
 * then one client from the hub with the same levels against the same engine, after the shards. Prints
 * the offsets against the injected shifts, each level's start spread, and merged against single
 * throughput and knee. Needs root, ../shared/engines/llama.cpp and a build (npm run build).
 *
 *   node --import tsx bench/shards-hosts-llama.ts   (SHARDS_BENCH_REQUESTS=96: requests a level, 24 by default)
 *
 * On a machine of few cores the shards' CPU slows the engine (four processes where one client is one):
 * SHARDS_BENCH_ENGINE_CPUS=1 pins llama.cpp to that CPU set (taskset), and running the bench itself
 * under `taskset -c 0` keeps every client (the shards, the coordinator, the single client, which inherit
 * it) off the engine's core. SHARDS_BENCH_SINGLE_STAGGER=1 lets the single client stagger its streams'
 * starts, as a user's run does (by default they start together, as the shards' do).
 */
import { execFileSync } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { BenchResult } from '../src/result/bench-result.js'
import { runCli } from '../test/helpers/cli.js'
import { makeHosts, netnsUnavailable, spawnCliIn } from '../test/helpers/netns.js'

const ENGINE = new URL('../../shared/engines/llama.cpp/start.sh', import.meta.url).pathname
const SHIFTS = [-300, 0, 150, 900]
const PORT = 18642
const LEVELS = '2,4,6,8,12'
const unavailable = netnsUnavailable()
if (unavailable !== null) throw new Error(unavailable)
const dir = mkdtempSync(join(tmpdir(), 'llmbench-42-'))
const hosts = makeHosts(SHIFTS.length, 'L')
let engine: string | null = null
const url = `http://${hosts.hubAddress}:${PORT}/v1`
const flags = (out: string) => [
  'run',
  '--base-url',
  url,
  '--model',
  'm',
  '--workers',
  '1',
  '--out',
  out,
  '--levels',
  LEVELS,
  '--requests',
  process.env.SHARDS_BENCH_REQUESTS ?? '24',
  '--warmup',
  '2',
  '--input-tokens',
  '64',
  '--output-tokens',
  '32',
  '--no-control',
  '--json',
]
try {
  const pinned = process.env.SHARDS_BENCH_ENGINE_CPUS
  const start = [ENGINE, String(PORT), '6', '--host', '0.0.0.0']
  engine = execFileSync(
    'ip',
    ['netns', 'exec', hosts.hub, ...(pinned === undefined ? start : ['taskset', '-c', pinned, ...start])],
    { encoding: 'utf8' },
  ).trim()
  const coordinator = spawnCliIn(hosts.hub, ['coordinate', '--shards', '4', '--host', '0.0.0.0', '--json'])
  while (!/listening on/.test(coordinator.stderr())) await new Promise((r) => setTimeout(r, 100))
  const shards = SHIFTS.map((shift, i) =>
    spawnCliIn(
      (hosts.hosts[i] as { ns: string }).ns,
      [...flags(join(dir, `s${i}`)), '--shard', `${i}/4`, '--coordinator', `http://${hosts.hubAddress}:7878`],
      { LLMBENCH_TEST_CLOCK_SHIFT_MS: String(shift) },
    ),
  )
  const codes = await Promise.all(shards.map((shard) => shard.exited))
  console.log(`shard exits ${codes.join(', ')}; coordinator exit ${await coordinator.exited}`)
  for (const [i, shard] of shards.entries()) {
    const account = (JSON.parse(shard.stdout()) as BenchResult).meta.shard?.coordinator
    console.log(
      `shard ${i}: injected ${SHIFTS[i]} ms, measured offset ${account?.offset_ms} ± ${account?.bound_ms} ms (error ${Math.abs((account?.offset_ms ?? 0) + (SHIFTS[i] as number)).toFixed(3)} ms)`,
    )
  }
  const report = JSON.parse(coordinator.stdout()) as { levels: { value: number; start_spread_ms: number }[] }
  console.log(
    `start spreads (coordinator clock, ms): ${report.levels.map((l) => `${l.value}: ${l.start_spread_ms}`).join(', ')}`,
  )
  const merge = await runCli(
    ['merge', ...SHIFTS.map((_, i) => join(dir, `s${i}`)), '--out', join(dir, 'merged'), '--json'],
    { timeoutMs: 120_000 },
  )
  const merged = JSON.parse(merge.stdout) as BenchResult
  // Its streams start together, as the shards' do (they cannot agree on one stagger spread), unless
  // SHARDS_BENCH_SINGLE_STAGGER=1: then staggered as a user's run is, its streams out of step from the start.
  const stagger = process.env.SHARDS_BENCH_SINGLE_STAGGER === '1' ? [] : ['--no-stagger']
  const single = spawnCliIn(hosts.hub, [...flags(join(dir, 'single')), ...stagger])
  await single.exited
  const whole = JSON.parse(single.stdout()) as BenchResult
  console.log(
    `alignment error ${merged.meta.merged?.alignment_error_ms} ms (${merged.meta.merged?.time_base})`,
  )
  for (const level of merged.levels) {
    const alone = whole.levels.find((one) => one.value === level.value)
    const overlap = merged.meta.merged?.overlap.find((one) => one.level === level.value)
    console.log(
      `c=${level.value}: merged ${level.output_tokens_per_s} tok/s TTFT p50 ${level.ttft_ms.p50} ms (${level.verdict}); single ${alone?.output_tokens_per_s} tok/s TTFT p50 ${alone?.ttft_ms.p50} ms (${alone?.verdict}); overlap ${overlap?.ratio}`,
    )
  }
  console.log(
    `knee: merged ${merged.saturation?.value ?? 'none'}, single ${whole.saturation?.value ?? 'none'}`,
  )
  console.log(`folders: ${dir}`)
} finally {
  if (engine !== null) process.kill(Number(engine))
  hosts.remove()
}
