import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import { SseParser } from '../../src/client/sse.js'
import { interpretChunk } from '../../src/protocols/chunk.js'
import { readInBand } from '../../src/protocols/in-band.js'
import { PROTOCOL_FIXTURE_DIR } from '../helpers/fixtures.js'

/** The in-band figures of a recorded stream, as a client reading every chunk would keep them. */
function inBandOf(name: string) {
  let kept: ReturnType<typeof readInBand> = null
  let chunksWithData = 0
  const parser = new SseParser((event) => {
    if (event.data === '') return
    const info = interpretChunk(event.data)
    if (info.inBand === null) return
    chunksWithData++
    kept = info.inBand
  })
  parser.push(readFileSync(`${PROTOCOL_FIXTURE_DIR}${name}`), 0)
  parser.end(0)
  return { kept: kept as ReturnType<typeof readInBand>, chunksWithData }
}

// Read off the files' last chunks (see test/fixtures/protocols/README.md).
test('llama.cpp chat: timings from the finish chunk, no cache_n in this build, no usage details', () => {
  const { kept, chunksWithData } = inBandOf('llamacpp_chat_timings.sse')
  assert.equal(chunksWithData, 1)
  assert.deepEqual(kept, {
    timings: { prompt_n: 31, prompt_ms: 23.773, predicted_n: 12, predicted_ms: 80.418, cache_n: null },
    cached_tokens: null,
    reasoning_tokens: null,
  })
})

test('llama.cpp legacy completions: timings on the last chunk', () => {
  const { kept } = inBandOf('llamacpp_completions.sse')
  assert.deepEqual(kept?.timings, {
    prompt_n: 5,
    prompt_ms: 12.078,
    predicted_n: 8,
    predicted_ms: 47.829,
    cache_n: null,
  })
})

test('OpenAI include_usage: cached and reasoning tokens from the choices:[] usage chunk (both 0, not null)', () => {
  const { kept, chunksWithData } = inBandOf('openai-chat-include-usage-details.sse')
  assert.equal(chunksWithData, 1, 'usage:null on the token chunks is not in-band data')
  assert.deepEqual(kept, { timings: null, cached_tokens: 0, reasoning_tokens: 0 })
})

test('OpenAI 2024: reasoning tokens without prompt_tokens_details leave cached_tokens null', () => {
  const { kept } = inBandOf('openai-chat-2024-usage-reasoning-tokens.sse')
  assert.deepEqual(kept, { timings: null, cached_tokens: null, reasoning_tokens: 0 })
})

test('OpenRouter: non-zero reasoning tokens among comment lines and cost fields', () => {
  const { kept } = inBandOf('openrouter-chat-reasoning-comments.sse')
  assert.deepEqual(kept, { timings: null, cached_tokens: 0, reasoning_tokens: 13 })
})

test('hand-made timings with cache_n (newer llama.cpp builds send it); malformed fields are unknown, never a crash', () => {
  assert.deepEqual(
    readInBand({
      timings: { cache_n: 236, prompt_n: 1, prompt_ms: 30.958, predicted_n: 35, predicted_ms: 661.064 },
    })?.timings,
    { prompt_n: 1, prompt_ms: 30.958, predicted_n: 35, predicted_ms: 661.064, cache_n: 236 },
  )
  assert.deepEqual(readInBand({ timings: { prompt_n: '31', prompt_ms: -1, predicted_ms: 'x' } }), null)
  assert.deepEqual(readInBand({ timings: { prompt_ms: 5, prompt_n: 2.5, cache_n: -3 } })?.timings, {
    prompt_n: null,
    prompt_ms: 5,
    predicted_n: null,
    predicted_ms: null,
    cache_n: null,
  })
  assert.equal(readInBand({ usage: { prompt_tokens_details: null, completion_tokens_details: [] } }), null)
  assert.equal(readInBand({ timings: [] }), null)
  assert.equal(readInBand({ choices: [] }), null)
})
