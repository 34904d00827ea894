import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { after, before, test } from 'node:test'
import { countTokens } from 'gpt-tokenizer'
import { Pool } from 'undici'
import { SseParser } from '../../src/client/sse.js'
import { type RequestPlan, sendRequest } from '../../src/client/stream-client.js'
import type { Target } from '../../src/client/target.js'
import { interpretChunk } from '../../src/protocols/chunk.js'
import type { RequestRecord } from '../../src/records/types.js'
import { completeTokenCounts } from '../../src/workload/token-counts.js'
import { PROTOCOL_FIXTURE_DIR, readSseFixture, sseFixtureNames } from '../helpers/fixtures.js'
import { type ReplayServer, startReplayServer } from '../helpers/replay-server.js'

/** Recordings cut short by the people who quoted them: no [DONE], no finish_reason. */
const TRUNCATED = new Set([
  'deepseek_api_reasoning_chunk_excerpt.sse',
  'sglang_style_reasoning_content_excerpt.sse',
  'vllm_r1_distill_reasoning_content_excerpt.sse',
  'vllm_reasoning_chunk_no_content_key_excerpt.sse',
])
const ERROR_STREAMS: Record<string, RegExp> = {
  'llamacpp_midstream_error_event.sse': /context shift is disabled/,
  'mockllm_error_in_200_stream.sse': /Simulated failure/,
}

let server: ReplayServer
let pool: Pool

before(async () => {
  server = await startReplayServer((path) => {
    const name = decodeURIComponent(path.split('/').pop() ?? '')
    return {
      // /v1/protocols/NAME: a recording of test/fixtures/protocols (in-band timings and usage details).
      body: path.includes('/protocols/')
        ? readFileSync(`${PROTOCOL_FIXTURE_DIR}${name}`)
        : readSseFixture(name),
      contentType: name === 'openai_api_mock_stream.sse' ? null : 'text/event-stream',
      chunkBytes: 97,
    }
  })
  pool = new Pool(new URL(server.url).origin, { connections: 4 })
})

after(async () => {
  await pool.destroy()
  await server.close()
})

function target(): Target {
  return {
    dispatcher: pool,
    origin: new URL(server.url).origin,
    path: '',
    headers: { 'content-type': 'application/json' },
    stream: true,
    timeoutMs: 10_000,
    firstTokenTimeoutMs: null,
    idleTimeoutMs: 10_000,
    secrets: [],
  }
}

const PLAN: RequestPlan = {
  seq: 0,
  worker: 0,
  level: 1,
  phase: 'measure',
  prompt_id: 0,
  scheduled_at: null,
  attempt: 1,
  body: Buffer.from('{}'),
}

async function fetchFixture(name: string): Promise<RequestRecord> {
  const record = await sendRequest({ ...target(), path: `/v1/replay/${encodeURIComponent(name)}` }, PLAN)
  // The client carries the text; the main thread counts it (as run-gradient does).
  assert.equal(typeof record.output_text, 'string')
  return completeTokenCounts(record)
}

/** The fixture's usage and generated text, read without the client. */
function truth(name: string): { usage: number | null; text: string; events: number } {
  let usage: number | null = null
  let text = ''
  let events = 0
  const parser = new SseParser((event) => {
    if (event.data === '' || event.data === '[DONE]') return
    const info = interpretChunk(event.data)
    if (info.usage !== null) usage = info.usage.completion_tokens
    if (info.tokenBearing) events++
    text += info.text
  })
  parser.push(readSseFixture(name), 0)
  parser.end(0)
  return { usage, text, events }
}

for (const name of sseFixtureNames()) {
  test(`client over loopback: ${name}`, { timeout: 15_000 }, async () => {
    const record = await fetchFixture(name)
    const expected = truth(name)
    assert.equal(record.status, 200)
    assert.equal(record.chunks, expected.events, 'token-bearing events')
    assert.equal(record.token_times.length, expected.events)
    if (expected.events > 0) {
      assert.ok(record.first_token_at !== null && record.first_token_at >= record.sent_at)
      assert.ok(record.end_at >= (record.token_times.at(-1) as number))
    }
    if (TRUNCATED.has(name)) {
      assert.equal(record.error?.class, 'stream')
      assert.match(record.error?.message ?? '', /without \[DONE\]/)
      return
    }
    const errorPattern = ERROR_STREAMS[name]
    if (errorPattern !== undefined) {
      assert.equal(record.error?.class, 'stream')
      assert.match(record.error?.message ?? '', errorPattern)
      return
    }
    assert.equal(record.error, null, `unexpected error: ${record.error?.message}`)
    if (expected.usage !== null) {
      assert.equal(record.token_source, 'usage')
      assert.equal(record.output_tokens, expected.usage)
      assert.equal(record.tokenizer_output_tokens, countTokens(expected.text))
    } else {
      assert.equal(record.token_source, 'tokenizer')
      assert.equal(record.output_tokens, countTokens(expected.text))
    }
  })
}

test('a chunk is not a token: mock-llm sends 4-character chunks, counted by the text they spell', async () => {
  const record = await fetchFixture('mockllm_chat_char_chunks.sse')
  const text = truth('mockllm_chat_char_chunks.sse').text
  assert.equal(
    text,
    'The quick brown fox jumps over the lazy dog. Pack my box with five dozen liquor jugs. 0123456789',
  )
  assert.equal(record.chunks, 24)
  assert.equal(record.output_tokens, countTokens(text))
  assert.notEqual(record.output_tokens, record.chunks)
})

/** One request to `origin` through a pool of its own, closed afterwards. */
async function requestOnce(origin: string, timeoutMs = 10_000): Promise<RequestRecord> {
  const onePool = new Pool(origin)
  try {
    return await sendRequest(
      { ...target(), dispatcher: onePool, origin, path: '/v1/chat/completions', timeoutMs },
      PLAN,
    )
  } finally {
    await onePool.destroy()
  }
}

test('HTTP error status keeps class, status and the server message', async () => {
  const errorServer = await startReplayServer(() => ({
    status: 429,
    contentType: 'application/json',
    body: Buffer.from(
      '{"error":{"message":"Rate limit reached for key sk-abcdefghijklmnop","type":"rate_limit"}}',
    ),
  }))
  try {
    const record = await requestOnce(new URL(errorServer.url).origin)
    assert.equal(record.status, 429)
    assert.equal(record.error?.class, 'http_429')
    assert.match(record.error?.message ?? '', /^HTTP 429: Rate limit reached/)
    assert.ok(!(record.error?.message ?? '').includes('sk-abcdefghijklmnop'), 'key-like strings are redacted')
  } finally {
    await errorServer.close()
  }
})

test('connection refused is a connection failure, and a slow stream is a timeout, never a hang', async () => {
  const closed = await startReplayServer(() => ({ body: Buffer.alloc(0) }))
  await closed.close()
  const refused = await requestOnce(new URL(closed.url).origin)
  assert.equal(refused.error?.class, 'connection')

  const slow = await startReplayServer(() => ({
    body: readSseFixture('openai_gpt4o_long_text.sse'),
    chunkBytes: 200,
    gapMs: 50,
  }))
  try {
    const began = performance.now()
    const record = await requestOnce(new URL(slow.url).origin, 300)
    const waited = performance.now() - began
    assert.equal(record.error?.class, 'timeout')
    // The 300 ms timer starts when the request is handed to undici; sent_at is stamped when undici
    // writes it, after connecting (a millisecond on an idle loopback, tens on a busy host), so the
    // record's span is what the caller waited less the connect. The whole stream takes 11.8 s: an
    // answer within 5 s was cut by the timer, not by the stream's end.
    const elapsed = record.end_at - record.sent_at
    assert.ok(waited >= 299 && waited < 5000, `answered after ${waited} ms`)
    assert.ok(
      elapsed > 0 && elapsed <= waited,
      `timed out ${elapsed} ms after sending, ${waited} ms after the call`,
    )
    assert.ok(record.chunks > 0, 'tokens received before the timeout are kept')
  } finally {
    await slow.close()
  }
})

/** Replays a recording of test/fixtures/protocols through the client. */
function fetchProtocolRecording(name: string): Promise<RequestRecord> {
  return sendRequest({ ...target(), path: `/v1/protocols/${encodeURIComponent(name)}` }, PLAN)
}

test('a llama.cpp stream leaves its timings on the record', { timeout: 15_000 }, async () => {
  const record = await fetchProtocolRecording('llamacpp_chat_timings.sse')
  assert.equal(record.error, null)
  assert.deepEqual(record.server_timings, {
    prompt_n: 31,
    prompt_ms: 23.773,
    predicted_n: 12,
    predicted_ms: 80.418,
    cache_n: null,
  })
  assert.equal(record.cached_tokens, null)
  assert.equal(record.reasoning_tokens, null)
  assert.equal(record.input_tokens, 31)
})

test('OpenAI-style usage details land on the record; no timings', { timeout: 15_000 }, async () => {
  const record = await fetchProtocolRecording('openrouter-chat-reasoning-comments.sse')
  assert.equal(record.error, null)
  assert.equal(record.server_timings, null)
  assert.equal(record.cached_tokens, 0)
  assert.equal(record.reasoning_tokens, 13)
  assert.equal(record.input_tokens, 43)
})
