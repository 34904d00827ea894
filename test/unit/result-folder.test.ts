import assert from 'node:assert/strict'
import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import {
  defaultOutDir,
  FolderInUseError,
  freeFolderName,
  prepareResultFolder,
} from '../../src/run/result-folder.js'
import { tempDir } from '../helpers/run-config.js'

test('default result folders: timestamped to the second, and a taken name gets a suffix', () => {
  const now = new Date('2026-12-03T09:30:05.123Z')
  assert.equal(defaultOutDir('org/model:7b', now), join('results', '20261203T093005Z-org_model_7b'))
  const base = join(tempDir(), 'run')
  assert.equal(freeFolderName(base), base)
  mkdirSync(base)
  assert.equal(freeFolderName(base), `${base}-2`)
  mkdirSync(`${base}-2`)
  assert.equal(freeFolderName(base), `${base}-3`)
})

test('a folder holding only a failed preflight is reused; one holding a run is refused; --force removes only run files', () => {
  const dir = tempDir()
  assert.equal(prepareResultFolder(dir, 'bench_result.json', false), null, 'an empty folder is ready')
  writeFileSync(join(dir, 'requests.jsonl'), '{"seq":-1,"phase":"preflight"}\n')
  assert.match(
    prepareResultFolder(dir, 'bench_result.json', false) ?? '',
    /replaced the previous failed preflight/,
  )
  assert.equal(existsSync(join(dir, 'requests.jsonl')), false)

  writeFileSync(join(dir, 'requests.jsonl'), '{"seq":-1,"phase":"preflight"}\n{"seq":0,"phase":"measure"}\n')
  writeFileSync(join(dir, 'keep.txt'), 'x')
  assert.throws(() => prepareResultFolder(dir, 'bench_result.json', false), FolderInUseError)
  mkdirSync(join(dir, 'charts'))
  writeFileSync(join(dir, 'custom.json'), '{}')
  assert.throws(
    () => prepareResultFolder(dir, 'custom.json', false),
    /already holds a run \(requests\.jsonl, custom\.json, charts\)/,
  )
  assert.match(prepareResultFolder(dir, 'custom.json', true) ?? '', /replaced the previous run/)
  for (const gone of ['requests.jsonl', 'custom.json', 'charts'])
    assert.equal(existsSync(join(dir, gone)), false)
  assert.equal(existsSync(join(dir, 'keep.txt')), true)
})
