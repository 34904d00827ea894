import assert from 'node:assert/strict'
import { existsSync, truncateSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { runCli } from '../helpers/cli.js'
import { tempDir } from '../helpers/run-config.js'

/**
 * Issue 26, round 3: files that are not what they claim to be end with exit 2 and one line naming the
 * file, never with an internal error, a stack trace, raw control bytes or a result folder.
 */

/** Nothing listens on port 9 (discard): a run that sent anything would fail its preflight. */
const NOWHERE = 'http://127.0.0.1:9/v1'

/** A run of `dataset` against a server that is not there: it must stop before the preflight. */
const runWithDataset = (dataset: string, out: string) =>
  runCli(['run', '--base-url', NOWHERE, '--model', 'm', '--dataset', dataset, '--out', out], {
    inProcess: true,
  })

/** The line the user sees for a refused file, after checking it is the only error and nothing was written. */
function refusal(result: { code: number | null; stderr: string }, out: string): string {
  assert.equal(result.code, 2, result.stderr)
  assert.doesNotMatch(result.stderr, /internal error|\n\s+at /, 'no stack trace')
  // biome-ignore lint/suspicious/noControlCharactersInRegex: no raw control byte may reach the terminal
  assert.doesNotMatch(result.stderr, /[\x00-\x08\x0b-\x1f\x7f]/, 'no raw control bytes')
  assert.equal(existsSync(out), false, 'no result folder for a run that never started')
  return result.stderr.trimEnd().split('\n').at(-1) ?? ''
}

test('settings.json nested 5,000 deep, as an object or an array: exit 2 naming the file, line and column', {
  timeout: 60_000,
}, async () => {
  const dir = tempDir()
  const out = join(dir, 'never')
  const objects = join(dir, 'settings.json')
  writeFileSync(objects, `${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}`)
  const arrays = join(dir, 'arrays.json')
  writeFileSync(arrays, `{"target": ${'['.repeat(5000)}${']'.repeat(5000)}}`)
  assert.equal(
    refusal(await runCli(['run', '-c', objects, '--out', out], { inProcess: true }), out),
    `${objects}: expected at most 64 levels of nesting at line 1, column 321, got "{\\"a\\":{\\"a\\":{\\""`,
  )
  assert.match(
    refusal(await runCli(['run', '-c', arrays, '--out', out], { inProcess: true }), out),
    /arrays\.json: expected at most 64 levels of nesting at line 1, column 75, got "\[+"$/,
  )
})

test('a ShareGPT dataset nested 200,000 deep: exit 2 naming the file, the line and the limit', {
  timeout: 60_000,
}, async () => {
  const dir = tempDir()
  const out = join(dir, 'never')
  const dataset = join(dir, 'sharegpt.json')
  writeFileSync(dataset, `[\n${'['.repeat(200_000)}${']'.repeat(200_000)}\n]`)
  const result = await runWithDataset(dataset, out)
  assert.equal(
    refusal(result, out),
    `dataset ${dataset}:2: nested deeper than 128 levels of { or [ (real files nest a few levels)`,
  )
  assert.doesNotMatch(result.stderr, /preflight/, 'failed before any request')
})

test('a 600 MB file of NUL bytes as the dataset or settings: refused from its first bytes as not text, NULs never printed', {
  timeout: 60_000,
}, async () => {
  const dir = tempDir()
  const out = join(dir, 'never')
  // Sparse: no disk used. Over V8's longest string (512 MiB), so reading it whole could not even fail
  // the same way: the message below proves only its start was read.
  const nuls = join(dir, 'zeros.jsonl')
  writeFileSync(nuls, '')
  truncateSync(nuls, 600 * 1024 * 1024)
  assert.equal(
    refusal(await runWithDataset(nuls, out), out),
    `dataset ${nuls}: not a text file (a NUL byte at byte 1); expected JSONL or a ShareGPT JSON array`,
  )
  const settings = join(dir, 'settings.json')
  writeFileSync(settings, Buffer.alloc(64 * 1024))
  assert.equal(
    refusal(await runCli(['run', '-c', settings, '--out', out], { inProcess: true }), out),
    `${settings}: expected a text file, got a NUL byte at byte 1`,
  )
})
