import assert from 'node:assert/strict'
import { existsSync, readFileSync, rmSync, statSync } from 'node:fs'
import { type AddressInfo, createServer } from 'node:net'
import { join } from 'node:path'
import { test } from 'node:test'
import { readRecords } from '../../src/records/jsonl-reader.js'
import { startSimulator } from '../../src/sim/server.js'
import { runCli, simRunArgs } from '../helpers/cli.js'
import { tempDir } from '../helpers/run-config.js'
import { readResult, withSimRun } from '../helpers/sim-run.js'

/** CRLF-ended CSV rows; these runs' fields hold no line breaks (no errors), so splitting is enough. */
const csvRows = (path: string): string[][] =>
  readFileSync(path, 'utf8')
    .split('\r\n')
    .filter((line) => line !== '')
    .map((line) => line.split(','))

test('run --parquet writes levels.csv, requests.csv and requests.parquet beside the records, appends summary.md to $GITHUB_STEP_SUMMARY; report keeps them current', {
  timeout: 180_000,
}, async () => {
  const stepSummary = join(tempDir(), 'step-summary.md')
  const parquetRun = {
    flags: {
      levels: '1,2',
      requests: 6,
      warmup: 1,
      'input-tokens': 32,
      'output-tokens': 16,
      'no-calibrate': true,
      parquet: true,
    },
    env: { GITHUB_STEP_SUMMARY: stepSummary },
  } as const
  await withSimRun(
    startSimulator({ prefill_base_ms: 1, decode_base_ms: 1 }),
    parquetRun,
    async ({ out, run }) => {
      assert.equal(run.code, 0, run.stderr)
      const result = readResult(out)
      const records = readRecords(join(out, 'requests.jsonl')).records

      const levels = csvRows(join(out, 'levels.csv'))
      assert.equal(levels[0]?.[0], 'level_streams')
      assert.ok(levels[0]?.includes('ttft_p95_ms'))
      assert.deepEqual(
        levels.slice(1).map((row) => Number(row[0])),
        result.levels.map((level) => level.value),
      )
      const p95 = levels[0]?.indexOf('ttft_p95_ms') ?? -1
      assert.deepEqual(
        levels.slice(1).map((row) => Number(row[p95])),
        result.levels.map((level) => level.ttft_ms.p95),
      )

      const requests = csvRows(join(out, 'requests.csv'))
      assert.equal(requests.length, 1 + records.length, 'one row per record, warm-up and preflight included')
      assert.ok(statSync(join(out, 'requests.parquet')).size > 0)

      assert.equal(readFileSync(stepSummary, 'utf8'), readFileSync(join(out, 'summary.md'), 'utf8'))
      assert.match(run.stderr, /summary\.md appended to \$GITHUB_STEP_SUMMARY/)
      // Issue 40: the run's own "What if" predicts no other workload's knee; `report` adds them.
      const runSummary = readFileSync(join(out, 'summary.md'), 'utf8')
      assert.ok(result.model !== undefined, 'a closed-loop gradient carries a model')
      assert.match(runSummary, /\n## What if\n/)
      assert.ok(!runSummary.includes('Predicted knee of other workloads'))
      assert.match(runSummary, /`llmbench report` on this folder adds them/)

      // report rewrites the exports; requests.parquet only when asked (--parquet) or already in the folder.
      rmSync(join(out, 'levels.csv'))
      rmSync(join(out, 'requests.parquet'))
      const report = await runCli(['report', out], { env: { GITHUB_STEP_SUMMARY: '' } })
      assert.equal(report.code, 0, report.stderr)
      assert.ok(existsSync(join(out, 'levels.csv')))
      assert.match(readFileSync(join(out, 'summary.md'), 'utf8'), /Predicted knee of other workloads/)
      assert.equal(existsSync(join(out, 'requests.parquet')), false, 'not asked for and not there before')
      const again = await runCli(['report', out, '--parquet'])
      assert.equal(again.code, 0, again.stderr)
      assert.ok(existsSync(join(out, 'requests.parquet')))
    },
  )
})

test('run --metrics-port on a port in use: exit 2 naming the address and the flags, nothing sent', {
  timeout: 60_000,
}, async () => {
  const sim = await startSimulator({ prefill_base_ms: 1, decode_base_ms: 1 })
  const taken = createServer()
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve))
  const port = (taken.address() as AddressInfo).port
  try {
    const run = await runCli(
      simRunArgs(sim.url, join(tempDir(), 'run'), { levels: '1', requests: 2, 'metrics-port': port }),
    )
    assert.equal(run.code, 2, run.stderr)
    assert.match(
      run.stderr,
      new RegExp(`cannot listen on 127\\.0\\.0\\.1:${port} \\(--metrics-port, --metrics-host\\)`),
    )
    assert.equal(sim.stats().admitted, 0, 'nothing was sent')
  } finally {
    taken.close()
    await sim.close()
  }
})

test('run --metrics-port 0 --quiet still says the URL it chose, and nothing else', {
  timeout: 60_000,
}, async () => {
  await withSimRun(
    startSimulator({ prefill_base_ms: 1, decode_base_ms: 1 }),
    { flags: { levels: '1', requests: 2, 'metrics-port': 0, quiet: true } },
    ({ run }) => {
      assert.equal(run.code, 0, run.stderr)
      const lines = run.stderr.split('\n').filter((line) => line !== '')
      assert.equal(lines.length, 1, run.stderr)
      assert.match(lines[0] as string, /^live metrics: http:\/\/127\.0\.0\.1:[1-9]\d*\/metrics /)
    },
  )
})
