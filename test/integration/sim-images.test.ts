// test-lane: alone
// (test/run.sh: millisecond timings of the simulator's own clock; files running beside it delay its timers)
/**
 * Images against the simulator: the same closed-loop load with and without two 448 × 448 PNGs a
 * request. The sim charges ceil(448/28)² = 256 tokens an image (image-tokens.ts), counted in
 * usage.prompt_tokens and prefilled at prefill_ms_per_token, so the first token comes later by
 * that much and the throughput a level reaches falls by the share prefill adds to a request.
 * The prefill is read from the sim's own `timings` (prompt_ms: from the slot to the first token),
 * within [-5, +15) ms of the charge; the client's TTFT grows by at least the images' share of it less
 * 15 ms. Not bounded above by the client: a body with images is ~0.6 MB, and sending it over loopback
 * and the sim's JSON.parse of it take 5-15 ms on a quiet 2-core machine (+8 to +13 ms seen), 65-95 ms
 * more on a loaded one.
 */
import assert from 'node:assert/strict'
import { performance } from 'node:perf_hooks'
import { test } from 'node:test'
import { Agent, request } from 'undici'
import { type PromptImage, promptImage } from '../../src/protocols/prompt-images.js'
import { chatBody } from '../../src/protocols/protocol-bodies.js'
import { imageTokensOfSize } from '../../src/sim/image-tokens.js'
import { SIM_MODEL, startSimulator } from '../../src/sim/server.js'
import { syntheticPng } from '../../src/workload/synthetic-png.js'

const PARAMS = {
  slots: 4,
  prefill_base_ms: 2,
  prefill_ms_per_token: 0.4,
  decode_base_ms: 4,
  decode_ms_per_seq: 0,
}
const OUTPUT = 10
const SIDE = 448

interface Outcome {
  promptTokens: number
  ttftMs: number
  doneMs: number
  /** The sim's own prefill (its llama.cpp `timings`), ms. */
  serverPrefillMs: number
}

async function send(url: string, agent: Agent, images: readonly PromptImage[]): Promise<Outcome> {
  const body = chatBody({
    model: SIM_MODEL,
    prompt: 'describe these',
    maxTokens: OUTPUT,
    stream: true,
    ignoreEos: true,
    images,
  })
  const json = JSON.stringify(body)
  const started = performance.now()
  const response = await request(`${url}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: json,
    dispatcher: agent,
  })
  assert.equal(response.statusCode, 200)
  let ttftMs = Number.NaN
  let text = ''
  for await (const chunk of response.body) {
    if (Number.isNaN(ttftMs) && /"content":"[^"]/.test(String(chunk))) ttftMs = performance.now() - started
    text += String(chunk)
  }
  const usage = /"prompt_tokens":(\d+)/.exec(text)
  assert.ok(usage !== null, 'the stream carries usage')
  const timings = /"prompt_ms":([\d.]+)/.exec(text)
  assert.ok(timings !== null, 'the stream carries timings')
  return {
    promptTokens: Number(usage[1]),
    ttftMs,
    doneMs: performance.now() - started,
    serverPrefillMs: Number(timings[1]),
  }
}

/** `streams` closed-loop streams, `each` requests apiece: requests per second over the whole. */
async function level(
  url: string,
  agent: Agent,
  images: readonly PromptImage[],
  streams: number,
  each: number,
) {
  const started = performance.now()
  const outcomes = await Promise.all(
    Array.from({ length: streams }, async () => {
      const done: Outcome[] = []
      for (let i = 0; i < each; i++) done.push(await send(url, agent, images))
      return done
    }),
  )
  return { rate: (streams * each) / ((performance.now() - started) / 1000), outcomes: outcomes.flat() }
}

test('images add their patch tokens to prompt_tokens, their prefill to TTFT, and lower throughput', {
  timeout: 30000,
}, async () => {
  const image = promptImage('image/png', syntheticPng(SIDE, SIDE, 11))
  const images = [image, promptImage('image/png', syntheticPng(SIDE, SIDE, 12))]
  const imageTokens = 2 * imageTokensOfSize(SIDE, SIDE, 28)
  assert.equal(imageTokens, 512)
  const sim = await startSimulator({ ...PARAMS, timings: true })
  const agent = new Agent()
  try {
    await send(sim.url, agent, []) // warm: the first request of a fresh sim and client runs cold code
    const plain = await send(sim.url, agent, [])
    const pictured = await send(sim.url, agent, images)
    assert.equal(pictured.promptTokens - plain.promptTokens, imageTokens)
    const predictedDelay = imageTokens * PARAMS.prefill_ms_per_token // 204.8 ms
    const chargedPrefill = PARAMS.prefill_base_ms + PARAMS.prefill_ms_per_token * pictured.promptTokens
    assert.ok(
      pictured.serverPrefillMs > chargedPrefill - 5 && pictured.serverPrefillMs < chargedPrefill + 15,
      `the sim's prefill ${pictured.serverPrefillMs} ms, charged ${chargedPrefill} (${JSON.stringify([plain, pictured])})`,
    )
    const delay = pictured.ttftMs - plain.ttftMs
    assert.ok(delay > predictedDelay - 15, `TTFT grew ${delay} ms, predicted ${predictedDelay}`)

    // Past the slots (8 streams on 4), throughput is what the engine's request time allows.
    const without = await level(sim.url, agent, [], 8, 3)
    const withImages = await level(sim.url, agent, images, 8, 3)
    const ratio = withImages.rate / without.rate
    // One request alone takes prefill + OUTPUT decode steps; images add predictedDelay to it.
    const alone =
      PARAMS.prefill_base_ms +
      PARAMS.prefill_ms_per_token * plain.promptTokens +
      OUTPUT * PARAMS.decode_base_ms
    const predicted = alone / (alone + predictedDelay)
    assert.ok(
      ratio < 0.75,
      `throughput with images ${withImages.rate.toFixed(1)}/s vs ${without.rate.toFixed(1)}/s`,
    )
    assert.ok(
      Math.abs(ratio - predicted) < 0.25,
      `ratio ${ratio.toFixed(2)}, a single-request model predicts ${predicted.toFixed(2)}`,
    )
    console.log(
      `c=8 on 4 slots: ${without.rate.toFixed(1)} req/s plain, ${withImages.rate.toFixed(1)} req/s with 2 images (ratio ${ratio.toFixed(2)}, predicted ~${predicted.toFixed(2)}); TTFT +${delay.toFixed(0)} ms, the sim's prefill ${pictured.serverPrefillMs.toFixed(0)} ms (charged ${chargedPrefill.toFixed(0)}); TTFT predicted +${predictedDelay.toFixed(0)}`,
    )
  } finally {
    await sim.close()
    await agent.destroy()
  }
})
