import assert from 'node:assert/strict'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { loadRunConfig } from '../../src/config/load.js'
import type { BenchResult } from '../../src/result/bench-result.js'
import { prepareRun, startRun } from '../../src/run/start-run.js'
import { StopSignal } from '../../src/run/stop-signal.js'
import { assertSecretsNowhere } from '../helpers/files.js'
import { type HeaderServer, type SeenRequest, startHeaderServer } from '../helpers/header-server.js'
import { tempDir } from '../helpers/run-config.js'

/**
 * Issue 37 item 3, the library's way in: two endpoints, each naming its own key variable, resolved
 * once by prepareRun and handed down to the run. Each loopback server refuses (401) a request that
 * does not carry its own key, so an endpoint sent another's key (as every endpoint was sent the
 * first one's before) fails its preflight and the run. No key reaches a line said or a file written.
 */

const KEY_A = 'sk-library-A-key-3141'
const KEY_B = 'sk-library-B-key-2718'

/** A server that answers only requests carrying `key` as a bearer token. */
function guarded(key: string): Promise<HeaderServer> {
  return startHeaderServer({
    fail: (request: SeenRequest) =>
      request.headers.authorization === `Bearer ${key}`
        ? null
        : { status: 401, body: JSON.stringify({ error: { message: 'wrong key' } }) },
  })
}

test('prepareRun resolves each endpoint with its own key; each server sees only its own', {
  timeout: 90_000,
}, async () => {
  const a = await guarded(KEY_A)
  const b = await guarded(KEY_B)
  const dir = tempDir()
  const out = join(dir, 'result')
  const file = join(dir, 'config.toml')
  writeFileSync(
    file,
    [
      '[target]',
      `base_url = "${a.origin}/v1"`,
      'model = "m"',
      'api_key_env = "KEY_A"',
      `more_base_urls = [{ url = "${b.origin}/v1", api_key_env = "KEY_B" }]`,
      '',
    ].join('\n'),
  )
  const lines: string[] = []
  try {
    const config = loadRunConfig({
      configFiles: [file],
      flags: { levels: [2], requests: 16, warmup: 0, out },
    })
    const env = { KEY_A, KEY_B }
    const run = prepareRun({ config, env, note: (line) => lines.push(line) })
    // The list the run reads: each endpoint its own key, every endpoint scrubbing both.
    assert.deepEqual(
      run.targets.endpoints.map((resolved) => resolved.endpoint.headers.authorization),
      [`Bearer ${KEY_A}`, `Bearer ${KEY_B}`],
    )
    const outcome = await startRun(run, { log: (line) => lines.push(line), stop: new StopSignal() })
    assert.equal(outcome.kind, 'done', JSON.stringify(outcome).slice(0, 400))
    const posts = (server: HeaderServer) => server.seen.filter((request) => request.method === 'POST')
    assert.ok(posts(a).length >= 2 && posts(b).length >= 2, 'each server got its preflight and its share')
    for (const [server, key] of [
      [a, KEY_A],
      [b, KEY_B],
    ] as const)
      for (const request of server.seen)
        assert.equal(request.headers.authorization, `Bearer ${key}`, `${request.method} ${request.url}`)
    const result = JSON.parse(readFileSync(join(out, 'bench_result.json'), 'utf8')) as BenchResult
    assert.equal(result.meta.split?.endpoints.length, 2)
    assertSecretsNowhere([KEY_A, KEY_B], [lines.join('\n'), JSON.stringify(run.config)], out)
  } finally {
    await a.close()
    await b.close()
  }
})
