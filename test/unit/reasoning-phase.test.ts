import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import fc from 'fast-check'
import { countTokens } from 'gpt-tokenizer'
import { ReasoningPhase } from '../../src/client/reasoning-phase.js'
import { SseParser } from '../../src/client/sse.js'
import { interpretChunk } from '../../src/protocols/chunk.js'
import type { RequestRecord } from '../../src/records/types.js'
import { completeReasoningCounts } from '../../src/workload/reasoning-counts.js'
import { PROTOCOL_FIXTURE_DIR, SSE_FIXTURE_DIR } from '../helpers/fixtures.js'
import { makeRecord } from '../helpers/records.js'

/** The recordings that carry reasoning (see the READMEs of test/fixtures/sse and test/fixtures/protocols). */
const RECORDINGS = [
  `${SSE_FIXTURE_DIR}vllm_r1_distill_reasoning_content_excerpt.sse`,
  `${SSE_FIXTURE_DIR}deepseek_api_reasoning_chunk_excerpt.sse`,
  `${SSE_FIXTURE_DIR}sglang_style_reasoning_content_excerpt.sse`,
  `${SSE_FIXTURE_DIR}vllm_reasoning_chunk_no_content_key_excerpt.sse`,
  `${PROTOCOL_FIXTURE_DIR}openrouter-chat-reasoning-comments.sse`,
  `${PROTOCOL_FIXTURE_DIR}openai-chat-2024-usage-reasoning-tokens.sse`,
]

interface ExpectedEvent {
  /** Offset of the byte that ends the event (its blank line's newline): the parser dispatches it there. */
  end: number
  reasoning: string
  answer: boolean
}

/**
 * What each recording holds, read here with plain JSON (not with the client's parser): the offset
 * where each data event ends, its reasoning text and whether it carries an answer.
 */
function expectedEvents(bytes: Buffer): ExpectedEvent[] {
  const text = bytes.toString('latin1') // one char per byte: offsets are byte offsets
  assert.ok(!text.includes('\r'), 'the offsets below assume LF line ends')
  const events: ExpectedEvent[] = []
  let at = 0
  while (at < text.length) {
    const blank = text.indexOf('\n\n', at)
    const end = blank === -1 ? text.length - 1 : blank + 1
    const block = text.slice(at, end + 1)
    at = end + 1
    const data = block
      .split('\n')
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice(5).trimStart())
      .join('\n')
    if (data === '' || data === '[DONE]' || blank === -1) continue
    const parsed = JSON.parse(Buffer.from(data, 'latin1').toString('utf8')) as {
      choices?: { delta?: Record<string, unknown> }[]
    }
    let reasoning = ''
    let answer = false
    for (const choice of parsed.choices ?? []) {
      const delta = choice.delta ?? {}
      for (const key of ['reasoning_content', 'reasoning'])
        if (typeof delta[key] === 'string') reasoning += delta[key]
      if (typeof delta.content === 'string' && delta.content !== '') answer = true
    }
    events.push({ end, reasoning, answer })
  }
  return events
}

/** Feeds the bytes in pieces cut at `cuts`, each stamped with its piece number, as the client does. */
function phasesOf(bytes: Buffer, cuts: number[]): RequestRecord {
  const record = makeRecord({ sent_at: 0, first_reasoning_at: null, first_answer_at: null })
  const phase = new ReasoningPhase()
  const parser = new SseParser((event, at) => {
    if (event.data === '') return
    const info = interpretChunk(event.data)
    if (info.tokenBearing) phase.onEvent(record, info, at)
  })
  let start = 0
  const sorted = [...cuts].sort((a, b) => a - b)
  sorted.forEach((cut, piece) => {
    parser.push(bytes.subarray(start, cut), piece)
    start = cut
  })
  parser.push(bytes.subarray(start), sorted.length)
  parser.end(sorted.length)
  phase.finish(record)
  return record
}

/** The piece (number of cuts at or before it) that holds byte `offset`. */
const pieceOf = (offset: number, cuts: number[]): number => cuts.filter((cut) => cut <= offset).length

for (const path of RECORDINGS) {
  const name = path.split('/').pop() as string
  const bytes = readFileSync(path)
  const events = expectedEvents(bytes)
  const firstReasoning = events.find((event) => event.reasoning !== '')
  const firstAnswer = events.find((event) => event.answer)

  test(`${name}: first reasoning and answer events land where the recording has them, however it is split`, () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: bytes.length }), { maxLength: 40 }), (cuts) => {
        const record = phasesOf(bytes, cuts)
        const expect = (event: ExpectedEvent | undefined): number | null =>
          event === undefined ? null : pieceOf(event.end, cuts)
        assert.equal(record.first_reasoning_at, expect(firstReasoning))
        assert.equal(record.first_answer_at, expect(firstAnswer))
        assert.equal(record.reasoning_events ?? 0, events.filter((event) => event.reasoning !== '').length)
        const reasoningText = events.map((event) => event.reasoning).join('')
        assert.equal(record.reasoning_text ?? '', reasoningText)
        if (record.first_reasoning_at != null && record.first_answer_at != null)
          assert.ok(record.first_reasoning_at <= record.first_answer_at)
      }),
      { numRuns: 150, seed: 20261203 },
    )
  })

  if (firstReasoning !== undefined && firstAnswer !== undefined)
    test(`${name}: each event in a read of its own: reasoning strictly before the answer`, () => {
      const record = phasesOf(
        bytes,
        events.map((event) => event.end + 1),
      )
      assert.ok((record.first_reasoning_at as number) < (record.first_answer_at as number))
    })
}

test('the recordings with both phases are the ones expected (the strict test above runs on them)', () => {
  const both = RECORDINGS.filter((path) => {
    const events = expectedEvents(readFileSync(path))
    return events.some((event) => event.reasoning !== '') && events.some((event) => event.answer)
  }).map((path) => path.split('/').pop())
  assert.deepEqual(both, [
    'vllm_r1_distill_reasoning_content_excerpt.sse',
    'openrouter-chat-reasoning-comments.sse',
  ])
})

const count = (text: string): number => countTokens(text)

test('reasoning tokens: usage first, whatever the events say', () => {
  const record = completeReasoningCounts(
    makeRecord({
      output_tokens: 40,
      token_source: 'usage',
      chunks: 40,
      reasoning_tokens: 13,
      reasoning_events: 20,
      reasoning_text: 'some thinking',
    }),
    count,
  )
  assert.equal(record.reasoning_output_tokens, 13)
  assert.equal(record.reasoning_token_source, 'usage')
  assert.equal(record.reasoning_text, undefined)
})

test('reasoning tokens: the events, when usage confirms one token per event', () => {
  const record = completeReasoningCounts(
    makeRecord({
      output_tokens: 30,
      token_source: 'usage',
      chunks: 30,
      reasoning_tokens: null,
      reasoning_events: 12,
      reasoning_text: 'x'.repeat(500),
    }),
    count,
  )
  assert.equal(record.reasoning_output_tokens, 12)
  assert.equal(record.reasoning_token_source, 'events')
})

test('reasoning tokens: the tokenizer on the reasoning text when events are not tokens, never above the output', () => {
  const text = ' the model thinks about the request and the answer'
  const batched = completeReasoningCounts(
    makeRecord({
      output_tokens: 100,
      token_source: 'usage',
      chunks: 50,
      reasoning_events: 4,
      reasoning_text: text,
    }),
    count,
  )
  assert.equal(batched.reasoning_output_tokens, countTokens(text))
  assert.equal(batched.reasoning_token_source, 'tokenizer')
  const capped = completeReasoningCounts(
    makeRecord({
      output_tokens: 3,
      token_source: 'tokenizer',
      chunks: 3,
      reasoning_events: 3,
      reasoning_text: text,
    }),
    count,
  )
  assert.equal(capped.reasoning_output_tokens, 3)
})

test('reasoning tokens: a request that did not reason gets no reasoning fields (usage 0, no events)', () => {
  const record = completeReasoningCounts(
    makeRecord({ output_tokens: 20, token_source: 'usage', chunks: 20, reasoning_tokens: 0 }),
    count,
  )
  assert.equal(record.reasoning_output_tokens, undefined)
  assert.equal(record.reasoning_token_source, undefined)
})
