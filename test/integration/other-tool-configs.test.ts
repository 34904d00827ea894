// test-lane: long
// (test/run.sh starts the long files first, so the shared lane does not end on one of them)
import assert from 'node:assert/strict'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { type SimulatorOptions, startSimulator } from '../../src/sim/server.js'
import { runCli } from '../helpers/cli.js'
import { assertSecretsNowhere } from '../helpers/files.js'
import { tempDir } from '../helpers/run-config.js'

/**
 * `llmbench run -c FILE` with another tool's config, end to end against the simulator (which accepts
 * any auth: where each header goes is test/cli/auth-headers.test.ts's concern). The key a file holds
 * (or its variable) must reach no output and no file of the result folder.
 */

const FIXTURES = new URL('../fixtures/config/other-tools/', import.meta.url)
const FAST: SimulatorOptions = {
  prefill_base_ms: 2,
  prefill_ms_per_token: 0,
  decode_base_ms: 2,
  decode_ms_per_seq: 0,
}
const SMALL_RUN = ['--levels', '1,2', '--requests', '6', '--warmup', '0', '--output-tokens', '16']

function fixture(name: string, baseUrl: string, helper = 'true'): string {
  const path = join(tempDir(), name)
  const text = readFileSync(new URL(name, FIXTURES), 'utf8')
  writeFileSync(path, text.replace('__BASE_URL__', baseUrl).replace('__HELPER__', helper))
  return path
}

interface Result {
  meta: { target: { base_url: string; endpoint: string; model: string } }
  levels: { completed: number; failed: number }[]
}

function readResult(out: string): Result {
  return JSON.parse(readFileSync(join(out, 'bench_result.json'), 'utf8')) as Result
}

test('a Claude Code settings.json: its gateway, its model alias and the token it holds', {
  timeout: 120_000,
}, async () => {
  const sim = await startSimulator({ ...FAST, model: 'gateway-sonnet' })
  const out = join(tempDir(), 'result')
  try {
    const origin = sim.url.replace(/\/v1$/, '')
    // Its apiKeyHelper would leave a file behind if anything ran it.
    const ranMark = join(tempDir(), 'helper-ran')
    const file = fixture('claude-code-settings.json', origin, `touch ${ranMark}`)
    // The file means the Messages API. Until the simulator speaks it (issue 16 items 5 and 8), the run
    // asks for chat at the same gateway; everything else (URL, model, key) still comes from the file.
    const messages = await fetch(`${sim.url}/messages`, { method: 'POST', body: '{}' })
    await messages.body?.cancel()
    const protocol =
      messages.status === 404 ? ['--protocol', 'chat', '--endpoint', '/v1/chat/completions'] : []
    const run = await runCli(['run', '-c', file, '--out', out, '--workers', '1', ...SMALL_RUN, ...protocol], {
      env: { ANTHROPIC_AUTH_TOKEN: '' },
    })
    assert.equal(run.code, 0, run.stderr)
    assert.ok(!existsSync(ranMark), 'apiKeyHelper was run')
    assert.match(
      run.stderr,
      /note: .*claude-code-settings\.json: apiKeyHelper is not run \(llmbench runs no command from a config file\); the key comes from env\.ANTHROPIC_AUTH_TOKEN in /,
    )
    const result = readResult(out)
    assert.equal(result.meta.target.model, 'gateway-sonnet', 'the "sonnet" alias, resolved by the file')
    assert.equal(result.meta.target.base_url, origin)
    assert.equal(result.levels.length, 2)
    for (const level of result.levels) assert.equal(level.failed, 0)
    assertSecretsNowhere(['cc-TOKEN-in-settings-31337'], [run.stdout, run.stderr], out)
    assertSecretsNowhere(['route-SECRET-2718'], [run.stdout, run.stderr], out)
  } finally {
    await sim.close()
  }
})

test('a Codex config.toml: its provider, wire_api chat, the key from env_key', {
  timeout: 120_000,
}, async () => {
  const sim = await startSimulator({ ...FAST, model: 'gateway-model' })
  const out = join(tempDir(), 'result')
  const key = 'gk-CODEX-env-key-80386'
  try {
    const file = fixture('codex-config.toml', sim.url)
    const run = await runCli(['run', '-c', file, '--out', out, '--workers', '1', ...SMALL_RUN], {
      env: { GATEWAY_API_KEY: key, GATEWAY_PROJECT: 'p1' },
    })
    assert.equal(run.code, 0, run.stderr)
    const result = readResult(out)
    assert.equal(result.meta.target.model, 'gateway-model')
    assert.equal(result.meta.target.endpoint, '/chat/completions')
    for (const level of result.levels) assert.equal(level.failed, 0)
    assertSecretsNowhere([key], [run.stdout, run.stderr], out)
  } finally {
    await sim.close()
  }
})

test('a Codex config.toml that keeps its token in the file: used, never printed or written', {
  timeout: 120_000,
}, async () => {
  const sim = await startSimulator({ ...FAST, model: 'gateway-model' })
  const out = join(tempDir(), 'result')
  try {
    const run = await runCli([
      'run',
      '-c',
      fixture('codex-token-config.toml', sim.url),
      '--out',
      out,
      ...SMALL_RUN,
    ])
    assert.equal(run.code, 0, run.stderr)
    assert.doesNotMatch(run.stderr, /is not set: sending no/, 'the key was found')
    assertSecretsNowhere(['cx-TOKEN-in-config-4242'], [run.stdout, run.stderr], out)
  } finally {
    await sim.close()
  }
})

test('k8s-manifest refuses a file that holds the key: the ConfigMap would carry it in clear', {
  timeout: 60_000,
}, async () => {
  const file = fixture('claude-code-settings.json', 'http://127.0.0.1:9')
  const manifest = await runCli(['k8s-manifest', '-c', file, '--shards', '2'])
  assert.equal(manifest.code, 2, manifest.stderr)
  assert.match(
    manifest.stderr,
    /holds the API key \(env\.ANTHROPIC_AUTH_TOKEN\), which the ConfigMap would carry in clear/,
  )
  assertSecretsNowhere(['cc-TOKEN-in-settings-31337'], [manifest.stdout, manifest.stderr], null)
  const header = await runCli([
    'k8s-manifest',
    '--shards',
    '2',
    '--',
    '--base-url',
    'http://h/v1',
    '--model',
    'm',
    '--header',
    'X-Gateway-Token: gw-K8S-secret-1',
  ])
  assert.equal(header.code, 2, header.stderr)
  assert.match(header.stderr, /the header\(s\) x-gateway-token would be carried in clear/)
  assertSecretsNowhere(['gw-K8S-secret-1'], [header.stdout, header.stderr], null)
})
