import assert from 'node:assert/strict'
import { createServer, type IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'
import { test } from 'node:test'
import { DEFAULTS } from '../../src/config/load.js'
import type { RunConfig } from '../../src/config/types.js'
import type { ServerSelf } from '../../src/result/server-self.js'
import { type CacheResetCall, cacheResetCall, describeCacheReset } from '../../src/run/level/cache-reset.js'
import { sendCacheReset } from '../../src/run/level/cache-reset-send.js'
import { resolveEndpoint } from '../../src/run/setup/resolve-endpoint.js'

function server(engine: ServerSelf['engine'], slots: number | null = null): ServerSelf {
  return { engine, slots, context_per_slot: null, max_model_len: null, answered: ['/v1/models'] }
}

test('the engine chooses the call: every llama.cpp slot erased, SGLang flushed, vLLM reset', () => {
  assert.deepEqual(cacheResetCall(server('llama.cpp', 3)), {
    engine: 'llama.cpp',
    call: 'POST /slots/{id}?action=erase',
    paths: ['/slots/0?action=erase', '/slots/1?action=erase', '/slots/2?action=erase'],
  })
  assert.deepEqual(cacheResetCall(server('sglang', 8)), {
    engine: 'sglang',
    call: 'POST /flush_cache',
    paths: ['/flush_cache'],
  })
  assert.deepEqual(cacheResetCall(server('vllm')), {
    engine: 'vllm',
    call: 'POST /reset_prefix_cache',
    paths: ['/reset_prefix_cache'],
  })
  assert.equal(
    describeCacheReset('before-level', cacheResetCall(server('llama.cpp', 2)) as CacheResetCall),
    'cache reset before each level via POST /slots/{id}?action=erase (2 slots)',
  )
  assert.equal(
    describeCacheReset('before-run', cacheResetCall(server('vllm')) as CacheResetCall),
    'cache reset once before the first level via POST /reset_prefix_cache',
  )
})

test('an engine without a known call is refused in one line that names what was missing', () => {
  for (const [self, said] of [
    [null, /said nothing about itself/],
    [server(null), /engine was not recognised \(from \/v1\/models\)/],
    [server('llama.cpp', null), /llama\.cpp did not say how many slots/],
  ] as const) {
    const chosen = cacheResetCall(self)
    assert.ok('refusal' in chosen)
    assert.match(chosen.refusal, /^--reset-cache: /)
    assert.match(chosen.refusal, said)
    assert.doesNotMatch(chosen.refusal, /\n/)
  }
})

/** A server answering each POST by `answer(path)`, recording the headers it saw. */
async function resetServer(answer: (path: string) => { status: number; body: string }) {
  const seen: { path: string; headers: IncomingHttpHeaders; body: string }[] = []
  const http = createServer((req, res) => {
    let body = ''
    req.on('data', (part) => {
      body += part
    })
    req.on('end', () => {
      seen.push({ path: req.url ?? '', headers: req.headers, body })
      const { status, body: reply } = answer(req.url ?? '')
      res.writeHead(status, { 'content-type': 'application/json' })
      res.end(reply)
    })
  })
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve))
  const port = (http.address() as AddressInfo).port
  return { seen, base: `http://127.0.0.1:${port}/v1`, close: () => new Promise((r) => http.close(r)) }
}

function endpointFor(base: string, key: string) {
  const config = structuredClone(DEFAULTS) as RunConfig
  config.target.base_url = base
  config.target.model = 'm'
  return resolveEndpoint(config, key, {})
}

test('a reset posts every path at the server root with the run key; a refusal quotes the server, never the key', async () => {
  const key = 'sk-test-secret-key-0123456789'
  const srv = await resetServer((path) =>
    path === '/slots/1?action=erase'
      ? { status: 501, body: `{"error":{"message":"no slot actions for ${key}"}}` }
      : { status: 200, body: '{"n_erased":0}' },
  )
  try {
    const endpoint = endpointFor(srv.base, key)
    const ok = await sendCacheReset(endpoint, {
      engine: 'vllm',
      call: 'POST /reset_prefix_cache',
      paths: ['/reset_prefix_cache'],
    })
    assert.equal(ok.ok, true)
    assert.equal(srv.seen[0]?.path, '/reset_prefix_cache')
    assert.equal(srv.seen[0]?.headers.authorization, `Bearer ${key}`)
    assert.equal(srv.seen[0]?.body, '{}')
    const failed = await sendCacheReset(endpoint, cacheResetCall(server('llama.cpp', 3)) as CacheResetCall)
    assert.equal(failed.ok, false)
    if (failed.ok) return
    assert.match(failed.problem, /llama\.cpp's cache reset POST \/slots\/1\?action=erase answered HTTP 501/)
    assert.match(failed.problem, /--slot-save-path/)
    assert.ok(!failed.problem.includes(key), failed.problem)
    // The slot after the refusing one is not tried.
    assert.deepEqual(
      srv.seen.slice(1).map((seen) => seen.path),
      ['/slots/0?action=erase', '/slots/1?action=erase'],
    )
  } finally {
    await srv.close()
  }
})

test('vLLM without dev mode (404) and a closed port are refused, naming what was tried', async () => {
  const srv = await resetServer(() => ({ status: 404, body: '{"detail":"Not Found"}' }))
  const base = srv.base
  try {
    const call = cacheResetCall(server('vllm')) as CacheResetCall
    const absent = await sendCacheReset(endpointFor(base, 'k'), call)
    assert.ok(!absent.ok)
    assert.match(
      absent.problem,
      /vllm's cache reset POST \/reset_prefix_cache answered HTTP 404 .*VLLM_SERVER_DEV_MODE=1/,
    )
  } finally {
    await srv.close()
  }
  const closed = await sendCacheReset(
    endpointFor(base, 'k'),
    cacheResetCall(server('sglang')) as CacheResetCall,
  )
  assert.ok(!closed.ok)
  assert.match(closed.problem, /sglang's cache reset POST \/flush_cache failed: /)
})
