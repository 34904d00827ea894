import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { after, before, test } from 'node:test'
import { Pool } from 'undici'
import { type RequestPlan, sendRequest, type Target } from '../../src/client/stream-client.js'
import { PROTOCOL_FIXTURE_DIR } from '../helpers/fixtures.js'
import { type ReplayServer, startReplayServer } from '../helpers/replay-server.js'

let server: ReplayServer
let pool: Pool

before(async () => {
  server = await startReplayServer((path) => ({
    body: readFileSync(`${PROTOCOL_FIXTURE_DIR}${decodeURIComponent(path.split('/').pop() ?? '')}`),
    // Small writes: the last chunk (timings, usage) arrives cut across reads.
    chunkBytes: 61,
  }))
  pool = new Pool(new URL(server.url).origin, { connections: 2 })
})

after(async () => {
  await pool.destroy()
  await server.close()
})

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

function fetchRecording(name: string) {
  const target: Target = {
    dispatcher: pool,
    origin: new URL(server.url).origin,
    path: `/v1/replay/${encodeURIComponent(name)}`,
    headers: { 'content-type': 'application/json' },
    stream: true,
    timeoutMs: 10_000,
    firstTokenTimeoutMs: null,
    idleTimeoutMs: 10_000,
    secrets: [],
  }
  return sendRequest(target, PLAN)
}

test('a llama.cpp stream leaves its timings on the record', { timeout: 15_000 }, async () => {
  const record = await fetchRecording('llamacpp_chat_timings.sse')
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
  const record = await fetchRecording('openrouter-chat-reasoning-comments.sse')
  assert.equal(record.error, null)
  assert.equal(record.server_timings, null)
  assert.equal(record.cached_tokens, 0)
  assert.equal(record.reasoning_tokens, 13)
  assert.equal(record.input_tokens, 43)
})
