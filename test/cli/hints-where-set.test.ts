import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { runCli } from '../helpers/cli.js'
import { startReplayServer } from '../helpers/replay-server.js'

test('a wrong endpoint: the hint names the key in the file the URL and endpoint came from, or the flags', {
  timeout: 120_000,
}, async () => {
  // Every request answered 404, as a server does at a wrong endpoint (the word "model" would make it an unknown model).
  const server = await startReplayServer(() => ({
    status: 404,
    contentType: 'text/plain',
    body: Buffer.from('Not Found'),
  }))
  const dir = mkdtempSync(join(tmpdir(), 'llmbench-hints-'))
  try {
    const json = join(dir, 'settings.json')
    writeFileSync(
      json,
      JSON.stringify({ llm: { base_url: server.url, endpoint: '/chat/wrong', model: 'm' } }),
    )
    const toml = join(dir, 'config.toml')
    writeFileSync(toml, `[target]\nbase_url = "${server.url}"\nendpoint = "/chat/wrong"\nmodel = "m"\n`)

    // The preflight of `run` fails first: its hint names settings.json's keys.
    const fromJson = await runCli(['run', '-c', json, '--out', join(dir, 'a')])
    assert.equal(fromJson.code, 3, fromJson.stderr)
    assert.match(fromJson.stderr, /endpoint not found/)
    assert.ok(
      fromJson.stderr.includes(
        `check llm.endpoint in ${json} and whether llm.base_url in ${json} should end in /v1`,
      ),
      fromJson.stderr,
    )
    assert.ok(!fromJson.stderr.includes('check --endpoint'), fromJson.stderr)

    // `check` the same, from config.toml.
    const fromToml = await runCli(['check', '-c', toml])
    assert.equal(fromToml.code, 3, fromToml.stderr)
    assert.ok(
      fromToml.stderr.includes(
        `check target.endpoint in ${toml} and whether target.base_url in ${toml} should end in /v1`,
      ),
      fromToml.stderr,
    )

    // From flags, the flags; a flag over the file names the flag, the rest still the file.
    const fromFlags = await runCli([
      'check',
      '--base-url',
      server.url,
      '--endpoint',
      '/chat/wrong',
      '--model',
      'm',
    ])
    assert.equal(fromFlags.code, 3, fromFlags.stderr)
    assert.match(fromFlags.stderr, /check --endpoint and whether --base-url should end in \/v1/)
    const mixed = await runCli(['check', '-c', json, '--endpoint', '/chat/wrong'])
    assert.ok(
      mixed.stderr.includes(`check --endpoint and whether llm.base_url in ${json} should end in /v1`),
      mixed.stderr,
    )

    // Without the preflight the level is misconfigured: the verdict under the table names the keys,
    // and the stored result keeps the flags (report reads it without the files).
    const out = join(dir, 'b')
    const level = await runCli([
      'run',
      '-c',
      json,
      '--no-preflight',
      '--no-calibrate',
      '--no-server-metrics',
      '--levels',
      '1',
      '--requests',
      '2',
      '--warmup',
      '0',
      '--out',
      out,
    ])
    assert.equal(level.code, 1, level.stderr)
    assert.ok(level.stdout.includes(`llm.base_url in ${json} should end in /v1`), level.stdout)
    assert.ok(!level.stdout.includes('--base-url should end'), level.stdout)
    const report = await runCli(['report', out])
    assert.match(report.stdout, /check --endpoint and whether --base-url should end in \/v1/)
  } finally {
    rmSync(dir, { recursive: true, force: true })
    await server.close()
  }
})
