/**
 * The simulator's Responses API, Anthropic Messages and embeddings endpoints, read by the client:
 * streamed and non-streamed answers in the chat timing model, its mid-stream faults in each
 * protocol's framing, and its event writers' reasoning phase (a reasoning delta per reasoning token).
 */
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { Pool } from 'undici'
import { SseParser } from '../../src/client/sse.js'
import { sendRequest } from '../../src/client/stream-client.js'
import type { Target } from '../../src/client/target.js'
import type { Protocol } from '../../src/protocols/names.js'
import { protocolOf } from '../../src/protocols/wire-protocol.js'
import type { RequestRecord } from '../../src/records/types.js'
import { eventWriter, type TokenPhase } from '../../src/sim/protocol-frames.js'
import { type RunningSimulator, SIM_MODEL, startSimulator } from '../../src/sim/server.js'
import { buildBody } from '../../src/workload/request-body.js'
import { measurePlan } from '../helpers/request-plan.js'

let sim: RunningSimulator
let faulty: RunningSimulator
const pools: Pool[] = []

before(async () => {
  sim = await startSimulator({ prefill_base_ms: 2, decode_base_ms: 2 })
  faulty = await startSimulator({
    prefill_base_ms: 2,
    decode_base_ms: 2,
    faults: [{ kind: 'malformed', rate: 1 }],
  })
})

after(async () => {
  for (const pool of pools) await pool.destroy()
  await sim.close()
  await faulty.close()
})

async function send(
  server: RunningSimulator,
  protocol: Protocol,
  stream: boolean,
  prompt: Parameters<typeof buildBody>[1] = 'Say hello to the simulator.',
): Promise<RequestRecord> {
  const origin = new URL(server.url).origin
  const pool = new Pool(origin)
  pools.push(pool)
  const target: Target = {
    dispatcher: pool,
    origin,
    path: protocolOf(protocol).path,
    headers: { 'content-type': 'application/json', 'x-api-key': 'any key is accepted' },
    stream,
    protocol,
    timeoutMs: 10_000,
    firstTokenTimeoutMs: null,
    idleTimeoutMs: 10_000,
    secrets: [],
  }
  const body = buildBody({ model: SIM_MODEL, endpoint: target.path, protocol, stream }, prompt, 8)
  return sendRequest(target, measurePlan(body))
}

test('streamed Responses and Messages from the simulator: one event per token, usage, a length finish', async () => {
  for (const protocol of ['responses', 'messages'] as const) {
    const record = await send(sim, protocol, true, [
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: 'Say hello to the simulator.' },
    ])
    assert.equal(record.error, null, `${protocol}: ${record.error?.message}`)
    assert.equal(record.chunks, 8)
    assert.ok(record.first_token_at !== null)
    assert.equal(record.output_tokens, 8)
    assert.equal(record.token_source, 'usage')
    // ceil(chars / 4) of the system prompt and the user message: (14 + 27) / 4.
    assert.equal(record.input_tokens, 11, protocol)
    assert.equal(record.cached_tokens, 0)
    assert.equal(record.finish_reason, 'length')
  }
})

test('non-streamed Responses and Messages: one body with the text and usage, no first token', async () => {
  for (const protocol of ['responses', 'messages'] as const) {
    const record = await send(sim, protocol, false)
    assert.equal(record.error, null, `${protocol}: ${record.error?.message}`)
    assert.equal(record.first_token_at, null)
    assert.equal(record.output_tokens, 8)
    assert.equal(record.input_tokens, 7)
    assert.equal((record.output_text ?? '').trim().split(' ').length, 8, 'eight words')
  }
})

test('embeddings: one body after the prefill, usage.prompt_tokens', async () => {
  const record = await send(sim, 'embeddings', false)
  assert.equal(record.error, null, record.error?.message)
  assert.equal(record.status, 200)
  assert.equal(record.input_tokens, 7)
  assert.equal(record.output_tokens, 0)
  // An embeddings body with several inputs answers a vector each.
  const response = await fetch(`${sim.url}/embeddings`, {
    method: 'POST',
    body: JSON.stringify({ model: SIM_MODEL, input: ['one', 'two', 'three'] }),
  })
  const body = (await response.json()) as { data: { index: number }[] }
  assert.deepEqual(
    body.data.map((item) => item.index),
    [0, 1, 2],
  )
})

test('a malformed event in each protocol framing is a classified stream failure', async () => {
  for (const protocol of ['responses', 'messages'] as const) {
    const record = await send(faulty, protocol, true)
    assert.equal(record.error?.class, 'stream', protocol)
    assert.match(record.error?.message ?? '', /malformed chunk: not JSON/)
  }
})

test('the event writers emit a reasoning delta per reasoning token, then the answer in its own item or block', () => {
  const phases: TokenPhase[] = ['reasoning', 'reasoning', 'reasoning', 'answer', 'answer']
  for (const protocol of ['responses', 'messages'] as const) {
    const writer = eventWriter({
      protocol,
      model: SIM_MODEL,
      requestNo: 1,
      finishReason: 'stop',
      inputs: 1,
      usage: { input: 20, output: 5, cached: 4, reasoning: 3 },
    })
    const text =
      writer.open() + phases.map((phase, i) => writer.token(` w${i}`, phase)).join('') + writer.finish()
    const interpreter = protocolOf(protocol).interpreter()
    const seen: string[] = []
    // As the client keeps them: each figure as the last event that said it.
    const usage = { prompt_tokens: null as number | null, completion_tokens: null as number | null }
    let cached: number | null = null
    let ended = false
    const parser = new SseParser((event) => {
      const info = interpreter.event(event.event, event.data)
      assert.equal(info.malformed, false)
      if (info.reasoningBearing) seen.push('reasoning')
      if (info.answerBearing) seen.push('answer')
      if (info.usage?.prompt_tokens != null) usage.prompt_tokens = info.usage.prompt_tokens
      if (info.usage?.completion_tokens != null) usage.completion_tokens = info.usage.completion_tokens
      if (info.inBand?.cached_tokens != null) cached = info.inBand.cached_tokens
      if (info.done) ended = true
    })
    parser.push(Buffer.from(text), 0)
    parser.end(0)
    assert.deepEqual(seen, phases, protocol)
    assert.equal(ended, true)
    assert.equal(cached, 4)
    assert.deepEqual(usage, { prompt_tokens: 20, completion_tokens: 5 })
  }
})
