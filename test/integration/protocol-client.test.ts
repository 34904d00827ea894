/**
 * The stream client over loopback with each protocol's recordings (test/fixtures/protocols, see its
 * README), sent in 61-byte writes: the record has its first token, its token events, the usage and
 * its details; a broken stream of each protocol is a classified failure, never a crash.
 * Expected figures were read off the recordings (see test/unit/protocol-events.test.ts).
 */
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { after, before, test } from 'node:test'
import { Pool } from 'undici'
import { sendRequest } from '../../src/client/stream-client.js'
import type { Target } from '../../src/client/target.js'
import type { Protocol } from '../../src/protocols/names.js'
import type { RequestRecord } from '../../src/records/types.js'
import { completeTokenCounts } from '../../src/workload/token-counts.js'
import { PROTOCOL_FIXTURE_DIR } from '../helpers/fixtures.js'
import { type ReplayServer, startReplayServer } from '../helpers/replay-server.js'
import { measurePlan } from '../helpers/request-plan.js'

const recording = (name: string): string => readFileSync(`${PROTOCOL_FIXTURE_DIR}${name}`, 'utf8')

/** Bodies served at /NAME: the recordings, and broken variants of them. */
const BODIES = new Map<string, { body: string; contentType: string }>()
const sse = (name: string, body: string): void => {
  BODIES.set(name, { body, contentType: 'text/event-stream' })
}

let server: ReplayServer
let pool: Pool

before(async () => {
  for (const name of [
    'openai-responses-reasoning-summary.sse',
    'openai-responses-cached-tokens-web-search.sse',
    'anthropic-messages-thinking.sse',
    'anthropic-messages-basic.sse',
    'anthropic-messages-tool-use.sse',
  ])
    sse(name, recording(name))
  const basic = recording('anthropic-messages-basic.sse')
  // The second text delta's JSON cut short.
  sse('messages-malformed', basic.replace('"text":" there"}}', '"text":" there"'))
  // The stream cut before message_delta and message_stop (no stop_reason, no end).
  sse('messages-truncated', basic.slice(0, basic.indexOf('event: message_delta')))
  sse(
    'messages-error',
    `${basic.slice(0, basic.indexOf('event: content_block_stop'))}event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n`,
  )
  const responses = recording('openai-responses-cached-tokens-web-search.sse')
  const firstDelta = responses.indexOf('"type":"response.output_text.delta"')
  sse('responses-malformed', `${responses.slice(0, firstDelta)}${responses.slice(firstDelta + 40)}`)
  sse('responses-truncated', responses.slice(0, responses.indexOf('event: response.completed')))
  sse(
    'responses-failed',
    `${responses.slice(0, responses.indexOf('event: response.output_text.done'))}event: response.failed\ndata: {"type":"response.failed","response":{"status":"failed","error":{"code":"server_error","message":"The model crashed"}}}\n\n`,
  )
  BODIES.set('embeddings-ok', {
    contentType: 'application/json',
    body: '{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.25,-0.5]}],"model":"m","usage":{"prompt_tokens":37,"total_tokens":37}}',
  })
  BODIES.set('embeddings-malformed', { contentType: 'application/json', body: '{"object":"list","data":[' })
  BODIES.set('embeddings-no-data', {
    contentType: 'application/json',
    body: '{"object":"list","usage":{"prompt_tokens":3}}',
  })
  server = await startReplayServer((path) => {
    const found = BODIES.get(decodeURIComponent(path.slice(1)))
    assert.ok(found !== undefined, path)
    return { body: Buffer.from(found.body), contentType: found.contentType, chunkBytes: 61 }
  })
  pool = new Pool(new URL(server.url).origin, { connections: 4 })
})

after(async () => {
  await pool.destroy()
  await server.close()
})

async function fetchAs(protocol: Protocol, name: string): Promise<RequestRecord> {
  const target: Target = {
    dispatcher: pool,
    origin: new URL(server.url).origin,
    path: `/${encodeURIComponent(name)}`,
    headers: { 'content-type': 'application/json' },
    stream: protocol !== 'embeddings',
    protocol,
    timeoutMs: 10_000,
    firstTokenTimeoutMs: null,
    idleTimeoutMs: 10_000,
    secrets: [],
  }
  return completeTokenCounts(await sendRequest(target, measurePlan()))
}

function assertStreamed(record: RequestRecord, events: number): void {
  assert.equal(record.error, null, record.error?.message)
  assert.equal(record.status, 200)
  assert.equal(record.chunks, events, 'token-bearing events')
  assert.equal(record.token_times.length, events)
  assert.ok(record.first_token_at !== null && record.first_token_at >= record.sent_at, 'TTFT')
  assert.ok(record.end_at >= (record.token_times.at(-1) as number))
  assert.equal(record.token_source, 'usage')
}

test('Responses API with reasoning summary: 654 token events, usage 13 in / 1680 out, 1408 reasoning', async () => {
  const record = await fetchAs('responses', 'openai-responses-reasoning-summary.sse')
  assertStreamed(record, 383 + 271)
  assert.equal(record.input_tokens, 13)
  assert.equal(record.output_tokens, 1680)
  assert.equal(record.cached_tokens, 0)
  assert.equal(record.reasoning_tokens, 1408)
  assert.equal(record.finish_reason, 'stop')
})

test('Responses API with a cached prompt: 8320 of 9463 prompt tokens cached', async () => {
  const record = await fetchAs('responses', 'openai-responses-cached-tokens-web-search.sse')
  assertStreamed(record, 44)
  assert.equal(record.input_tokens, 9463)
  assert.equal(record.output_tokens, 582)
  assert.equal(record.cached_tokens, 8320)
  assert.equal(record.reasoning_tokens, 512)
})

test('Anthropic Messages: thinking, text and tool-use streams', async () => {
  const thinking = await fetchAs('messages', 'anthropic-messages-thinking.sse')
  assertStreamed(thinking, 13 + 95)
  assert.equal(thinking.input_tokens, 43)
  assert.equal(thinking.output_tokens, 282)
  assert.equal(thinking.cached_tokens, 0)
  const basic = await fetchAs('messages', 'anthropic-messages-basic.sse')
  assertStreamed(basic, 3)
  assert.deepEqual([basic.input_tokens, basic.output_tokens, basic.finish_reason], [11, 6, 'stop'])
  const tool = await fetchAs('messages', 'anthropic-messages-tool-use.sse')
  assertStreamed(tool, 7)
  assert.deepEqual([tool.input_tokens, tool.output_tokens, tool.finish_reason], [377, 65, 'tool_calls'])
})

test('a broken stream of each protocol is a classified stream failure', async () => {
  const cases: [Protocol, string, RegExp][] = [
    ['messages', 'messages-malformed', /malformed chunk: not JSON/],
    ['messages', 'messages-truncated', /stream ended without message_stop or a stop_reason/],
    ['messages', 'messages-error', /overloaded_error: Overloaded/],
    ['responses', 'responses-malformed', /malformed chunk: not JSON/],
    ['responses', 'responses-truncated', /stream ended without response.completed/],
    ['responses', 'responses-failed', /server_error: The model crashed/],
    ['embeddings', 'embeddings-malformed', /response body is not JSON/],
    ['embeddings', 'embeddings-no-data', /without data\[\]\.embedding/],
  ]
  for (const [protocol, name, message] of cases) {
    const record = await fetchAs(protocol, name)
    assert.equal(record.error?.class, 'stream', `${name}: ${record.error?.message}`)
    assert.match(record.error?.message ?? '', message, name)
  }
})

test('embeddings: one JSON body, latency only, the prompt tokens from usage', async () => {
  const record = await fetchAs('embeddings', 'embeddings-ok')
  assert.equal(record.error, null)
  assert.equal(record.first_token_at, null, 'no first token to time')
  assert.equal(record.chunks, 0)
  assert.equal(record.input_tokens, 37)
  assert.equal(record.output_tokens, 0)
  assert.equal(record.token_source, 'usage')
  assert.ok(record.end_at > record.sent_at)
})
