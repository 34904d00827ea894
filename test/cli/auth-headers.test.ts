// test-lane: long
// (test/run.sh starts the long files first, so the shared lane does not end on one of them)
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { runCli } from '../helpers/cli.js'
import { assertSecretsNowhere } from '../helpers/files.js'
import { type SeenRequest, startHeaderServer } from '../helpers/header-server.js'
import { tempDir } from '../helpers/run-config.js'

/** Distinctive values that must reach the server and nothing else. */
const KEY = 'sk-LOOPBACK-distinctive-6502'
const HEADER_SECRET = 'gw-HEADER-secret-8086'
const PASSWORD = 'pw-BASIC-secret-68000'

/** A small run with calibration on, so preflight, calibration, the levels and the scrapes all send. */
function runArgs(baseUrl: string, out: string, extra: string[] = []): string[] {
  return [
    'run',
    '--base-url',
    baseUrl,
    '--model',
    'm',
    '--levels',
    '1',
    '--requests',
    '2',
    '--warmup',
    '0',
    '--out',
    out,
    ...extra,
  ]
}

const posts = (seen: SeenRequest[]) => seen.filter((request) => request.method === 'POST')

test('bearer (the default) and --header reach every request: preflight, calibration, the levels, the model list', {
  timeout: 90_000,
}, async () => {
  const server = await startHeaderServer()
  const out = join(tempDir(), 'result')
  try {
    const headers = ['--header', 'X-Team: bench', '--header', `X-Gateway-Token: ${HEADER_SECRET}`]
    const run = await runCli(runArgs(`${server.origin}/v1`, out, headers), { env: { OPENAI_API_KEY: KEY } })
    assert.equal(run.code, 0, run.stderr)
    assert.match(run.stderr, /headers: x-team: bench, x-gateway-token: \[redacted\]/, 'the plan names them')
    assert.ok(posts(server.seen).length >= 3, 'preflight, calibration and the level sent')
    const models = await runCli(['models', '--base-url', `${server.origin}/v1`, ...headers], {
      env: { OPENAI_API_KEY: KEY },
    })
    assert.equal(models.code, 0, models.stderr)
    assert.ok(server.seen.some((request) => request.method === 'GET' && request.url === '/v1/models'))
    for (const request of server.seen) {
      const where = `${request.method} ${request.url}`
      assert.equal(request.headers.authorization, `Bearer ${KEY}`, where)
      assert.equal(request.headers['x-team'], 'bench', where)
      assert.equal(request.headers['x-gateway-token'], HEADER_SECRET, where)
    }
    assertSecretsNowhere([KEY, HEADER_SECRET], [run.stdout, run.stderr, models.stdout, models.stderr], out)
  } finally {
    await server.close()
  }
})

test("--auth api-key: Azure OpenAI's header, and the base URL's api-version on every request", {
  timeout: 90_000,
}, async () => {
  const server = await startHeaderServer()
  const out = join(tempDir(), 'result')
  try {
    const base = `${server.origin}/openai/deployments/gpt-4o-bench?api-version=2024-10-21`
    const run = await runCli(
      runArgs(base, out, ['--endpoint', '/chat/completions', '--auth', 'api-key', '--no-calibrate']),
      { env: { OPENAI_API_KEY: KEY } },
    )
    assert.equal(run.code, 0, run.stderr)
    const sent = posts(server.seen)
    assert.ok(sent.length >= 2)
    for (const request of sent) {
      assert.equal(request.url, '/openai/deployments/gpt-4o-bench/chat/completions?api-version=2024-10-21')
      assert.equal(request.headers['api-key'], KEY)
      assert.equal(request.headers.authorization, undefined, 'the key is not also sent as a bearer token')
    }
    assertSecretsNowhere([KEY], [run.stdout, run.stderr], out)
  } finally {
    await server.close()
  }
})

test('--auth x-api-key: the key as x-api-key with anthropic-version, which a --header replaces', {
  timeout: 60_000,
}, async () => {
  const server = await startHeaderServer()
  try {
    const args = ['check', '--base-url', `${server.origin}/v1`, '--model', 'm', '--auth', 'x-api-key']
    const check = await runCli(args, { env: { OPENAI_API_KEY: KEY } })
    assert.equal(check.code, 0, check.stderr)
    const own = await runCli([...args, '--header', 'anthropic-version: 2099-01-01'], {
      env: { OPENAI_API_KEY: KEY },
    })
    assert.equal(own.code, 0, own.stderr)
    // Each check sends its request and then the warm timing probes: the last POST is the second check's.
    const sent = posts(server.seen)
    const [first, second] = [sent[0], sent.at(-1)]
    assert.equal(first?.headers['x-api-key'], KEY)
    assert.equal(first?.headers['anthropic-version'], '2023-06-01')
    assert.equal(first?.headers.authorization, undefined)
    assert.equal(second?.headers['anthropic-version'], '2099-01-01')
    assertSecretsNowhere([KEY], [check.stdout, check.stderr, own.stdout, own.stderr], null)
  } finally {
    await server.close()
  }
})

test('user:password@ in the base URL goes as Basic; the password is never printed or written', {
  timeout: 90_000,
}, async () => {
  const server = await startHeaderServer()
  const out = join(tempDir(), 'result')
  try {
    const base = `${server.origin.replace('//', `//bench-user:${PASSWORD}@`)}/v1`
    const run = await runCli(runArgs(base, out, ['--no-calibrate']), { env: { OPENAI_API_KEY: '' } })
    assert.equal(run.code, 0, run.stderr)
    const basic = `Basic ${Buffer.from(`bench-user:${PASSWORD}`).toString('base64')}`
    for (const request of posts(server.seen)) assert.equal(request.headers.authorization, basic)
    const result = JSON.parse(readFileSync(join(out, 'bench_result.json'), 'utf8'))
    assert.equal(result.meta.target.base_url, `${server.origin}/v1`)
    assertSecretsNowhere([PASSWORD, basic.slice('Basic '.length)], [run.stdout, run.stderr], out)
  } finally {
    await server.close()
  }
})

test('a server that echoes the key, the header secret and the Basic credentials in its errors: none of them is printed or written', {
  timeout: 90_000,
}, async () => {
  const server = await startHeaderServer({
    fail: (request) =>
      request.method === 'POST'
        ? {
            status: 401,
            body: JSON.stringify({
              error: {
                message: `Incorrect API key provided: ${request.headers['api-key']}; token ${request.headers['x-gateway-token']}; auth ${request.headers.authorization}`,
              },
            }),
          }
        : null,
  })
  const out = join(tempDir(), 'result')
  try {
    const base = `${server.origin.replace('//', `//bench-user:${PASSWORD}@`)}/v1`
    const extra = ['--auth', 'api-key', '--header', `X-Gateway-Token: ${HEADER_SECRET}`, '--no-calibrate']
    const run = await runCli(runArgs(base, out, [...extra, '--no-preflight']), {
      env: { OPENAI_API_KEY: KEY },
    })
    assert.notEqual(run.code, 0, 'every request failed')
    const records = readFileSync(join(out, 'requests.jsonl'), 'utf8')
    assert.match(records, /Incorrect API key provided/, 'the error was recorded')
    const check = await runCli(['check', '--base-url', base, '--model', 'm', ...extra.slice(0, 4)], {
      env: { OPENAI_API_KEY: KEY },
    })
    assert.notEqual(check.code, 0)
    const basic = Buffer.from(`bench-user:${PASSWORD}`).toString('base64')
    assertSecretsNowhere(
      [KEY, HEADER_SECRET, PASSWORD, basic],
      [run.stdout, run.stderr, check.stdout, check.stderr],
      out,
    )
  } finally {
    await server.close()
  }
})
