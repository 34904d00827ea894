// test-lane: long
// (test/run.sh starts the long files first, so the shared lane does not end on one of them)
import assert from 'node:assert/strict'
import { cpSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { readRecords } from '../../src/records/jsonl-reader.js'
import type { BenchResult } from '../../src/result/bench-result.js'
import { startSimulator } from '../../src/sim/server.js'
import { runCli, simRunArgs } from '../helpers/cli.js'
import { tempDir } from '../helpers/run-config.js'
import { readResult, withSimRun } from '../helpers/sim-run.js'

const FLAGS = {
  levels: '1,2',
  requests: 6,
  warmup: 0,
  'input-tokens': 32,
  'output-tokens': 16,
  'no-calibrate': true,
  quiet: true,
} as const

const { quiet: _quiet, ...LOUD } = FLAGS

function runArgs(url: string, out: string, extra: string[] = []): string[] {
  return simRunArgs(url, out, FLAGS, extra)
}

test('run --out DIR holding a run is refused (exit 2, nothing sent) unless --force, which replaces only that run', {
  timeout: 120_000,
}, async () => {
  const starting = startSimulator({ prefill_base_ms: 1, decode_base_ms: 1 })
  await withSimRun(starting, { flags: FLAGS, folder: 'one-run' }, async ({ sim, out, run: first }) => {
    assert.equal(first.code, 0, first.stderr)
    const firstId = readResult(out).meta.run_id
    assert.match(firstId ?? '', /^[0-9a-f]{12}$/)
    writeFileSync(join(out, 'notes.txt'), 'mine')
    const sentBefore = sim.stats().admitted

    const again = await runCli(runArgs(sim.url, out))
    assert.equal(again.code, 2, again.stderr)
    assert.match(again.stderr, /already holds a run \(requests\.jsonl, bench_result\.json.*--force/)
    assert.equal(sim.stats().admitted, sentBefore, 'nothing was sent')
    assert.equal(readResult(out).meta.run_id, firstId, 'the first run is untouched')

    const forced = await runCli(runArgs(sim.url, out, ['--force']))
    assert.equal(forced.code, 0, forced.stderr)
    const { records } = readRecords(join(out, 'requests.jsonl'))
    const secondId = readResult(out).meta.run_id
    assert.notEqual(secondId, firstId)
    assert.deepEqual([...new Set(records.map((record) => record.run))], [secondId], 'one run in the file')
    assert.equal(records.filter((record) => record.phase === 'measure').length, 12)
    assert.equal(readFileSync(join(out, 'notes.txt'), 'utf8'), 'mine', 'unrelated files are kept')
  })
})

test('report never mixes runs: a records file with two runs is separated by run id, or refused when ids are missing', {
  timeout: 120_000,
}, async () => {
  const sim = await startSimulator({ prefill_base_ms: 1, decode_base_ms: 1 })
  const dir = tempDir()
  const [a, b, mixed, noIds, oldOne] = ['a', 'b', 'mixed', 'no-ids', 'old'].map((name) =>
    join(dir, name),
  ) as [string, string, string, string, string]
  try {
    // Two runs at the same time, into two folders: they are two runs (two ids) all the same.
    const runs = await Promise.all([runCli(runArgs(sim.url, a)), runCli(runArgs(sim.url, b))])
    for (const run of runs) assert.equal(run.code, 0, run.stderr)
  } finally {
    await sim.close()
  }
  const recordsA = readFileSync(join(a, 'requests.jsonl'), 'utf8')
  const recordsB = readFileSync(join(b, 'requests.jsonl'), 'utf8')
  // Each case in a copy of a's folder, so the reports can run together.
  for (const copy of [mixed, noIds, oldOne]) cpSync(a, copy, { recursive: true })
  // What an older version did with a reused --out: b's records appended to a's.
  writeFileSync(join(mixed, 'requests.jsonl'), recordsA + recordsB)
  // The same two runs written by a version without ids.
  const withoutIds = (text: string): string => text.replace(/,"run":"[0-9a-f]+"/g, '')
  const result = readResult(a)
  delete result.meta.run_id
  for (const copy of [noIds, oldOne]) writeFileSync(join(copy, 'bench_result.json'), JSON.stringify(result))
  writeFileSync(join(noIds, 'requests.jsonl'), withoutIds(recordsA) + withoutIds(recordsB))
  // One run without ids (an older folder).
  writeFileSync(join(oldOne, 'requests.jsonl'), withoutIds(recordsA))
  rmSync(join(oldOne, 'summary.md'))
  const [alone, mixedReport, refused, old] = await Promise.all([
    runCli(['report', a, '--json']),
    runCli(['report', mixed, '--json']),
    runCli(['report', noIds]),
    runCli(['report', oldOne, '--json']),
  ])
  assert.equal(alone.code, 0, alone.stderr)
  const aloneResult = JSON.parse(alone.stdout) as BenchResult

  // A records file holding two runs: the other run's records are left out.
  assert.equal(mixedReport.code, 0, mixedReport.stderr)
  assert.match(mixedReport.stderr, /also holds \d+ record\(s\) of another run: left out/)
  const mixedResult = JSON.parse(mixedReport.stdout) as BenchResult
  assert.deepEqual(
    mixedResult.levels.map((level) => [level.requests, level.output_tokens_per_s]),
    aloneResult.levels.map((level) => [level.requests, level.output_tokens_per_s]),
    'the figures are the first run alone',
  )

  // The same two runs without ids: refused, with what to do.
  assert.equal(refused.code, 2, refused.stderr)
  assert.match(
    refused.stderr,
    /holds more than one run: request 0 of worker 0 appears again .*re-run into an empty folder/,
  )

  // One run without ids (an older folder) still loads.
  assert.equal(old.code, 0, old.stderr)
  assert.equal(existsSync(join(oldOne, 'summary.md')), true)
})

test('run --out that cannot be written is a usage error naming the path (exit 2), before anything is sent', {
  timeout: 60_000,
}, async () => {
  const sim = await startSimulator({ prefill_base_ms: 1, decode_base_ms: 1 })
  try {
    // A path below a regular file: even root cannot make it a folder.
    const file = join(tempDir(), 'a-file')
    writeFileSync(file, 'not a folder')
    const run = await runCli(runArgs(sim.url, join(file, 'result')))
    assert.equal(run.code, 2, run.stderr)
    assert.match(run.stderr, /--out .*a-file\/result: cannot write the result folder \(ENOTDIR/)
    assert.doesNotMatch(run.stderr, /internal error|\n\s+at /)
    assert.equal(sim.stats().completed, 0, 'nothing was sent')
  } finally {
    await sim.close()
  }
})

test('--no-charts: the figures, summary.md and the exports, no charts/ or report.html, and the run says how to draw them; report draws them', {
  timeout: 120_000,
}, async () => {
  const starting = startSimulator({ prefill_base_ms: 1, decode_base_ms: 1 })
  // The helper adds --no-charts to every run that does not ask for charts: said here, as a user types it.
  await withSimRun(
    starting,
    // Not --quiet: the note is what a user reads.
    { flags: LOUD, extra: ['--no-charts'], folder: 'undrawn' },
    async ({ out, run }) => {
      assert.equal(run.code, 0, run.stderr)
      for (const file of ['bench_result.json', 'summary.md', 'levels.csv', 'requests.csv'])
        assert.ok(existsSync(join(out, file)), file)
      assert.equal(existsSync(join(out, 'charts')), false)
      assert.equal(existsSync(join(out, 'report.html')), false)
      assert.ok(
        run.stderr.includes(
          `charts and report.html not drawn (--no-charts): \`llmbench report ${out}\` draws them`,
        ),
        run.stderr,
      )
      const drawn = await runCli(['report', out], { charts: true })
      assert.equal(drawn.code, 0, drawn.stderr)
      assert.ok(
        existsSync(join(out, 'charts', 'ttft.svg')) && existsSync(join(out, 'report.html')),
        drawn.stderr,
      )
      assert.match(drawn.stderr, /Wrote in .*charts\/?, report\.html/)
    },
  )
})
