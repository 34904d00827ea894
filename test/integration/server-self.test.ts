import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { performance } from 'node:perf_hooks'
import { after, test } from 'node:test'
import { runGradient } from '../../src/run/run-gradient.js'
import { resolveEndpoint } from '../../src/run/setup/resolve-endpoint.js'
import { readServerSelf, SELF_READ_TIMEOUT_MS } from '../../src/run/setup/server-self-read.js'
import { StopSignal } from '../../src/run/stop-signal.js'
import { ENGINE_FIXTURE_DIR, LLAMACPP_KIT_SELF, PROTOCOL_FIXTURE_DIR } from '../helpers/fixtures.js'
import { tempDir, testConfig } from '../helpers/run-config.js'

const KEY = 'sk-self-read-secret-7431'

/** How a path answers: a fixture file, a 404, a body that is not JSON, or never (headers sent, then silence). */
type Answer = { file: string } | { status: 404 } | { text: string } | 'stall'

interface FakeEngine {
  url: string
  /** Authorization header of each GET, by path. */
  authorizations: Map<string, string | undefined>
  close(): Promise<void>
}

const servers: FakeEngine[] = []
after(async () => {
  for (const server of servers) await server.close()
})

/** A loopback server: GETs answer as `answers` says (404 when not listed); POSTs replay a llama.cpp stream. */
async function startFakeEngine(answers: Record<string, Answer>): Promise<FakeEngine> {
  const authorizations = new Map<string, string | undefined>()
  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    req.resume()
    req.on('end', () => {
      const path = req.url ?? '/'
      if (req.method === 'POST') {
        res.writeHead(200, { 'content-type': 'text/event-stream' })
        res.end(readFileSync(`${PROTOCOL_FIXTURE_DIR}llamacpp_chat_timings.sse`))
        return
      }
      authorizations.set(path, req.headers.authorization)
      const answer = answers[path] ?? { status: 404 }
      if (answer === 'stall') {
        res.writeHead(200, { 'content-type': 'application/json' })
        res.write('{"total_slots":')
        return
      }
      if ('status' in answer) {
        res.writeHead(404, { 'content-type': 'text/plain' })
        res.end('Not Found')
      } else if ('text' in answer) {
        res.writeHead(200, { 'content-type': 'text/html' })
        res.end(answer.text)
      } else {
        res.writeHead(200, { 'content-type': 'application/json' })
        res.end(readFileSync(`${ENGINE_FIXTURE_DIR}${answer.file}`))
      }
    })
  }
  const server: Server = createServer(handler)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  const engine = {
    url: `http://127.0.0.1:${port}/v1`,
    authorizations,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
  servers.push(engine)
  return engine
}

function endpointOf(url: string) {
  const config = testConfig(url, 'x', { levels: [1], out_dir: tempDir() })
  return resolveEndpoint(config, KEY)
}

test('reads llama.cpp /props, /slots and /v1/models, sending the run key', { timeout: 20_000 }, async () => {
  const engine = await startFakeEngine({
    '/props': { file: 'llamacpp_props.json' },
    '/slots': { file: 'llamacpp_slots_busy.json' },
    '/v1/models': { file: 'llamacpp_models.json' },
  })
  const server = await readServerSelf(endpointOf(engine.url))
  assert.deepEqual(server, LLAMACPP_KIT_SELF)
  for (const path of ['/props', '/slots', '/v1/models', '/get_server_info'])
    assert.equal(engine.authorizations.get(path), `Bearer ${KEY}`, path)
})

test('404s and non-JSON answers are unknown: null, at once', { timeout: 20_000 }, async () => {
  const engine = await startFakeEngine({ '/props': { text: '<html>hello</html>' } })
  const started = performance.now()
  assert.equal(await readServerSelf(endpointOf(engine.url)), null)
  // Nothing stalls here: the answer does not wait for the bound.
  assert.ok(performance.now() - started < SELF_READ_TIMEOUT_MS, 'did not wait for the bound')
})

test('a path that stalls costs the bound, no more; the answers that came are kept', {
  timeout: 20_000,
}, async () => {
  const engine = await startFakeEngine({
    '/props': { file: 'llamacpp_props.json' },
    '/slots': 'stall',
    '/get_server_info': 'stall',
  })
  const bound = 1_500
  const started = performance.now()
  const server = await readServerSelf(endpointOf(engine.url), { timeoutMs: bound })
  const elapsed = performance.now() - started
  assert.ok(elapsed >= bound - 50, `returned before the bound (${elapsed} ms): it did not wait for /slots`)
  // Generous for a busy machine; an unbounded read would hang until the test's timeout.
  assert.ok(elapsed < bound + 5_000, `took ${elapsed} ms`)
  assert.deepEqual([server?.slots, server?.context_per_slot, server?.answered], [4, 1024, ['/props']])
})

test('a stop during the set-up cuts the reads at once', { timeout: 20_000 }, async () => {
  const engine = await startFakeEngine({ '/props': 'stall', '/slots': 'stall', '/v1/models': 'stall' })
  const stop = new StopSignal()
  const started = performance.now()
  const reading = readServerSelf(endpointOf(engine.url), {
    timeoutMs: 60_000,
    interrupt: stop.setupInterrupt,
  })
  setTimeout(() => stop.request(), 200)
  assert.equal(await reading, null)
  assert.ok(performance.now() - started < 10_000)
})

test('a run keeps meta.server, warns when the plan exceeds the context per slot, reads timings per level', {
  timeout: 60_000,
}, async () => {
  const engine = await startFakeEngine({
    '/props': { file: 'llamacpp_props.json' },
    '/slots': 'stall',
    '/v1/models': { file: 'llamacpp_models.json' },
  })
  const out = tempDir()
  // 32 input + 1000 output > the 1024 tokens a slot has.
  const config = testConfig(engine.url, 'x', {
    levels: [1, 2],
    requests: 4,
    output_tokens: 1000,
    out_dir: out,
  })
  const lines: string[] = []
  const started = performance.now()
  const outcome = await runGradient({
    config,
    outDir: out,
    apiKey: KEY,
    log: (line) => lines.push(line),
    stop: new StopSignal(),
  })
  assert.ok(performance.now() - started < SELF_READ_TIMEOUT_MS + 30_000)
  assert.equal(outcome.kind, 'done')
  if (outcome.kind !== 'done') return
  const server = outcome.result.meta.server
  assert.equal(server?.slots, 4)
  assert.equal(server?.context_per_slot, 1024)
  assert.match(
    server?.context_warning ?? '',
    /32 input \+ 1000 output = 1032 tokens\) exceeds .* 1024 tokens/,
  )
  assert.ok(lines.some((line) => line.startsWith('warning: ') && line.includes('1032 tokens')))
  assert.ok(
    lines.some((line) => line.startsWith('server: llama.cpp, 4 slots, 1024 tokens of context per slot')),
  )
  assert.ok(!lines.join('\n').includes(KEY), 'the key is never logged')
  for (const level of outcome.result.levels) {
    // Every replayed response carries prompt_ms 23.773 (the recording's).
    assert.equal(level.in_band?.requests_with_timings, level.ok)
    assert.equal(level.in_band?.server_prefill_ms.p50, 23.773)
    assert.equal(level.in_band?.queue_ms.count, level.ok)
  }
})
