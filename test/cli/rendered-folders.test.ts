// test-lane: long
// (test/run.sh starts the long files first, so the shared lane does not end on one of them)
import assert from 'node:assert/strict'
import { cpSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import type { BenchResult } from '../../src/result/bench-result.js'
import { runCli } from '../helpers/cli.js'
import { tempDir } from '../helpers/run-config.js'

/** Result folders and what `report` drew from them when they were last reviewed (see the README beside them). */
const RENDERED = fileURLToPath(new URL('../fixtures/rendered/', import.meta.url))
const FOLDERS = ['conc', 'rate', 'emb', 'sess', 'llama']
const SAME_TEXT = ['summary.md', 'levels.csv', 'requests.csv']

for (const name of FOLDERS) {
  test(`report on the stored ${name} folder draws what it drew before: tables, files and figures`, async () => {
    const dir = join(tempDir(), name)
    cpSync(join(RENDERED, name), dir, { recursive: true })
    const expected = (file: string): string => readFileSync(join(dir, 'expected', file), 'utf8')
    const report = await runCli(['report', dir])
    assert.equal(report.code, 0, report.stderr)
    assert.equal(report.stdout, expected('terminal.txt'))
    for (const file of SAME_TEXT) assert.equal(readFileSync(join(dir, file), 'utf8'), expected(file), file)
    assert.deepEqual(
      JSON.parse(readFileSync(join(dir, 'bench_result.json'), 'utf8')),
      JSON.parse(expected('bench_result.json')) as BenchResult,
    )
  })
}
