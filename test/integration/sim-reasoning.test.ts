/** The simulator's reasoning phase over real HTTP on 127.0.0.1: what each format and option sends. */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { request } from 'undici'
import { type SimulatorOptions, startSimulator } from '../../src/sim/server.js'

const FAST: SimulatorOptions = {
  prefill_base_ms: 1,
  prefill_ms_per_token: 0,
  decode_base_ms: 1,
  decode_ms_per_seq: 0,
}

type Json = Record<string, unknown>

/** Every data payload of one response (or the JSON body), with the simulator closed after. */
async function exchange(options: SimulatorOptions, path: string, body: Json): Promise<Json[]> {
  const sim = await startSimulator({ ...FAST, ...options })
  try {
    const response = await request(`${sim.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'llmbench-sim', ...body }),
    })
    const text = await response.body.text()
    assert.equal(response.statusCode, 200, text)
    if (body.stream !== true) return [JSON.parse(text) as Json]
    return text
      .split('\n\n')
      .map((event) => event.replace(/^data: /, ''))
      .filter((data) => data !== '' && data !== '[DONE]')
      .map((data) => JSON.parse(data) as Json)
  } finally {
    await sim.close()
  }
}

const CHAT = {
  messages: [{ role: 'user', content: 'hi' }],
  stream: true,
  stream_options: { include_usage: true },
}

function deltas(chunks: Json[]): Json[] {
  return chunks.flatMap((chunk) => (chunk.choices as Json[]).map((choice) => choice.delta as Json))
}

const usageOf = (chunks: Json[]): Json => chunks.find((chunk) => chunk.usage !== undefined)?.usage as Json

test('chat stream: reasoning_content deltas, then content deltas, usage reasoning_tokens', async () => {
  const chunks = await exchange({ reasoning: { tokens: 5 } }, '/chat/completions', { ...CHAT, max_tokens: 9 })
  const kinds = deltas(chunks)
    .filter((delta) => delta.reasoning_content !== undefined || (delta.content ?? '') !== '')
    .map((delta) => (delta.reasoning_content === undefined ? 'answer' : 'reasoning'))
  assert.deepEqual(kinds, [...Array(5).fill('reasoning'), ...Array(4).fill('answer')])
  assert.deepEqual(usageOf(chunks).completion_tokens_details, { reasoning_tokens: 5 })
  assert.equal(usageOf(chunks).completion_tokens, 9)
})

test('max_tokens below the reasoning tokens: the response is all thinking, as a real one cut short is', async () => {
  const chunks = await exchange({ reasoning: { tokens: 50 } }, '/chat/completions', {
    ...CHAT,
    max_tokens: 4,
  })
  assert.equal(deltas(chunks).filter((delta) => delta.reasoning_content !== undefined).length, 4)
  assert.equal(deltas(chunks).filter((delta) => (delta.content ?? '') !== '').length, 0)
  assert.deepEqual(usageOf(chunks).completion_tokens_details, { reasoning_tokens: 4 })
})

test('hidden reasoning: no reasoning event, fewer events than tokens, usage still counts the thinking', async () => {
  const chunks = await exchange({ reasoning: { tokens: 5, hidden: true } }, '/chat/completions', {
    ...CHAT,
    max_tokens: 9,
  })
  assert.equal(deltas(chunks).filter((delta) => delta.reasoning_content !== undefined).length, 0)
  assert.equal(deltas(chunks).filter((delta) => (delta.content ?? '') !== '').length, 4)
  assert.deepEqual(usageOf(chunks).completion_tokens_details, { reasoning_tokens: 5 })
  assert.equal(usageOf(chunks).completion_tokens, 9)
})

test('several tokens per event: no event mixes thinking and answer', async () => {
  const chunks = await exchange(
    { reasoning: { tokens: 5 }, quirks: { tokens_per_event: 3 } },
    '/chat/completions',
    {
      ...CHAT,
      max_tokens: 11,
    },
  )
  const words = (text: unknown): number => (typeof text === 'string' ? text.split(' ').length - 1 : 0)
  const events = deltas(chunks).filter(
    (delta) => delta.reasoning_content !== undefined || (delta.content ?? '') !== '',
  )
  assert.deepEqual(
    events.map((delta) => [
      delta.reasoning_content === undefined ? 'answer' : 'reasoning',
      words(delta.reasoning_content ?? delta.content),
    ]),
    [
      ['reasoning', 3],
      ['reasoning', 2],
      ['answer', 1],
      ['answer', 3],
      ['answer', 2],
    ],
  )
})

test('non-streamed chat: reasoning_content beside content in the message; completions have no reasoning phase', async () => {
  const [chat] = await exchange({ reasoning: { tokens: 3 } }, '/chat/completions', {
    messages: [{ role: 'user', content: 'hi' }],
    max_tokens: 7,
  })
  const message = ((chat as Json).choices as Json[])[0]?.message as Json
  assert.equal((message.reasoning_content as string).split(' ').length - 1, 3)
  assert.equal((message.content as string).split(' ').length - 1, 4)
  assert.deepEqual(((chat as Json).usage as Json).completion_tokens_details, { reasoning_tokens: 3 })
  const [completion] = await exchange({ reasoning: { tokens: 3 } }, '/completions', {
    prompt: 'hi',
    max_tokens: 7,
  })
  const text = String(((completion as Json).choices as Json[])[0]?.text)
  assert.equal(text.split(' ').length - 1, 7)
  assert.equal(((completion as Json).usage as Json).completion_tokens_details, undefined)
})

test('a reasoning token count that is not a non-negative integer is refused', async () => {
  await assert.rejects(startSimulator({ reasoning: { tokens: -1 } }), RangeError)
  await assert.rejects(startSimulator({ reasoning: { tokens: 1.5 } }), RangeError)
})
