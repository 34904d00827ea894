import assert from 'node:assert/strict'
import { copyFileSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { RECORDS_FILE, RESULT_FILE } from '../../src/result/folder-layout.js'
import { type CliResult, runCli } from '../helpers/cli.js'
import { tempDir } from '../helpers/run-config.js'

/**
 * Issue 36, hostile round 4 (items 9, 10 and 14): what a tampered folder, a fitted model nobody
 * measured, a bound nobody set and a pipe meet. Each case is refused with exit 2 and words, never a
 * stack trace, an Infinity table or a rewritten result.
 */

/** A concurrency run against the simulator with server scrapes (the golden folder of report). */
const CONC = fileURLToPath(new URL('../fixtures/rendered/conc/', import.meta.url))

function folder(): string {
  const dir = tempDir()
  for (const name of readdirSync(CONC))
    if (name.includes('.')) copyFileSync(join(CONC, name), join(dir, name))
  return dir
}

function refused(result: CliResult, pattern: RegExp): void {
  assert.equal(result.code, 2, `${result.stdout}\n${result.stderr}`)
  assert.doesNotMatch(result.stderr, /internal error|\n\s+at /, 'no stack trace')
  assert.doesNotMatch(result.stdout, /Infinity|NaN/, 'no table of Infinity or NaN')
  assert.match(result.stderr, pattern)
}

test('report on a folder whose requests.jsonl is empty refuses, and keeps the saved result as it was', async () => {
  const dir = folder()
  writeFileSync(join(dir, RECORDS_FILE), '')
  const before = readFileSync(join(dir, RESULT_FILE), 'utf8')
  refused(await runCli(['report', dir]), /holds no records: nothing to rebuild from/)
  assert.equal(readFileSync(join(dir, RESULT_FILE), 'utf8'), before)
})

/** The model fitted on the folder, as `model --json` prints it (fitted once for every case). */
let fittedText: Promise<string> | null = null
function fittedModel(): Promise<string> {
  fittedText ??= runCli(['model', folder(), '--json']).then((fitted) => {
    assert.equal(fitted.code, 0, fitted.stderr)
    return fitted.stdout
  })
  return fittedText
}

/** A folder whose summary carries a fitted model with one parameter edited, and no records to refit from. */
async function tamperedModel(edit: (parameters: Record<string, Record<string, unknown>>) => void) {
  const dir = folder()
  const model = JSON.parse(await fittedModel()) as { parameters: Record<string, Record<string, unknown>> }
  edit(model.parameters)
  const result = JSON.parse(readFileSync(join(dir, RESULT_FILE), 'utf8')) as Record<string, unknown>
  writeFileSync(join(dir, RESULT_FILE), JSON.stringify({ ...result, model }))
  rmSync(join(dir, RECORDS_FILE))
  return dir
}

test('model, predict and sim --from refuse a fitted model that is missing, NaN, negative or absurd, naming the parameter', async () => {
  const cases: [string, (p: Record<string, Record<string, unknown>>) => void, RegExp][] = [
    ['NaN', (p) => Object.assign(p.decode_base_ms ?? {}, { value: 'NaN' }), /decode_base_ms: value "NaN"/],
    [
      'negative',
      (p) => Object.assign(p.prefill_ms_per_token ?? {}, { value: -0.5 }),
      /prefill_ms_per_token: value -0.5/,
    ],
    [
      '1e308',
      (p) => Object.assign(p.decode_ms_per_seq ?? {}, { high: 1e308 }),
      /decode_ms_per_seq: high 1e\+308/,
    ],
    [
      'missing',
      (p) => {
        delete p.slots
      },
      /slots: missing/,
    ],
  ]
  for (const [name, edit, pattern] of cases) {
    const dir = await tamperedModel(edit)
    const commands = [
      ['model', dir],
      ['predict', dir],
      ['sim', '--from', dir, '--port', '0'],
    ]
    const results = await Promise.all(commands.map((args) => runCli(args)))
    for (const [i, result] of results.entries()) {
      assert.equal(result.code, 2, `${name}: ${commands[i]?.[0]}: ${result.stdout}\n${result.stderr}`)
      refused(result, pattern)
    }
  }
})

test('a folder whose every request failed has no model: model and predict say so, never "Infinity tok/s"', async () => {
  const dir = folder()
  const lines = readFileSync(join(dir, RECORDS_FILE), 'utf8').trimEnd().split('\n')
  const failed = lines.map((line) => {
    const record = JSON.parse(line) as Record<string, unknown>
    for (const key of Object.keys(record))
      if (key.startsWith('reasoning') || key.startsWith('first_')) delete record[key]
    return JSON.stringify({
      ...record,
      status: 500,
      error: { class: 'http_5xx', message: 'HTTP 500: boom' },
      headers_at: record.sent_at,
      first_token_at: null,
      token_times: [],
      output_tokens: 0,
      tokenizer_output_tokens: 0,
      chunks: 0,
      finish_reason: null,
      server_timings: null,
    })
  })
  writeFileSync(join(dir, RECORDS_FILE), `${failed.join('\n')}\n`)
  for (const command of ['model', 'predict'])
    refused(await runCli([command, dir]), /the decode step was never measured/)
})

test('--timeout past a week and --repeat past 100 are refused before anything is sent', async () => {
  const base = ['run', '--base-url', 'http://127.0.0.1:9/v1', '--model', 'm', '--levels', '1']
  refused(await runCli([...base, '--timeout', '1e308'], { inProcess: true }), /timeout.*at most 604800/)
  refused(await runCli([...base, '--timeout', '2147484'], { inProcess: true }), /timeout.*at most 604800/)
  refused(await runCli([...base, '--repeat', '1e9'], { inProcess: true }), /repeat.*at most 100/)
})

test('every command’s help holds 100 columns in a pipe', async () => {
  for (const command of ['run', 'report', 'model', 'predict', 'compare', 'sim', 'merge', 'check']) {
    const help = await runCli([command, '--help'], { env: { COLUMNS: '' } })
    assert.equal(help.code, 0, help.stderr)
    const widest = Math.max(...help.stdout.split('\n').map((line) => line.length))
    assert.ok(widest <= 100, `${command} --help: a line of ${widest} columns`)
  }
})
