import assert from 'node:assert/strict'
import { test } from 'node:test'
import fc from 'fast-check'
import { SseParser } from '../../src/client/sse.js'
import { interpretChunk } from '../../src/protocols/chunk.js'
import { ChatChunkReader } from '../../src/protocols/chunk-shape.js'
import { readSseFixture, sseFixtureNames } from '../helpers/fixtures.js'

/** The reader must say exactly what a full parse says, chunk after chunk of one stream. */
function assertSameAsFullParse(payloads: readonly string[]): ChatChunkReader {
  const reader = new ChatChunkReader()
  for (const payload of payloads)
    assert.deepEqual({ ...reader.read(payload) }, interpretChunk(payload), payload)
  return reader
}

const vllmChunk = (content: string): string =>
  `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":${JSON.stringify(content)}},"logprobs":null,"finish_reason":null}]}`

test('a stream whose token chunks differ only in content is read without a parse, and read the same', () => {
  const texts = [
    ' Hello',
    ',',
    ' world',
    ' "quoted"',
    ' back\\slash',
    ' tab\there',
    ' é ✓ 🙂',
    ' \u2028',
    'x',
  ]
  assert.equal(assertSameAsFullParse(texts.map(vllmChunk)).shapeKnown, true)
  // A payload that merely starts and ends like the shape but is something else is parsed in full.
  assertSameAsFullParse([
    vllmChunk('a'),
    vllmChunk('b').replace('"content":"b"', '"content":"b","refusal":"no"'),
    vllmChunk('c').replace('"finish_reason":null', '"finish_reason":"stop"'),
    vllmChunk('').replace('"content":""', '"content":"a\\u0041"'),
    `${vllmChunk('d').slice(0, -1)},"usage":{"prompt_tokens":1,"completion_tokens":2}}`,
    vllmChunk('a"}}],"x":{"y":"'),
    'not json',
    '[DONE]',
  ])
})

test('any sequence of contents, some with escapes or control characters, reads as a full parse does', () => {
  fc.assert(
    fc.property(
      fc.array(fc.string({ unit: 'binary', maxLength: 8 }), { minLength: 1, maxLength: 12 }),
      (texts) => {
        assertSameAsFullParse(texts.map(vllmChunk))
        // Raw control characters make the payload invalid JSON: malformed, whichever path reads it.
        assertSameAsFullParse(
          texts.map((text) => vllmChunk('ok').replace('"ok"', `"${text.replace(/["\\]/g, '')}"`)),
        )
      },
    ),
    { numRuns: 300 },
  )
})

test('shapes that cannot stand for their chunks are never learned (two choices, reasoning); a duplicate key reads as its last', () => {
  const twoChoices = (a: string, b: string): string =>
    `{"choices":[{"index":0,"delta":{"content":"${a}"}},{"index":1,"delta":{"content":"${b}"}}]}`
  assert.equal(
    assertSameAsFullParse([twoChoices('a', ''), twoChoices('b', 'c'), twoChoices('d', '')]).shapeKnown,
    false,
  )
  const reasoning = (text: string): string =>
    `{"choices":[{"delta":{"reasoning_content":"${text}","content":"${text}"}}]}`
  assert.equal(assertSameAsFullParse([reasoning('a'), reasoning('b')]).shapeKnown, false)
  // With a duplicate key the last one wins: its literal is the one a shape may stand for.
  const duplicate = (a: string, b: string): string =>
    `{"choices":[{"delta":{"content":"${a}","content":"${b}"}}]}`
  assertSameAsFullParse([duplicate('a', 'z'), duplicate('b', 'z'), duplicate('a', 'y'), duplicate('a', 'y"')])
  const spaced = (a: string): string => `{"choices": [{"delta": {"content" : "${a}"}}]}`
  // Spaces around the colon are the same shape, learned as written.
  assert.equal(assertSameAsFullParse([spaced('a'), spaced('b'), spaced('c"')]).shapeKnown, true)
})

test('every chat recording reads the same through the shape reader as through a full parse', () => {
  const files = sseFixtureNames()
  assert.ok(files.length > 0, 'no recordings in test/fixtures/sse')
  for (const name of files) {
    const payloads: string[] = []
    const parser = new SseParser((event) => {
      if (event.data !== '') payloads.push(event.data)
    })
    parser.push(readSseFixture(name), 0)
    parser.end(0)
    assertSameAsFullParse(payloads)
  }
})

test('token chunks of a learned shape are read fast (the one reused answer), after a first chunk with a one-off field too', () => {
  const reader = new ChatChunkReader()
  reader.read(vllmChunk('a'))
  assert.equal(reader.read(vllmChunk('b')), reader.read(vllmChunk('c')), 'both fast: the same object')
  // mock-llm's first content chunk also says the role; the chunks after it do not.
  const withRole = (text: string): string =>
    `{"id":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"${text}"},"finish_reason":null}]}`
  const plain = (text: string): string =>
    `{"id":"m","choices":[{"index":0,"delta":{"content":"${text}"},"finish_reason":null}]}`
  const payloads = [withRole('The'), plain(' quick'), plain(' brown'), plain(' fox')]
  const mock = assertSameAsFullParse(payloads)
  assert.equal(
    mock.read(plain(' jumps')),
    mock.read(plain(' over')),
    'the shape after the first chunk was learned',
  )
})
