import assert from 'node:assert/strict'
import { copyFileSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import type { BenchResult } from '../../src/result/bench-result.js'
import { buildResult } from '../../src/result/build-result.js'
import { loadRun } from '../../src/result/load-run.js'
import { runCli } from '../helpers/cli.js'
import { tempDir } from '../helpers/run-config.js'

/** Result folders written when some percentiles were spelt unit first, `ttft_ms_p50` (see the README beside them). */
const OLD = fileURLToPath(new URL('../fixtures/result-unit-first/', import.meta.url))
const FOLDERS = ['sessions', 'jobs', 'targets']

/** A key spelt unit first, as these results wrote it: `ttft_ms_p95`, `jct_without_tools_ms_p50`. */
const UNIT_FIRST = /"[a-z_]+_ms_p\d+":/

/** The parts of a result that held unit-first percentiles, in their order, key for key. */
function percentileParts(result: BenchResult): string {
  return JSON.stringify({
    levels: result.levels.map(({ turns, jobs, cache_effect }) => ({ turns, jobs, cache_effect })),
    targets: result.targets?.map((target) => target.levels),
  })
}

test('a result that spelt percentiles unit first is read with them named as a run names them now', () => {
  for (const name of FOLDERS) {
    const raw = readFileSync(join(OLD, name, 'bench_result.json'), 'utf8')
    assert.match(raw, UNIT_FIRST, `${name} is an old-spelling fixture`)
    const run = loadRun(join(OLD, name))
    assert.doesNotMatch(JSON.stringify(run.result), UNIT_FIRST, `${name}: no unit-first key left`)
    // What today's build makes of the same records, key for key and in the same order: the upgrade
    // renamed every figure and kept its value.
    const rebuilt = buildResult(run.records ?? [], run.result.meta)
    assert.equal(percentileParts(run.result), percentileParts(rebuilt), name)
  }
  // Each place that held them, with a value carried over: turns, jobs, by_depth, cache_effect, targets.
  const old = (name: string) => JSON.parse(readFileSync(join(OLD, name, 'bench_result.json'), 'utf8'))
  const sessions = loadRun(join(OLD, 'sessions')).result.levels[1]
  assert.equal(sessions?.turns?.[2]?.ttft_p95_ms, old('sessions').levels[1].turns[2].ttft_ms_p95)
  assert.equal(
    sessions?.cache_effect?.[0]?.ttft_p50_ms,
    old('sessions').levels[1].cache_effect[0].ttft_ms_p50,
  )
  const jobs = loadRun(join(OLD, 'jobs')).result.levels[0]?.jobs
  assert.equal(jobs?.jct_p90_ms, old('jobs').levels[0].jobs.jct_ms_p90)
  assert.equal(jobs?.jct_without_tools_p50_ms, old('jobs').levels[0].jobs.jct_without_tools_ms_p50)
  assert.equal(jobs?.by_depth[1]?.ttft_p90_ms, old('jobs').levels[0].jobs.by_depth[1].ttft_ms_p90)
  const target = loadRun(join(OLD, 'targets')).result.targets?.[1]?.levels[1]
  assert.equal(target?.tpot_p50_ms, old('targets').targets[1].levels[1].tpot_ms_p50)
  assert.equal(target?.ttft_p95_ms, old('targets').targets[1].levels[1].ttft_ms_p95)
})

/** The table of summary.md that opens with `head`, to its blank line. */
function table(summary: string, head: string): string {
  const start = summary.indexOf(head)
  assert.notEqual(start, -1, `summary.md has "${head}"`)
  return summary.slice(start, summary.indexOf('\n\n', start))
}

test('report on an old summary alone draws the per-turn, per-job and cache tables it drew when it was written', async () => {
  const heads = {
    sessions: ['Sessions, per turn', 'TTFT against the cached share'],
    jobs: [
      'Jobs (completion time',
      'Jobs, per turn depth',
      'Jobs, per turn (',
      'TTFT against the cached share',
    ],
  }
  for (const [name, tables] of Object.entries(heads)) {
    // No requests.jsonl beside it: report draws from the summary itself, not from a rebuild.
    const dir = tempDir()
    copyFileSync(join(OLD, name, 'bench_result.json'), join(dir, 'bench_result.json'))
    const report = await runCli(['report', dir])
    assert.equal(report.code, 0, report.stderr)
    const drawn = readFileSync(join(dir, 'summary.md'), 'utf8')
    const written = readFileSync(join(OLD, name, 'summary.md'), 'utf8')
    for (const head of tables) assert.equal(table(drawn, head), table(written, head), `${name}: ${head}`)
  }
})

test('compare reads old-spelling results: a job run against itself compares every level, unchanged', async () => {
  const jobs = join(OLD, 'jobs')
  const compared = await runCli(['compare', jobs, jobs, '--json'])
  assert.equal(compared.code, 0, compared.stderr)
  const comparison = JSON.parse(compared.stdout)
  assert.deepEqual(
    comparison.levels.map((level: { value: number }) => level.value),
    loadRun(jobs).result.levels.map((level) => level.value),
  )
})
