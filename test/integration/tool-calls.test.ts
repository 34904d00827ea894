import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { Pool } from 'undici'
import { type RequestPlan, sendRequest } from '../../src/client/stream-client.js'
import { OutputCheck } from '../../src/workload/output-check.js'
import { readSseFixture } from '../helpers/fixtures.js'
import { type ReplayServer, startReplayServer } from '../helpers/replay-server.js'

/**
 * A real tool-call stream (OpenAI gpt-4o, two parallel calls: test/fixtures/sse/README.md) through
 * the client: the calls are merged from their deltas, the first delta timed, and each call's
 * arguments validated against the function it names.
 */

let server: ReplayServer
let pool: Pool

before(async () => {
  server = await startReplayServer(() => ({
    body: readSseFixture('openai_gpt4o_parallel_tool_calls.sse'),
    contentType: 'text/event-stream',
    chunkBytes: 61,
  }))
  pool = new Pool(new URL(server.url).origin, { connections: 1 })
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

function fetchCalls(url = server.url, dispatcher = pool) {
  return sendRequest(
    {
      dispatcher,
      origin: new URL(url).origin,
      path: '/v1/chat/completions',
      headers: { 'content-type': 'application/json' },
      stream: true,
      timeoutMs: 10_000,
      firstTokenTimeoutMs: null,
      idleTimeoutMs: 10_000,
      secrets: [],
    },
    PLAN,
  )
}

const WEATHER = {
  name: 'GetWeatherArgs',
  parameters: {
    type: 'object',
    properties: { city: { type: 'string' }, country: { type: 'string' }, units: { enum: ['c', 'f'] } },
    required: ['city', 'country', 'units'],
    additionalProperties: false,
  },
}
const STOCK = {
  name: 'get_stock_price',
  parameters: {
    type: 'object',
    properties: { ticker: { type: 'string' }, exchange: { type: 'string' } },
    required: ['ticker', 'exchange'],
  },
}

test('streamed tool calls are merged by index, the first delta timed, and each validated against its function', async () => {
  const record = await fetchCalls()
  assert.equal(record.error, null)
  assert.deepEqual(
    record.tool_call_parts?.map((call) => [call.name, JSON.parse(call.arguments)]),
    [
      ['GetWeatherArgs', { city: 'Edinburgh', country: 'GB', units: 'c' }],
      ['get_stock_price', { ticker: 'AAPL', exchange: 'NASDAQ' }],
    ],
  )
  const first = record.first_tool_call_at
  assert.ok(first != null && first >= record.sent_at && first <= record.end_at)
  assert.equal(
    first,
    record.first_token_at,
    'the calls are the whole answer: the first token is the first call',
  )
  new OutputCheck({ schema: null, tools: [WEATHER, STOCK], toolChoice: 'auto' }).check(record)
  assert.equal(record.tool_calls, 2)
  assert.equal(record.tool_call_source, 'deltas')
  assert.equal(record.tool_check, 'valid')
  assert.equal(record.tool_call_parts, undefined, 'the parts are transient')
})

test('a call to a function not offered, or arguments its schema refuses, is invalid', async () => {
  const unknown = await fetchCalls()
  new OutputCheck({ schema: null, tools: [WEATHER], toolChoice: 'auto' }).check(unknown)
  assert.equal(unknown.tool_check, 'invalid')
  const refused = await fetchCalls()
  const strict = { ...WEATHER, parameters: { ...WEATHER.parameters, required: ['city', 'postcode'] } }
  new OutputCheck({ schema: null, tools: [strict, STOCK], toolChoice: 'auto' }).check(refused)
  assert.equal(refused.tool_check, 'invalid')
})

/** A stream of tool-call deltas written by hand: each entry one chunk's `tool_calls`. */
function toolCallStream(deltas: unknown[][]): Buffer {
  const chunks = deltas.map(
    (calls) => `data: ${JSON.stringify({ choices: [{ index: 0, delta: { tool_calls: calls } }] })}\n\n`,
  )
  const end = `data: ${JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] })}\n\ndata: [DONE]\n\n`
  return Buffer.from(chunks.join('') + end)
}

test('a tool-call index of 1e9 is merged as any other (issue 36: a sparse array walked for minutes); calls come in index order', async () => {
  const hostile = await startReplayServer(() => ({
    body: toolCallStream([
      [{ index: 1_000_000_000, function: { name: 'get_stock_price', arguments: '{"ticker":' } }],
      [
        {
          index: 0,
          function: { name: 'GetWeatherArgs', arguments: '{"city":"Oslo","country":"NO","units":"c"}' },
        },
      ],
      [{ index: 1_000_000_000, function: { arguments: '"AAPL","exchange":"NASDAQ"}' } }],
    ]),
  }))
  const hostilePool = new Pool(new URL(hostile.url).origin, { connections: 1 })
  try {
    const record = await fetchCalls(hostile.url, hostilePool)
    assert.equal(record.error, null)
    assert.deepEqual(
      record.tool_call_parts?.map((call) => call.name),
      ['GetWeatherArgs', 'get_stock_price'],
    )
    new OutputCheck({ schema: null, tools: [WEATHER, STOCK], toolChoice: 'auto' }).check(record)
    assert.equal(record.tool_check, 'valid')
  } finally {
    await hostilePool.destroy()
    await hostile.close()
  }
})

test('a schema pattern that backtracks exponentially is checked in bounded time; one that cannot be bounded is refused', () => {
  const schema = {
    type: 'object',
    properties: { a: { type: 'string', pattern: '^(a+)+$' } },
    required: ['a'],
  }
  const check = new OutputCheck({ schema: { name: 'catastrophic', schema }, tools: null, toolChoice: 'auto' })
  // 2^40 paths for a backtracking matcher: minutes at the least without the bound.
  const record = { error: null, finish_reason: 'stop', output_text: `{"a":"${'a'.repeat(40)}!"}` }
  check.check(record as never)
  assert.equal((record as { schema_check?: string }).schema_check, 'invalid')
  const good = { error: null, finish_reason: 'stop', output_text: `{"a":"${'a'.repeat(40)}"}` }
  check.check(good as never)
  assert.equal((good as { schema_check?: string }).schema_check, 'valid')
  const backreference = { ...schema, properties: { a: { type: 'string', pattern: '^(a+)+\\1$' } } }
  assert.throws(
    () =>
      new OutputCheck({
        schema: { name: 'backreference', schema: backreference },
        tools: null,
        toolChoice: 'auto',
      }),
    /properties\.a\.pattern "\^\(a\+\)\+\\\\1\$" cannot be matched in bounded time/,
  )
})
