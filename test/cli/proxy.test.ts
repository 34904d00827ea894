/**
 * Runs behind an egress proxy (issue 26, case 2): HTTP_PROXY/HTTPS_PROXY honoured on every path
 * (preflight, the server's self-description, the load, /metrics scrapes, `models`), NO_PROXY and
 * --no-proxy going around it, a proxy that wants credentials or refuses the tunnel named as such,
 * and the proxy's credentials nowhere in what the run prints or writes. A real forward proxy
 * (test/helpers/forward-proxy.ts) in front of the simulator (http) or a TLS replay server (https).
 */
import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { startSimulator } from '../../src/sim/server.js'
import { runCli, simRunArgs } from '../helpers/cli.js'
import { readSseFixture } from '../helpers/fixtures.js'
import { type ForwardProxy, type ForwardProxyOptions, startForwardProxy } from '../helpers/forward-proxy.js'
import { startReplayServer } from '../helpers/replay-server.js'
import { tempDir } from '../helpers/run-config.js'
import { readResult } from '../helpers/sim-run.js'

const FAST = { prefill_base_ms: 2, prefill_ms_per_token: 0, decode_base_ms: 2, decode_ms_per_seq: 0 }
const FLAGS = { levels: 1, requests: 2, warmup: 0, 'output-tokens': 8 }
const API_KEY = 'sk-proxytest-0123456789abcdef'
const USER = 'bench-user'
const PASSWORD = 'pr0xy-Secret-PW'
const BASIC = `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`
/** Everything of the credentials that must never be printed or stored. */
const SECRETS = [API_KEY, PASSWORD, BASIC.slice('Basic '.length)]

const TLS_DIR = fileURLToPath(new URL('../fixtures/tls/', import.meta.url))
const CERT = join(TLS_DIR, 'cert.pem')

/** The proxy URL with the test's credentials. */
function withCredentials(proxy: ForwardProxy): string {
  return proxy.url.replace('http://', `http://${USER}:${PASSWORD}@`)
}

async function withProxy<T>(
  options: ForwardProxyOptions,
  body: (proxy: ForwardProxy) => Promise<T>,
): Promise<T> {
  const proxy = await startForwardProxy(options)
  try {
    return await body(proxy)
  } finally {
    await proxy.close()
  }
}

/** Every file of the result folder, read whole. */
function folderText(out: string): string {
  return readdirSync(out, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => readFileSync(join(entry.parentPath, entry.name), 'utf8'))
    .join('\n')
}

function assertNoSecrets(text: string, where: string): void {
  for (const secret of SECRETS) assert.ok(!text.includes(secret), `${where} holds a credential`)
}

/** A run against a fresh simulator with `env` (the proxy variables), into a fresh folder. */
async function simRun(env: NodeJS.ProcessEnv, extra: string[] = []) {
  const sim = await startSimulator(FAST)
  try {
    const out = join(tempDir(), 'result')
    const run = await runCli(simRunArgs(sim.url, out, FLAGS, extra), {
      env: { OPENAI_API_KEY: API_KEY, ...env },
      timeoutMs: 60_000,
    })
    return { sim: sim.url, out, run }
  } finally {
    await sim.close()
  }
}

test('http through a proxy that wants credentials: every path goes through it, the credentials nowhere', {
  timeout: 90_000,
}, async () => {
  await withProxy({ requireAuthorization: BASIC }, async (proxy) => {
    const { sim, out, run } = await simRun({ HTTP_PROXY: withCredentials(proxy) })
    assert.equal(run.code, 0, run.stderr)
    assert.match(run.stderr, new RegExp(`proxy: ${proxy.url} \\(with credentials\\), absolute-form requests`))
    const origin = new URL(sim).origin
    const targets = proxy.seen.map((seen) => `${seen.method} ${seen.target}`)
    // Preflight and load, the server's self-description, the /metrics scrapes: absolute form, all.
    assert.ok(targets.includes(`POST ${origin}/v1/chat/completions`), targets.join('\n'))
    assert.ok(targets.includes(`GET ${origin}/props`), targets.join('\n'))
    assert.ok(targets.includes(`GET ${origin}/metrics`), targets.join('\n'))
    assert.ok(
      proxy.seen.every((seen) => seen.authorization === BASIC),
      'a request went without credentials',
    )
    const result = readResult(out)
    assert.equal(result.levels[0]?.ok, 2)
    assert.deepEqual(result.meta.client.proxy, { url: proxy.url, credentials: true, via: 'absolute-form' })
    assertNoSecrets(`${run.stdout}\n${run.stderr}`, 'the output')
    assertNoSecrets(folderText(out), 'the result folder')
  })
})

test('NO_PROXY naming the host, or --no-proxy, goes straight to the server', {
  timeout: 90_000,
}, async () => {
  await withProxy({}, async (proxy) => {
    const bypassed = await simRun({ http_proxy: proxy.url, no_proxy: 'example.com, 127.0.0.1' })
    assert.equal(bypassed.run.code, 0, bypassed.run.stderr)
    assert.match(bypassed.run.stderr, /proxy: none, NO_PROXY names 127\.0\.0\.1:\d+/)
    const off = await simRun({ http_proxy: proxy.url }, ['--no-proxy'])
    assert.equal(off.run.code, 0, off.run.stderr)
    assert.equal(readResult(off.out).meta.client.proxy, undefined)
    assert.deepEqual(proxy.seen, [])
  })
})

test('a proxy that answers 407 to a request is named, not taken for the server', {
  timeout: 60_000,
}, async () => {
  await withProxy({ requireAuthorization: BASIC }, async (proxy) => {
    const { run } = await simRun({ HTTP_PROXY: proxy.url })
    assert.equal(run.code, 3, run.stderr)
    assert.match(run.stderr, /the proxy asked for credentials \(HTTP 407\)/)
    assert.match(run.stderr, /http:\/\/user:password@host:port/)
    assert.ok(proxy.seen.length > 0)
  })
})

test('`models` goes through the proxy too', { timeout: 60_000 }, async () => {
  await withProxy({ requireAuthorization: BASIC }, async (proxy) => {
    const sim = await startSimulator(FAST)
    try {
      const run = await runCli(['models', '--base-url', sim.url], {
        env: { OPENAI_API_KEY: API_KEY, HTTP_PROXY: withCredentials(proxy) },
      })
      assert.equal(run.code, 0, run.stderr)
      assert.ok(run.stdout.trim().length > 0)
      assert.deepEqual(
        proxy.seen.map((seen) => `${seen.method} ${seen.target}`),
        [`GET ${new URL(sim.url).origin}/v1/models`],
      )
    } finally {
      await sim.close()
    }
  })
})

async function withTlsServer<T>(body: (url: string) => Promise<T>): Promise<T> {
  const server = await startReplayServer(
    () => ({ body: readSseFixture('openai_gpt4o_text_usage.sse'), chunkBytes: 128 }),
    { tls: { key: readFileSync(join(TLS_DIR, 'key.pem')), cert: readFileSync(CERT) } },
  )
  try {
    return await body(server.url)
  } finally {
    await server.close()
  }
}

function tlsRun(url: string, env: NodeJS.ProcessEnv) {
  const out = join(tempDir(), 'result')
  const args = ['run', '--base-url', url, '--model', 'm', '--levels', '1', '--requests', '2', '--warmup', '0']
  return runCli([...args, '--out', out], {
    env: { NODE_EXTRA_CA_CERTS: CERT, OPENAI_API_KEY: API_KEY, ...env },
  }).then((run) => ({ run, out }))
}

test('https through a proxy: a CONNECT tunnel, TLS with the server through it', {
  timeout: 60_000,
}, async () => {
  await withTlsServer((url) =>
    withProxy({ requireAuthorization: BASIC }, async (proxy) => {
      const { run, out } = await tlsRun(url, {
        https_proxy: withCredentials(proxy),
        HTTPS_PROXY: 'http://127.0.0.1:1',
      })
      assert.equal(run.code, 0, run.stderr)
      const authority = new URL(url).host
      assert.ok(proxy.seen.length > 0)
      // Every connection, the streaming client's and undici's, is a tunnel: the proxy sees no request.
      assert.ok(
        proxy.seen.every((seen) => seen.method === 'CONNECT' && seen.target === authority),
        JSON.stringify(proxy.seen),
      )
      const result = readResult(out)
      assert.equal(result.levels[0]?.ok, 2)
      assert.deepEqual(result.meta.client.proxy, { url: proxy.url, credentials: true, via: 'CONNECT' })
      assertNoSecrets(`${run.stdout}\n${run.stderr}`, 'the output')
      assertNoSecrets(folderText(out), 'the result folder')
    }),
  )
})

for (const status of [407, 403, 502]) {
  test(`a proxy that refuses the tunnel (${status}) is a failure naming the proxy, not an unreachable host`, {
    timeout: 60_000,
  }, async () => {
    await withTlsServer((url) =>
      withProxy({ refuseConnect: status }, async (proxy) => {
        const { run } = await tlsRun(url, { HTTPS_PROXY: proxy.url })
        assert.equal(run.code, 3, run.stderr)
        assert.match(
          run.stderr,
          new RegExp(`the proxy refused the tunnel: .*proxy ${proxy.url} .*HTTP ${status}`),
        )
        assert.doesNotMatch(run.stderr, /unreachable host/)
        if (status === 407) assert.match(run.stderr, /wants credentials/)
      }),
    )
  })
}

test("through the tunnel, the server's untrusted certificate is a TLS failure, not the proxy's", {
  timeout: 60_000,
}, async () => {
  await withTlsServer((url) =>
    withProxy({}, async (proxy) => {
      const { run } = await tlsRun(url, { HTTPS_PROXY: proxy.url, NODE_EXTRA_CA_CERTS: undefined })
      assert.equal(run.code, 3, run.stderr)
      assert.match(run.stderr, /preflight failed: TLS failure: .*(SELF_SIGNED|certificate)/i)
      assert.doesNotMatch(run.stderr, /preflight failed: .*proxy http/)
      assert.equal(proxy.seen[0]?.method, 'CONNECT')
    }),
  )
})
