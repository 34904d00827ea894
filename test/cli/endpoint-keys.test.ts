import assert from 'node:assert/strict'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { runCli } from '../helpers/cli.js'
import { assertSecretsNowhere } from '../helpers/files.js'
import { type SeenRequest, startHeaderServer } from '../helpers/header-server.js'
import { tempDir } from '../helpers/run-config.js'

/**
 * Issue 37 item 3, against two loopback servers: an endpoint entry of more_base_urls with its own
 * api_key_env and headers. Each server sees only its own key and headers on every request it gets
 * (preflight, the load, the /metrics scrapes), and no key or secret header is printed or written.
 */

/** Distinctive values that must reach their own server and nothing else. */
const RUN_KEY = 'sk-RUN-endpoint-a-4004'
const RUN_HEADER_SECRET = 'run-HEADER-secret-8008'
const B_KEY = 'sk-OWN-endpoint-b-6809'
const B_GATEWAY_SECRET = 'b-GATEWAY-secret-z80'

const posts = (seen: readonly SeenRequest[]) => seen.filter((request) => request.method === 'POST')

test('two endpoints, each sent its own key and headers; no key is printed or written', {
  timeout: 90_000,
}, async () => {
  const a = await startHeaderServer()
  let bPosts = 0
  // The third request to B is refused with a body that quotes what it was sent, as some gateways do.
  const b = await startHeaderServer({
    fail: (request) =>
      request.method === 'POST' && ++bPosts === 3
        ? {
            status: 401,
            body: JSON.stringify({
              error: {
                message: `bad credentials: ${request.headers.authorization} ${request.headers['x-gateway-token']}`,
              },
            }),
          }
        : null,
  })
  const dir = tempDir()
  const out = join(dir, 'result')
  const config = join(dir, 'config.toml')
  writeFileSync(
    config,
    [
      '[target]',
      `base_url = "${a.origin}/v1"`,
      'model = "m"',
      `more_base_urls = [{ url = "${b.origin}/v1", api_key_env = "B_KEY", headers = { "X-Tenant" = "b" }, env_headers = { "X-Gateway-Token" = "B_GATEWAY" } }]`,
      '',
      '[target.headers]',
      '"X-Team" = "bench"',
      `"X-Run-Token" = "${RUN_HEADER_SECRET}"`,
      '',
    ].join('\n'),
  )
  try {
    const run = await runCli(
      ['run', '--config', config, '--levels', '2', '--requests', '20', '--warmup', '0', '--out', out],
      { env: { OPENAI_API_KEY: RUN_KEY, B_KEY, B_GATEWAY: B_GATEWAY_SECRET } },
    )
    assert.equal(run.code, 0, run.stderr)
    assert.ok(posts(a.seen).length >= 3, 'A: preflight, calibration and its share of the level')
    assert.ok(posts(b.seen).length >= 3, 'B: its preflight and its share of the level')
    for (const request of a.seen) {
      const where = `A: ${request.method} ${request.url}`
      assert.equal(request.headers.authorization, `Bearer ${RUN_KEY}`, where)
      assert.equal(request.headers['x-team'], 'bench', where)
      assert.equal(request.headers['x-run-token'], RUN_HEADER_SECRET, where)
      assert.equal(request.headers['x-tenant'], undefined, where)
      assert.equal(request.headers['x-gateway-token'], undefined, where)
    }
    for (const request of b.seen) {
      const where = `B: ${request.method} ${request.url}`
      assert.equal(request.headers.authorization, `Bearer ${B_KEY}`, where)
      assert.equal(request.headers['x-tenant'], 'b', where)
      assert.equal(request.headers['x-gateway-token'], B_GATEWAY_SECRET, where)
      // The run's headers are A's alone: B named its own.
      assert.equal(request.headers['x-team'], undefined, where)
      assert.equal(request.headers['x-run-token'], undefined, where)
    }
    // The refused request is recorded, its message without the credentials it quoted.
    const records = readFileSync(join(out, 'requests.jsonl'), 'utf8')
    assert.match(records, /bad credentials/)
    assertSecretsNowhere([RUN_KEY, RUN_HEADER_SECRET, B_KEY, B_GATEWAY_SECRET], [run.stdout, run.stderr], out)
    // The result shows both endpoints, by URL only.
    const result = JSON.parse(readFileSync(join(out, 'bench_result.json'), 'utf8')) as {
      meta: { split?: { endpoints: { url: string }[] } }
    }
    assert.deepEqual(
      result.meta.split?.endpoints.map((endpoint) => endpoint.url),
      [`${a.origin}/v1/chat/completions`, `${b.origin}/v1/chat/completions`],
    )
  } finally {
    await a.close()
    await b.close()
  }
})
