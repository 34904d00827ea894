import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { preflightSummaryNamed, withHintsNamed } from '../../src/cli/hints-where-set.js'
import { configWhereSet, loadRunConfig } from '../../src/config/load.js'
import { flagOf, nameWhereSet, whereSetIn } from '../../src/config/where-set.js'
import type { BenchResult } from '../../src/result/bench-result.js'

const HINT = 'check --endpoint and whether --base-url should end in /v1'

test('where a setting was set: the last file or the flag that gave it, the flag when nothing did', () => {
  const where = whereSetIn([
    { patch: { target: { base_url: 'http://a/v1', model: 'm' } }, file: 'settings.json', source: 'json' },
    {
      patch: { target: { model: 'n' }, workload: { input: { kind: 'fixed', value: 9 } } },
      file: 'c.toml',
      source: 'toml',
    },
    { patch: { target: { model: 'o' } }, file: 'flags', source: 'flags' },
  ])
  assert.equal(where('base_url'), 'llm.base_url in settings.json')
  assert.equal(where('input_tokens'), 'workload.input_tokens in c.toml')
  assert.equal(where('model'), '--model', 'the flag won over both files')
  assert.equal(where('endpoint'), '--endpoint', 'nothing set it: the flag is where to give it')
  assert.equal(flagOf('timeout'), '--timeout')
})

test('a hint names the keys in place of the flags; other words, unknown flags and parts of words are kept', () => {
  const where = whereSetIn([
    {
      patch: { target: { base_url: 'http://a/v1', endpoint: '/x' } },
      file: '/t/settings.json',
      source: 'json',
    },
  ])
  assert.equal(
    nameWhereSet(HINT, where),
    'check llm.endpoint in /t/settings.json and whether llm.base_url in /t/settings.json should end in /v1',
  )
  assert.equal(nameWhereSet(HINT, flagOf), HINT, 'from flags or defaults the hint is unchanged')
  assert.equal(
    nameWhereSet('skip it with --no-such-flag or x--base-url', where),
    'skip it with --no-such-flag or x--base-url',
  )
})

test('loadRunConfig remembers where each setting came from: settings.json, config.toml (either of its keys), flags', () => {
  const dir = mkdtempSync(join(tmpdir(), 'llmbench-where-'))
  try {
    const json = join(dir, 'settings.json')
    const toml = join(dir, 'config.toml')
    writeFileSync(json, JSON.stringify({ llm: { base_url: 'http://127.0.0.1:1/v1', model: 'm' } }))
    writeFileSync(toml, '[target]\nendpoint = "/v1/completions"\n[load]\ninput_tokens = 64\n')
    const where = configWhereSet(
      loadRunConfig({ configFiles: [json, toml], flags: { model: 'from-flag', timeout: 5 } }),
    )
    assert.equal(where('base_url'), `llm.base_url in ${json}`)
    assert.equal(where('endpoint'), `target.endpoint in ${toml}`)
    assert.equal(where('input_tokens'), `load.input_tokens in ${toml}`, 'the key the file used')
    assert.equal(where('model'), '--model', 'the flag wins over the file')
    assert.equal(where('timeout'), '--timeout')
    assert.equal(where('output_tokens'), '--output-tokens')
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test("the terminal names hints and advice but keeps the servers' words; the preflight's first line is kept", () => {
  const name = (hint: string) =>
    nameWhereSet(hint, (id) => (id === 'base_url' ? 'llm.base_url in s.json' : flagOf(id)))
  const cause = {
    requests: 2,
    cause: 'endpoint not found',
    message: 'HTTP 404: no --base-url here',
    hint: HINT,
  }
  const level = {
    advice: `endpoint not found (2 of 2 requests): ${HINT}`,
    non_load_failures: cause,
    misconfiguration: cause,
  }
  const result = { levels: [level] } as unknown as BenchResult
  const [named] = withHintsNamed(result, name).levels as unknown as (typeof level)[]
  assert.equal(
    named?.advice,
    'endpoint not found (2 of 2 requests): check --endpoint and whether llm.base_url in s.json should end in /v1',
  )
  assert.equal(named?.misconfiguration.hint, named?.non_load_failures.hint)
  assert.match(named?.misconfiguration.hint ?? '', /llm\.base_url in s\.json/)
  assert.equal(named?.misconfiguration.message, cause.message, "the server's message as it came")
  assert.equal(level.advice.includes('--base-url'), true, 'the stored result is not changed')
  assert.equal(
    preflightSummaryNamed(`preflight failed: endpoint not found: --base-url\n  ${HINT}`, name),
    'preflight failed: endpoint not found: --base-url\n  check --endpoint and whether llm.base_url in s.json should end in /v1',
  )
})
