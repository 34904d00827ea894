import assert from 'node:assert/strict'
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import type { BenchResult } from '../../src/result/bench-result.js'
import { RECORDS_FILE, RESULT_FILE, SERVER_METRICS_FILE } from '../../src/result/folder-layout.js'
import { type CliResult, runCli } from '../helpers/cli.js'
import { tempDir } from '../helpers/run-config.js'

/**
 * Issue 26 case 7: result folders someone edited, cut short or replaced. `report` and `compare`
 * read every file against its schema and refuse a bad one with exit 2 and one line naming the file,
 * the line (JSONL) and the field, leaving the folder as it was; `report` alone goes on from the good
 * lines of a requests.jsonl with a few bad ones, saying how many and the first.
 */

/** A concurrency run against the simulator with server scrapes (the golden folder of report). */
const CONC = fileURLToPath(new URL('../fixtures/rendered/conc/', import.meta.url))

/** A fresh copy of the run's three files in a folder of its own. */
function folder(): string {
  const dir = join(tempDir(), 'run')
  mkdirSync(dir)
  for (const name of [RESULT_FILE, RECORDS_FILE, SERVER_METRICS_FILE])
    copyFileSync(join(CONC, name), join(dir, name))
  return dir
}

function editResult(dir: string, edit: (result: BenchResult) => void): void {
  const result = JSON.parse(readFileSync(join(dir, RESULT_FILE), 'utf8')) as BenchResult
  edit(result)
  writeFileSync(join(dir, RESULT_FILE), JSON.stringify(result, null, 2))
}

/** Edits line `line` (1-based) of a JSONL file of the folder as text. */
function editLine(dir: string, file: string, line: number, edit: (text: string) => string): void {
  const lines = readFileSync(join(dir, file), 'utf8').split('\n')
  lines[line - 1] = edit(lines[line - 1] as string)
  writeFileSync(join(dir, file), lines.join('\n'))
}

/** Every file of the folder and its bytes: what a refusal must leave as it was. */
function snapshot(dir: string): Map<string, string> {
  return new Map(readdirSync(dir).map((name) => [name, readFileSync(join(dir, name), 'latin1')]))
}

/** The one line a refusal prints, after checking it is exit 2 without a stack trace. */
function refusal(result: CliResult): string {
  assert.equal(result.code, 2, result.stderr)
  assert.doesNotMatch(result.stderr, /internal error|\n\s+at /, 'no stack trace')
  assert.equal(result.stderr.trimEnd().split('\n').length, 1, `one line:\n${result.stderr}`)
  return result.stderr.trimEnd()
}

/** `report DIR` and `compare DIR GOOD` both refuse `dir` with `line`, and leave it as it was. */
async function bothRefuse(dir: string, line: string | RegExp): Promise<void> {
  const before = snapshot(dir)
  const good = folder()
  for (const args of [
    ['report', dir],
    ['compare', dir, good],
    ['compare', good, dir],
  ]) {
    const said = refusal(await runCli(args))
    if (typeof line === 'string') assert.equal(said, line, args.join(' '))
    else assert.match(said, line, args.join(' '))
  }
  assert.deepEqual(snapshot(dir), before, 'nothing written over the folder')
}

test('a figure deep in a level stored as a word: exit 2 naming the file, the field and what was expected', {
  timeout: 60_000,
}, async () => {
  const dir = folder()
  editResult(dir, (result) => {
    ;(result.levels[2]?.ttft_ms as Record<string, unknown>).p95 = 'fast'
  })
  await bothRefuse(
    dir,
    `${join(dir, RESULT_FILE)}: levels[2].ttft_ms.p95: expected a number or null, got "fast"`,
  )
})

test('a bench_result.json cut short, or missing a required field: exit 2 saying which', {
  timeout: 60_000,
}, async () => {
  const cut = folder()
  const text = readFileSync(join(cut, RESULT_FILE), 'utf8')
  writeFileSync(join(cut, RESULT_FILE), text.slice(0, text.length / 2))
  await bothRefuse(cut, new RegExp(`^${literal(join(cut, RESULT_FILE))}: not JSON \\(.+\\)$`))

  const noVerdict = folder()
  editResult(noVerdict, (result) => {
    delete (result.levels[0] as Partial<BenchResult['levels'][number]>).verdict
  })
  await bothRefuse(
    noVerdict,
    `${join(noVerdict, RESULT_FILE)}: levels[0].verdict: expected "healthy", "saturated", "overloaded", "client-bound", "misconfigured" or "interrupted", got nothing`,
  )
  const noModel = folder()
  editResult(noModel, (result) => {
    delete (result.meta.target as Partial<BenchResult['meta']['target']>).model
  })
  await bothRefuse(
    noModel,
    `${join(noModel, RESULT_FILE)}: meta.target.model: expected a string, got nothing`,
  )
})

test('numbers no run writes: 1e999 (Infinity), "NaN", 1e300 as a time: exit 2 naming each', {
  timeout: 60_000,
}, async () => {
  const infinite = folder()
  const text = readFileSync(join(infinite, RESULT_FILE), 'utf8')
  // The first level's output tok/s as a literal no double holds; JSON.parse reads it as Infinity.
  writeFileSync(
    join(infinite, RESULT_FILE),
    text.replace(/"output_tokens_per_s": [\d.]+/, '"output_tokens_per_s": 1e999'),
  )
  await bothRefuse(
    infinite,
    `${join(infinite, RESULT_FILE)}: levels[0].output_tokens_per_s: expected a number, got Infinity (a number too large to hold)`,
  )
  const nan = folder()
  editResult(nan, (result) => {
    ;(result.levels[1] as unknown as Record<string, unknown>).requests_per_s = 'NaN'
  })
  await bothRefuse(nan, `${join(nan, RESULT_FILE)}: levels[1].requests_per_s: expected a number, got "NaN"`)
  const huge = folder()
  // Line 14 is the first measured request of level 1.
  editLine(huge, RECORDS_FILE, 14, (line) => line.replace(/"end_at":[\d.]+/, '"end_at":1e300'))
  assert.equal(
    refusal(await runCli(['compare', huge, folder()])),
    `${join(huge, RECORDS_FILE)}: line 14: end_at: expected a time in ms between -9007199254740991 and 9007199254740991, got 1e+300`,
  )
})

test('requests.jsonl with a tampered line in the middle: compare refuses it, report goes on from the good lines and says so', {
  timeout: 60_000,
}, async () => {
  const dir = folder()
  // The case: a token count stored as a string of digits was read as text and compared.
  editLine(dir, RECORDS_FILE, 20, (line) => line.replace(/"output_tokens":\d+/, '"output_tokens":"0444"'))
  const first = `${join(dir, RECORDS_FILE)}: line 20: output_tokens: expected a non-negative integer, got "0444"`
  assert.equal(refusal(await runCli(['compare', folder(), dir])), first)
  assert.equal(refusal(await runCli(['merge', dir, folder(), '--out', join(dir, '..', 'merged')])), first)

  const saved = readFileSync(join(dir, RESULT_FILE), 'utf8')
  const report = await runCli(['report', dir, '--json'])
  assert.equal(report.code, 0, report.stderr)
  assert.match(
    report.stderr,
    new RegExp(
      `warning: ${literal(join(dir, RECORDS_FILE))}: 1 bad line\\(s\\) left out, the first at line 20: output_tokens: expected a non-negative integer, got "0444"`,
    ),
  )
  const shown = JSON.parse(report.stdout) as BenchResult
  const original = JSON.parse(saved) as BenchResult
  assert.equal(
    shown.levels[0]?.requests,
    (original.levels[0]?.requests ?? 0) - 1,
    'the bad line is not counted',
  )
  assert.equal(shown.levels[1]?.requests, original.levels[1]?.requests, 'the other levels are whole')
  assert.equal(readFileSync(join(dir, RESULT_FILE), 'utf8'), saved, 'the summary of every line is kept')
  assert.equal(existsSync(join(dir, 'summary.md')), true, 'the report of the good lines is written')

  // Two bad lines, one of them not JSON: counted, the first named.
  editLine(dir, RECORDS_FILE, 30, () => '{"seq": 3, "worker"')
  const two = await runCli(['report', dir])
  assert.equal(two.code, 0, two.stderr)
  assert.match(two.stderr, /2 bad line\(s\) left out, the first at line 20: output_tokens/)
  assert.match(
    refusal(await runCli(['compare', folder(), dir])),
    /line 20: .* \(and 1 other bad line\(s\)\)$/,
  )

  // A file of nothing but bad lines leaves nothing to report from.
  writeFileSync(join(dir, RECORDS_FILE), '{"seq":"x"}\n{"seq":"y"}\n')
  assert.match(
    refusal(await runCli(['report', dir])),
    /line 1: seq: expected an integer, got "x" \(and 1 other bad line\(s\)\); no line of it is a record/,
  )
})

test('server-metrics.jsonl with a bad line: compare refuses it, report leaves it out and says so', {
  timeout: 60_000,
}, async () => {
  const dir = folder()
  editLine(dir, SERVER_METRICS_FILE, 5, (line) => line.replace(/"at":[\d.]+/, '"at":"soon"'))
  const line = `${join(dir, SERVER_METRICS_FILE)}: line 5: at: expected a time in ms, got "soon"`
  assert.equal(refusal(await runCli(['compare', folder(), dir])), line)
  const report = await runCli(['report', dir])
  assert.equal(report.code, 0, report.stderr)
  assert.match(
    report.stderr,
    /server-metrics\.jsonl: 1 bad line\(s\) left out, the first at line 5: at: expected a time in ms/,
  )
})

test('a folder that is a file, files that are folders, an empty folder: exit 2 naming the path', {
  timeout: 60_000,
}, async () => {
  const dir = folder()
  const notes = join(dir, '..', 'notes.txt')
  writeFileSync(notes, 'not a result\n')
  assert.match(refusal(await runCli(['report', notes])), new RegExp(`^${literal(notes)}: not JSON \\(`))

  const summaryDir = join(tempDir(), 'run')
  mkdirSync(join(summaryDir, RESULT_FILE), { recursive: true })
  assert.equal(
    refusal(await runCli(['report', summaryDir])),
    `${join(summaryDir, RESULT_FILE)}: a directory, expected a file`,
  )
  rmSync(join(dir, RECORDS_FILE))
  mkdirSync(join(dir, RECORDS_FILE))
  assert.equal(
    refusal(await runCli(['compare', dir, folder()])),
    `${join(dir, RECORDS_FILE)}: a directory, expected a file`,
  )

  const empty = tempDir()
  assert.equal(
    refusal(await runCli(['report', empty])),
    `${empty}: no bench_result.json (give the summary file itself if it has another name)`,
  )
  assert.deepEqual(readdirSync(empty), [], 'nothing written in it')
})

/** `text` as a literal part of a regular expression. */
function literal(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}
