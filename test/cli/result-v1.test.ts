// test-lane: long
// (test/run.sh starts the long files first, so the shared lane does not end on one of them)
import assert from 'node:assert/strict'
import { cpSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import type { Comparison } from '../../src/compare/compare.js'
import type { BenchResult } from '../../src/result/bench-result.js'
import { runCli } from '../helpers/cli.js'
import { tempDir } from '../helpers/run-config.js'

/** Result folders llmbench wrote before llmbench.result/2 (see the README beside them). */
const V1 = fileURLToPath(new URL('../fixtures/result-v1/', import.meta.url))

/** A writable copy of a /1 fixture folder (report rewrites the folder it reads). */
function copyOf(name: string, dir = tempDir()): string {
  const copy = join(dir, name)
  cpSync(join(V1, name), copy, { recursive: true })
  return copy
}

/** `llmbench merge SHARDS... --out OUT --json`: the merged result, or the failure's stderr. */
async function merge(shards: string[], out: string): Promise<BenchResult> {
  const merged = await runCli(['merge', ...shards, '--out', out, '--json'])
  assert.equal(merged.code, 0, merged.stderr)
  return JSON.parse(merged.stdout) as BenchResult
}

function summaryOf(dir: string): BenchResult {
  return JSON.parse(readFileSync(join(dir, 'bench_result.json'), 'utf8')) as BenchResult
}

test('report on a /1 folder rewrites it as /2, and says the same as it then says of the /2 folder', async () => {
  for (const name of ['concurrency', 'rate']) {
    const dir = copyOf(name)
    const fromV1 = await runCli(['report', dir])
    assert.equal(fromV1.code, 0, fromV1.stderr)
    const rewritten = summaryOf(dir)
    assert.equal(rewritten.schema, 'llmbench.result/2')
    assert.doesNotMatch(JSON.stringify(rewritten), /"concurrency":/)
    const mode = name === 'rate' ? 'request_rate' : 'concurrency'
    assert.ok(rewritten.levels.every((level) => level.mode === mode))
    const markdownFromV1 = readFileSync(join(dir, 'summary.md'), 'utf8')
    const fromV2 = await runCli(['report', dir])
    assert.equal(fromV2.code, 0, fromV2.stderr)
    assert.equal(fromV2.stdout, fromV1.stdout, `${name}: the table and verdict`)
    assert.equal(readFileSync(join(dir, 'summary.md'), 'utf8'), markdownFromV1, `${name}: summary.md`)
  }
})

test('compare reads a /1 result against a /2 one, either way round', async () => {
  const dir = tempDir()
  const v1 = copyOf('concurrency', dir)
  const v2 = join(dir, 'v2')
  cpSync(v1, v2, { recursive: true })
  assert.equal((await runCli(['report', v2])).code, 0)
  assert.equal(summaryOf(v2).schema, 'llmbench.result/2')
  assert.equal(summaryOf(v1).schema, 'llmbench.result/1')
  for (const [base, next] of [
    [v1, v2],
    [v2, v1],
  ] as const) {
    const compared = await runCli(['compare', base, next, '--json'])
    assert.equal(compared.code, 0, compared.stderr)
    const comparison = JSON.parse(compared.stdout) as Comparison
    assert.equal(comparison.mode, 'concurrency')
    assert.deepEqual(
      comparison.levels.map((level) => level.value),
      [1, 2, 4, 8],
    )
    assert.deepEqual(comparison.regressions, [], 'the same records: nothing regressed')
    assert.deepEqual(comparison.mismatches, [])
  }
  // Rate mode: the level values are requests per second, and the table says so as before.
  const rate = copyOf('rate', dir)
  const rates = await runCli(['compare', rate, rate])
  assert.equal(rates.code, 0, rates.stderr)
  assert.match(rates.stdout, /\| rate \(req\/s\) \| metric \|/)
  assert.match(rates.stdout, /^\| 4 \| ttft_p95 \|/m)
})

test('merge reads /1 shards, and a /1 shard beside a /2 one, into one /2 result', async () => {
  const dir = tempDir()
  const result = await merge([join(V1, 'shard-0'), join(V1, 'shard-1')], join(dir, 'merged'))
  assert.equal(result.schema, 'llmbench.result/2')
  assert.deepEqual(
    result.levels.map((level) => [level.value, level.mode, level.requests]),
    [
      [2, 'concurrency', 8],
      [4, 'concurrency', 8],
    ],
  )
  assert.deepEqual(
    result.meta.levels_run.map((level) => [level.value, level.workers]),
    [
      [2, 2],
      [4, 2],
    ],
  )
  assert.deepEqual(summaryOf(join(dir, 'merged')), result)

  const shard1 = copyOf('shard-1', dir)
  assert.equal((await runCli(['report', shard1])).code, 0)
  assert.equal(summaryOf(shard1).schema, 'llmbench.result/2')
  const fromMixed = await merge([join(V1, 'shard-0'), shard1], join(dir, 'mixed'))
  assert.deepEqual(fromMixed.levels, result.levels, 'the same records, the same figures')
})
