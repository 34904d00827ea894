import assert from 'node:assert/strict'
import { test } from 'node:test'
import { type SseEvent, SseParser } from '../../src/client/sse.js'
import { errorEventMessage, interpretChunk } from '../../src/protocols/chunk.js'
import { seededRandom } from '../../src/random.js'
import { readSseFixture, sseFixtureNames } from '../helpers/fixtures.js'

/**
 * What each recording really contains, counted independently of our parser (by splitting the
 * files on blank lines and reading each JSON payload by hand; see the fixtures' README for what
 * each one is). events: dispatched events incl. [DONE] and llama.cpp's `error:` field event.
 */
interface Expected {
  events: number
  tokenBearing: number
  usage: number | null
  finish: string | null
  done: boolean
  comments: number
  error: RegExp | null
}

// biome-ignore format: one recording per line reads as a table
const EXPECTED: Record<string, Expected> = {
  'azure_openai_prompt_filter_results.sse': { events: 7, tokenBearing: 3, usage: null, finish: 'stop', done: true, comments: 0, error: null },
  'deepseek_api_reasoning_chunk_excerpt.sse': { events: 1, tokenBearing: 1, usage: null, finish: null, done: false, comments: 0, error: null },
  'llamacpp_chat_usage_on_finish_chunk.sse': { events: 14, tokenBearing: 12, usage: 12, finish: 'length', done: true, comments: 0, error: null },
  'llamacpp_legacy_completions.sse': { events: 8, tokenBearing: 6, usage: 6, finish: 'length', done: true, comments: 0, error: null },
  'llamacpp_midstream_error_event.sse': { events: 93, tokenBearing: 91, usage: null, finish: null, done: true, comments: 0, error: /context shift is disabled/ },
  'mockllm_chat_char_chunks.sse': { events: 25, tokenBearing: 24, usage: null, finish: 'stop', done: true, comments: 0, error: null },
  'mockllm_error_in_200_stream.sse': { events: 1, tokenBearing: 0, usage: null, finish: null, done: false, comments: 0, error: /Simulated failure/ },
  'openai_api_mock_stream.sse': { events: 5, tokenBearing: 4, usage: null, finish: null, done: true, comments: 0, error: null },
  'openai_gpt4o_finish_length.sse': { events: 5, tokenBearing: 1, usage: 1, finish: 'length', done: true, comments: 0, error: null },
  'openai_gpt4o_logprobs.sse': { events: 6, tokenBearing: 2, usage: 2, finish: 'stop', done: true, comments: 0, error: null },
  'openai_gpt4o_long_text.sse': { events: 181, tokenBearing: 177, usage: 177, finish: 'stop', done: true, comments: 0, error: null },
  'openai_gpt4o_n3_choices.sse': { events: 50, tokenBearing: 42, usage: 42, finish: 'stop', done: true, comments: 0, error: null },
  'openai_gpt4o_parallel_tool_calls.sse': { events: 26, tokenBearing: 22, usage: 60, finish: 'tool_calls', done: true, comments: 0, error: null },
  'openai_gpt4o_refusal.sse': { events: 14, tokenBearing: 10, usage: 11, finish: 'stop', done: true, comments: 0, error: null },
  'openai_gpt4o_text_usage.sse': { events: 34, tokenBearing: 30, usage: 30, finish: 'stop', done: true, comments: 0, error: null },
  'openai_gpt4o_tool_call.sse': { events: 18, tokenBearing: 15, usage: 24, finish: 'tool_calls', done: true, comments: 0, error: null },
  'sglang_style_reasoning_content_excerpt.sse': { events: 3, tokenBearing: 2, usage: null, finish: null, done: false, comments: 0, error: null },
  'sse_starlette_crlf_ping.sse': { events: 7, tokenBearing: 5, usage: 5, finish: 'length', done: true, comments: 1, error: null },
  'vllm_r1_distill_reasoning_content_excerpt.sse': { events: 5, tokenBearing: 4, usage: null, finish: null, done: false, comments: 0, error: null },
  'vllm_reasoning_chunk_no_content_key_excerpt.sse': { events: 1, tokenBearing: 1, usage: null, finish: null, done: false, comments: 0, error: null },
}

interface Parsed {
  events: SseEvent[]
  comments: number
}

function parse(bytes: Buffer, cuts: number[]): Parsed {
  const events: SseEvent[] = []
  const parser = new SseParser((event) => events.push(event))
  let start = 0
  for (const cut of [...cuts, bytes.length]) {
    parser.push(bytes.subarray(start, cut), 0)
    start = cut
  }
  parser.end(0)
  return { events, comments: parser.comments }
}

function summarize(events: SseEvent[]): Omit<Expected, 'comments' | 'error'> & { error: string | null } {
  let tokenBearing = 0
  let usage: number | null = null
  let finish: string | null = null
  let done = false
  let error: string | null = null
  for (const event of events) {
    if (event.error !== null) error ??= event.error
    if (event.data === '') continue
    const info = interpretChunk(event.data)
    assert.equal(info.malformed, false, `malformed payload: ${event.data.slice(0, 80)}`)
    if (info.done) done = true
    if (info.tokenBearing) tokenBearing++
    if (info.usage !== null) usage = info.usage.completion_tokens
    if (info.finishReason !== null) finish = info.finishReason
    if (info.error !== null) error ??= info.error
  }
  return { events: events.length, tokenBearing, usage, finish, done, error }
}

test('every fixture file has an expectation (a new recording must be added here)', () => {
  assert.deepEqual(sseFixtureNames(), Object.keys(EXPECTED).sort())
})

for (const name of sseFixtureNames()) {
  test(`parses ${name} in one read: events, token-bearing chunks, usage, finish, errors`, () => {
    const expected = EXPECTED[name] as Expected
    const parsed = parse(readSseFixture(name), [])
    const got = summarize(parsed.events)
    assert.equal(got.events, expected.events, 'events')
    assert.equal(got.tokenBearing, expected.tokenBearing, 'token-bearing events')
    assert.equal(got.usage, expected.usage, 'usage.completion_tokens')
    assert.equal(got.finish, expected.finish, 'finish_reason')
    assert.equal(got.done, expected.done, '[DONE]')
    assert.equal(parsed.comments, expected.comments, 'comment lines')
    if (expected.error === null) assert.equal(got.error, null)
    else assert.match(got.error ?? '', expected.error)
  })

  test(`parses ${name} identically when split at every byte and at random points`, () => {
    const bytes = readSseFixture(name)
    const whole = parse(bytes, []).events
    // One byte per read: every CR/LF pair and every multi-byte character is split somewhere.
    const perByte = parse(
      bytes,
      Array.from({ length: bytes.length - 1 }, (_, i) => i + 1),
    ).events
    assert.deepEqual(perByte, whole)
    const random = seededRandom(name.length)
    for (let round = 0; round < 20; round++) {
      const cuts = Array.from({ length: 1 + Math.floor(random() * 30) }, () =>
        Math.floor(random() * bytes.length),
      ).sort((a, b) => a - b)
      assert.deepEqual(parse(bytes, cuts).events, whole, `round ${round}, cuts ${cuts.join(',')}`)
    }
  })
}

test('multi-byte UTF-8 split across reads decodes to the same text', () => {
  const bytes = readSseFixture('llamacpp_midstream_error_event.sse')
  assert.ok(
    bytes.some((byte) => byte >= 0x80),
    'fixture holds multi-byte characters',
  )
  const text = (events: SseEvent[]) =>
    events.map((e) => (e.data === '' ? '' : interpretChunk(e.data).text)).join('')
  const whole = text(parse(bytes, []).events)
  assert.ok(!whole.includes('\uFFFD'), 'no replacement characters')
  const perByte = text(
    parse(
      bytes,
      Array.from({ length: bytes.length - 1 }, (_, i) => i + 1),
    ).events,
  )
  assert.equal(perByte, whole)
})

test('an event at EOF without a closing blank line is still dispatched (Azure recording ends so)', () => {
  const bytes = readSseFixture('azure_openai_prompt_filter_results.sse')
  assert.ok(!bytes.subarray(-2).equals(Buffer.from('\n\n')), 'fixture really lacks the final blank line')
  const events = parse(bytes, []).events
  assert.equal(events.at(-1)?.data, '[DONE]')
})

test('CR-only line ends, multi-line data, event types, BOM and field without a space', () => {
  const stream = Buffer.from(
    '\uFEFFevent: ping\rdata:a\rdata: b\r\r: note\n\nid: 7\nretry: 10\ndata:{"x":1}\n\n',
    'utf8',
  )
  const { events, comments } = parse(stream, [])
  assert.deepEqual(events, [
    { event: 'ping', data: 'a\nb', error: null },
    { event: '', data: '{"x":1}', error: null },
  ])
  assert.equal(comments, 1)
})

test("an error event's JSON payload gives its message after its code and type; anything else is kept as it came", () => {
  const llamaCpp =
    '{"code":500,"message":"Input prompt is too big compared to KV size.","type":"server_error"}'
  assert.equal(errorEventMessage(llamaCpp), '500 server_error: Input prompt is too big compared to KV size.')
  assert.equal(errorEventMessage('{"error":{"message":"overloaded"}}'), 'overloaded')
  assert.equal(
    errorEventMessage('{"error":{"message":"busy","type":"server_error","code":"overloaded"}}'),
    'server_error overloaded: busy',
  )
  assert.equal(errorEventMessage('{"code":500}'), '{"code":500}')
  assert.equal(errorEventMessage('upstream reset'), 'upstream reset')
  assert.equal(errorEventMessage('[1,2]'), '[1,2]')
})

test('an error in a data chunk keeps its code and type: they tell load (5xx) from a refused request', () => {
  assert.equal(
    interpretChunk('{"error":{"message":"injected failure","type":"server_error","code":500}}').error,
    '500 server_error: injected failure',
  )
  assert.equal(
    interpretChunk('{"object":"error","message":"bad top_p","type":"BadRequestError","code":400}').error,
    '400 BadRequestError: bad top_p',
  )
  assert.equal(
    interpretChunk('{"error":"Request failed during generation","error_type":"generation"}').error,
    'generation: Request failed during generation',
  )
  assert.equal(interpretChunk('{"error":"plain words"}').error, 'plain words')
  assert.equal(interpretChunk('{"error":{"code":503}}').error, '503: {"code":503}')
})
