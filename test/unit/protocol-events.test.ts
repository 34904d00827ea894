/**
 * The Responses API and Anthropic Messages recordings of test/fixtures/protocols (see its README),
 * parsed as the client parses them (SseParser, then the protocol's interpreter) whole, at every
 * split point (the small ones) and at random splits (all): each split gives the same figures.
 * The expected figures were read off the files, not from this parser:
 *   grep -c '^event: response.output_text.delta' FILE, grep -c '"type": *"thinking_delta"' FILE,
 *   grep -c '"thinking": *""' FILE (empty deltas carry no token), grep -o '"usage": *{[^}]*}' FILE, ...
 */
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import fc from 'fast-check'
import { SseParser } from '../../src/client/sse.js'
import type { Protocol } from '../../src/protocols/names.js'
import { protocolOf } from '../../src/protocols/wire-protocol.js'
import { PROTOCOL_FIXTURE_DIR } from '../helpers/fixtures.js'

interface Figures {
  answerEvents: number
  reasoningEvents: number
  prompt: number | null
  completion: number | null
  cached: number | null
  reasoningTokens: number | null
  finishReason: string | null
  /** Events after which the stream had ended (the terminal event is the last). */
  doneAt: number | null
  events: number
  malformed: number
  errors: string[]
}

function read(bytes: Buffer, protocol: Protocol, cuts: readonly number[]): Figures {
  const interpreter = protocolOf(protocol).interpreter()
  const figures: Figures = {
    answerEvents: 0,
    reasoningEvents: 0,
    prompt: null,
    completion: null,
    cached: null,
    reasoningTokens: null,
    finishReason: null,
    doneAt: null,
    events: 0,
    malformed: 0,
    errors: [],
  }
  const parser = new SseParser((event) => {
    figures.events++
    const info = interpreter.event(event.event, event.data)
    if (info.malformed) figures.malformed++
    if (info.error !== null) figures.errors.push(info.error)
    if (info.tokenBearing) {
      assert.ok(info.text !== '', 'a token-bearing event carries text')
      assert.equal(info.reasoningBearing || info.answerBearing, true)
    }
    if (info.answerBearing) figures.answerEvents++
    if (info.reasoningBearing) figures.reasoningEvents++
    if (info.usage?.prompt_tokens != null) figures.prompt = info.usage.prompt_tokens
    if (info.usage?.completion_tokens != null) figures.completion = info.usage.completion_tokens
    if (info.inBand?.cached_tokens != null) figures.cached = info.inBand.cached_tokens
    if (info.inBand?.reasoning_tokens != null) figures.reasoningTokens = info.inBand.reasoning_tokens
    if (info.finishReason !== null) figures.finishReason = info.finishReason
    if (info.done) figures.doneAt ??= figures.events
  })
  let start = 0
  for (const cut of [...cuts].sort((a, b) => a - b)) {
    parser.push(bytes.subarray(start, cut), 0)
    start = cut
  }
  parser.push(bytes.subarray(start), 0)
  parser.end(0)
  return figures
}

interface Recording {
  name: string
  protocol: Protocol
  expected: Omit<Figures, 'doneAt' | 'malformed' | 'errors'>
  /** Every single split point is tried (small files). */
  everySplit: boolean
}

const RECORDINGS: Recording[] = [
  {
    name: 'openai-responses-reasoning-summary.sse',
    protocol: 'responses',
    // 271 output_text.delta, 383 reasoning_summary_text.delta, none empty; 676 events; usage on response.completed.
    expected: {
      answerEvents: 271,
      reasoningEvents: 383,
      prompt: 13,
      completion: 1680,
      cached: 0,
      reasoningTokens: 1408,
      finishReason: 'stop',
      events: 676,
    },
    everySplit: false,
  },
  {
    name: 'openai-responses-cached-tokens-web-search.sse',
    protocol: 'responses',
    // 44 output_text.delta; the reasoning is not streamed (no summary deltas) though 512 tokens were spent.
    expected: {
      answerEvents: 44,
      reasoningEvents: 0,
      prompt: 9463,
      completion: 582,
      cached: 8320,
      reasoningTokens: 512,
      finishReason: 'stop',
      events: 61,
    },
    everySplit: false,
  },
  {
    name: 'anthropic-messages-thinking.sse',
    protocol: 'messages',
    // 95 text_delta; 14 thinking_delta of which one is empty; input 43 + 0 cache read + 0 cache creation.
    expected: {
      answerEvents: 95,
      reasoningEvents: 13,
      prompt: 43,
      completion: 282,
      cached: 0,
      reasoningTokens: null,
      finishReason: 'stop',
      events: 118,
    },
    everySplit: false,
  },
  {
    name: 'anthropic-messages-basic.sse',
    protocol: 'messages',
    // 3 text_delta; message_start input_tokens 11; message_delta output_tokens 6 (end_turn); no cache fields.
    expected: {
      answerEvents: 3,
      reasoningEvents: 0,
      prompt: 11,
      completion: 6,
      cached: null,
      reasoningTokens: null,
      finishReason: 'stop',
      events: 9,
    },
    everySplit: true,
  },
  {
    name: 'anthropic-messages-tool-use.sse',
    protocol: 'messages',
    // 2 text_delta, the tool_use block's name, 5 input_json_delta of which one is empty: 7 answer events.
    expected: {
      answerEvents: 7,
      reasoningEvents: 0,
      prompt: 377,
      completion: 65,
      cached: 0,
      reasoningTokens: null,
      finishReason: 'tool_calls',
      events: 15,
    },
    everySplit: true,
  },
]

for (const recording of RECORDINGS) {
  const bytes = readFileSync(`${PROTOCOL_FIXTURE_DIR}${recording.name}`)

  test(`${recording.name}: token-bearing events, usage and details as the recording says`, () => {
    const whole = read(bytes, recording.protocol, [])
    const { doneAt, malformed, errors, ...figures } = whole
    assert.deepEqual(figures, recording.expected)
    assert.equal(malformed, 0)
    assert.deepEqual(errors, [])
    assert.equal(doneAt, whole.events, 'the terminal event is the last one')
  })

  if (recording.everySplit) {
    test(`${recording.name}: every split point gives the same figures`, () => {
      const whole = read(bytes, recording.protocol, [])
      for (let cut = 1; cut < bytes.length; cut++)
        assert.deepEqual(read(bytes, recording.protocol, [cut]), whole, `split at byte ${cut}`)
    })
  }

  test(`${recording.name}: random splits give the same figures`, () => {
    const whole = read(bytes, recording.protocol, [])
    fc.assert(
      fc.property(fc.array(fc.nat({ max: bytes.length }), { maxLength: 60 }), (cuts) => {
        assert.deepEqual(read(bytes, recording.protocol, cuts), whole)
      }),
      { numRuns: recording.everySplit ? 300 : 60, seed: 20261203 },
    )
  })
}

test('a malformed event is a malformed chunk in each protocol, never a throw', () => {
  for (const protocol of ['responses', 'messages'] as const) {
    const interpreter = protocolOf(protocol).interpreter()
    for (const data of ['{"type":', 'not json', '[1,2]', 'null', '"a string"']) {
      const info = interpreter.event('', data)
      assert.equal(info.malformed, true, `${protocol}: ${data}`)
      assert.equal(info.tokenBearing, false)
    }
    // Well-formed JSON of unexpected shape carries nothing, and is not an error.
    for (const data of [
      '{}',
      '{"type":"response.output_text.delta","delta":5}',
      '{"type":"content_block_delta","delta":null}',
    ]) {
      const info = interpreter.event('', data)
      assert.equal(info.malformed || info.tokenBearing || info.error !== null, false, `${protocol}: ${data}`)
    }
  }
})

test('error events of each protocol say the server words, with code and type in front', () => {
  const responses = protocolOf('responses').interpreter()
  const failed = responses.event(
    'response.failed',
    '{"type":"response.failed","response":{"status":"failed","error":{"code":"server_error","message":"The model crashed"}}}',
  )
  assert.equal(failed.error, 'server_error: The model crashed')
  const error = responses.event(
    'error',
    '{"type":"error","code":"rate_limit_exceeded","message":"Slow down","param":null}',
  )
  assert.equal(error.error, 'rate_limit_exceeded: Slow down')
  const messages = protocolOf('messages').interpreter()
  const overloaded = messages.event(
    'error',
    '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}',
  )
  assert.equal(overloaded.error, 'overloaded_error: Overloaded')
})

test('the event name is used when the data has no type (a server that sends it only on the event: line)', () => {
  const info = protocolOf('responses').interpreter().event('response.output_text.delta', '{"delta":"Hi"}')
  assert.equal(info.answerBearing, true)
  assert.equal(info.text, 'Hi')
  const thinking = protocolOf('messages')
    .interpreter()
    .event('content_block_delta', '{"delta":{"type":"thinking_delta","thinking":"hmm"}}')
  assert.equal(thinking.reasoningBearing, true)
})

test('response.incomplete at max_output_tokens ends the stream as a length finish, with its usage', () => {
  const info = protocolOf('responses')
    .interpreter()
    .event(
      'response.incomplete',
      '{"type":"response.incomplete","response":{"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"usage":{"input_tokens":5,"output_tokens":16}}}',
    )
  assert.equal(info.done, true)
  assert.equal(info.finishReason, 'length')
  assert.deepEqual(info.usage, { prompt_tokens: 5, completion_tokens: 16 })
})

test('Anthropic prompt tokens count the cached ones in, as OpenAI prompt_tokens do', () => {
  const info = protocolOf('messages')
    .interpreter()
    .event(
      'message_start',
      '{"type":"message_start","message":{"usage":{"input_tokens":10,"cache_read_input_tokens":300,"cache_creation_input_tokens":20,"output_tokens":1}}}',
    )
  assert.deepEqual(info.usage, { prompt_tokens: 330, completion_tokens: null })
  assert.equal(info.inBand?.cached_tokens, 300)
})

test('non-streamed bodies: Responses output items, Messages content blocks, embeddings usage', () => {
  const responses = protocolOf('responses')
    .interpreter()
    .body({
      object: 'response',
      status: 'completed',
      output: [
        { type: 'reasoning', summary: [{ type: 'summary_text', text: 'thinking' }] },
        { type: 'message', content: [{ type: 'output_text', text: ' answer' }] },
      ],
      usage: { input_tokens: 7, output_tokens: 9, output_tokens_details: { reasoning_tokens: 4 } },
    })
  assert.equal(responses.text, 'thinking answer')
  assert.equal(responses.reasoningBearing && responses.answerBearing, true)
  assert.deepEqual(responses.usage, { prompt_tokens: 7, completion_tokens: 9 })
  assert.equal(responses.inBand?.reasoning_tokens, 4)
  const messages = protocolOf('messages')
    .interpreter()
    .body({
      type: 'message',
      content: [
        { type: 'thinking', thinking: 'hmm' },
        { type: 'text', text: 'Hi' },
      ],
      stop_reason: 'max_tokens',
      usage: { input_tokens: 3, output_tokens: 2 },
    })
  assert.equal(messages.text, 'hmmHi')
  assert.equal(messages.finishReason, 'length')
  assert.deepEqual(messages.usage, { prompt_tokens: 3, completion_tokens: 2 })
  const embeddings = protocolOf('embeddings')
    .interpreter()
    .body({
      object: 'list',
      data: [{ object: 'embedding', index: 0, embedding: [0.1, 0.2] }],
      usage: { prompt_tokens: 12, total_tokens: 12 },
    })
  assert.equal(embeddings.tokenBearing, false)
  assert.deepEqual(embeddings.usage, { prompt_tokens: 12, completion_tokens: 0 })
  assert.equal(embeddings.error, null)
  assert.match(protocolOf('embeddings').interpreter().body({ object: 'list' }).error ?? '', /without data/)
})
