// test-lane: alone
// (test/run.sh: millisecond timings of the simulator's own clock; files running beside it delay its timers)
// wall-clock: the simulator's millisecond timings are the subject
/**
 * The simulator's /metrics and timings over real HTTP on 127.0.0.1 (port 0): what it exposes must equal
 * what it sent. Held and queued requests come from the slot limit (two long requests hold both slots),
 * and the tests wait for the engine's state, never for a fixed time. Every server is closed.
 */
import assert from 'node:assert/strict'
import { performance } from 'node:perf_hooks'
import { test } from 'node:test'
import { Agent, request } from 'undici'
import { prefillMs, resolveSimParams } from '../../src/model/engine.js'
import type { LlamaCppTimings } from '../../src/sim/llamacpp-timings.js'
import { type RunningSimulator, type SimulatorOptions, startSimulator } from '../../src/sim/server.js'
import { buckets, histogramTotals, parsePrometheus, value } from '../helpers/prometheus.js'
import { startSimulatorProcess } from '../helpers/sim-process.js'
import { waitForValue, waitUntil } from '../helpers/wait.js'

const opts = { timeout: 60_000 }
const MODEL = 'llmbench-sim'

interface Chunk {
  choices: { delta?: { content?: string }; text?: string; finish_reason: string | null }[]
  usage?: { prompt_tokens: number; completion_tokens: number }
  timings?: LlamaCppTimings
}

interface Streamed {
  chunks: Chunk[]
  /** performance.now() when each chunk arrived, ms */
  stamps: number[]
  /** performance.now() just before the request was sent, ms */
  t0: number
}

async function withSim(
  options: SimulatorOptions,
  fn: (sim: RunningSimulator, agent: Agent) => Promise<void>,
) {
  const sim = await startSimulator(options)
  const agent = new Agent()
  try {
    await fn(sim, agent)
  } finally {
    await sim.close()
    await agent.destroy()
  }
}

async function streamed(base: string, agent: Agent, path: string, body: object): Promise<Streamed> {
  const t0 = performance.now()
  const res = await request(`${base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: MODEL, stream: true, stream_options: { include_usage: true }, ...body }),
    dispatcher: agent,
  })
  assert.equal(res.statusCode, 200)
  const chunks: Chunk[] = []
  const stamps: number[] = []
  let buf = ''
  for await (const piece of res.body) {
    const t = performance.now()
    buf += (piece as Buffer).toString('utf8')
    for (let end = buf.indexOf('\n\n'); end !== -1; end = buf.indexOf('\n\n')) {
      const data = buf.slice('data: '.length, end)
      buf = buf.slice(end + 2)
      if (data === '[DONE]') continue
      chunks.push(JSON.parse(data) as Chunk)
      stamps.push(t)
    }
  }
  return { chunks, stamps, t0 }
}

/** Chunks carrying a token: each is one output token (tokens_per_event 1). */
function tokenIndexes(s: Streamed): number[] {
  const out: number[] = []
  s.chunks.forEach((c, i) => {
    const choice = c.choices[0]
    if ((choice?.delta?.content ?? choice?.text ?? '') !== '') out.push(i)
  })
  return out
}

function usageOf(s: Streamed): { prompt_tokens: number; completion_tokens: number } {
  const usage = s.chunks.find((c) => c.usage !== undefined)?.usage
  assert.ok(usage !== undefined, 'the stream has a usage chunk')
  return usage
}

async function scrape(url: string): Promise<{ text: string; contentType: string }> {
  const res = await fetch(url)
  assert.equal(res.status, 200)
  return { text: await res.text(), contentType: res.headers.get('content-type') ?? '' }
}

const PROMPT = 'x'.repeat(400) // 100 tokens by the simulator's chars/4 estimate

test(
  '/metrics: running/waiting gauges while slots are full, then counters and histograms equal what was sent',
  opts,
  async () => {
    const params = {
      slots: 2,
      prefill_base_ms: 10,
      prefill_ms_per_token: 0,
      decode_base_ms: 5,
      decode_ms_per_seq: 0,
    }
    await withSim({ ...params, kv_cache_tokens: 10_000, early_stop: 0.5 }, async (sim, agent) => {
      const origin = `http://127.0.0.1:${sim.port}`
      const chat = (content: string, max_tokens: number, extra: object = {}) =>
        streamed(sim.url, agent, '/chat/completions', {
          messages: [{ role: 'user', content }],
          max_tokens,
          ...extra,
        })
      // Two long requests take both slots (200 tokens >= 1 s each); three more wait for a slot.
      const LONG = 200
      const long = [chat(PROMPT, LONG, { ignore_eos: true }), chat(PROMPT, LONG, { ignore_eos: true })]
      await waitUntil(() => sim.stats().running === 2, 'both slots held')
      const short = [
        chat('a short prompt', 30),
        streamed(sim.url, agent, '/completions', {
          prompt: 'another prompt, for completions',
          max_tokens: 20,
        }),
        chat(`${PROMPT}${PROMPT}`, 25),
      ]
      await waitUntil(() => sim.stats().waiting === 3, 'three requests queued')

      const held = await scrape(`${origin}/metrics`)
      assert.match(held.contentType, /^text\/plain; version=0\.0\.4/)
      const during = parsePrometheus(held.text)
      assert.equal(value(during, 'vllm:num_requests_running'), 2)
      assert.equal(value(during, 'vllm:num_requests_waiting'), 3)
      const generatedSoFar = value(during, 'vllm:generation_tokens_total')
      // KV: both long prompts (100 tokens each) plus what they generated so far, of 10,000.
      assert.equal(value(during, 'vllm:kv_cache_usage_perc'), (200 + generatedSoFar) / 10_000)
      assert.equal(value(during, 'vllm:prompt_tokens_total'), 200)

      const all = await Promise.all([...long, ...short])
      const after = await scrape(`${sim.url}/metrics`) // the /v1 spelling serves the same
      const m = parsePrometheus(after.text)
      const promptSent = all.reduce((sum, s) => sum + usageOf(s).prompt_tokens, 0)
      const tokensStreamed = all.reduce((sum, s) => sum + tokenIndexes(s).length, 0)
      assert.equal(value(m, 'vllm:prompt_tokens_total'), promptSent)
      assert.equal(value(m, 'vllm:generation_tokens_total'), tokensStreamed)
      assert.equal(
        tokensStreamed,
        all.reduce((sum, s) => sum + usageOf(s).completion_tokens, 0),
      )
      assert.ok(
        tokensStreamed < 2 * LONG + 30 + 20 + 25,
        'early_stop cut at least one short request (seeded)',
      )
      for (const gauge of [
        'vllm:num_requests_running',
        'vllm:num_requests_waiting',
        'vllm:kv_cache_usage_perc',
      ])
        assert.equal(value(m, gauge), 0, gauge)
      assert.equal(value(m, 'vllm:num_preemptions_total'), 0)

      const n = all.length
      const queue = histogramTotals(after.text, 'vllm:request_queue_time_seconds')
      const ttft = histogramTotals(after.text, 'vllm:time_to_first_token_seconds')
      const itl = histogramTotals(after.text, 'vllm:inter_token_latency_seconds')
      const e2e = histogramTotals(after.text, 'vllm:e2e_request_latency_seconds')
      assert.deepEqual([queue.count, ttft.count, e2e.count, itl.count], [n, n, n, tokensStreamed - n])
      for (const name of ['vllm:request_queue_time_seconds', 'vllm:e2e_request_latency_seconds'])
        assert.equal(buckets(m, name)['+Inf'], String(n), name)
      // Each queued request waited until a long one ended: at least its tokens still due when the first
      // scrape saw both slots full, one 5 ms step each (deadlines are absolute; a timer may fire ~1 ms early).
      const stepsLeft = LONG - generatedSoFar
      assert.ok(queue.sum >= 3 * (stepsLeft * 0.005 - 0.002), `queue ${queue.sum} s, ${stepsLeft} steps left`)
      // Server-side TTFT = queue + prefill (+ body read); E2E = TTFT + every later gap, on one clock.
      assert.ok(ttft.sum >= queue.sum + n * (0.01 - 0.002), `ttft ${ttft.sum} s, queue ${queue.sum} s`)
      assert.ok(
        Math.abs(e2e.sum - (ttft.sum + itl.sum)) < 1e-6,
        `e2e ${e2e.sum} = ttft ${ttft.sum} + itl ${itl.sum}`,
      )
      // The client saw every first token no earlier than the server wrote it.
      const clientTtftSum =
        all.reduce((sum, s) => sum + ((s.stamps[tokenIndexes(s)[0] ?? 0] ?? 0) - s.t0), 0) / 1000
      assert.ok(
        clientTtftSum >= ttft.sum - n * 0.002,
        `client TTFT ${clientTtftSum} s >= server ${ttft.sum} s`,
      )
    })
  },
)

test(
  'timings: llama.cpp fields on the finish chunk and the non-streamed body, equal to what was streamed',
  opts,
  async () => {
    const params = {
      slots: 4,
      prefill_base_ms: 15,
      prefill_ms_per_token: 0.1,
      decode_base_ms: 4,
      decode_ms_per_seq: 0,
    }
    await withSim({ ...params, timings: true, early_stop: 0.5 }, async (sim, agent) => {
      for (const [path, body] of [
        ['/chat/completions', { messages: [{ role: 'user', content: PROMPT }], max_tokens: 40 }],
        ['/completions', { prompt: PROMPT, max_tokens: 33 }],
      ] as const) {
        const s = await streamed(sim.url, agent, path, body)
        const withTimings = s.chunks.filter((c) => c.timings !== undefined)
        assert.equal(withTimings.length, 1, `${path}: one chunk has timings`)
        const finish = withTimings[0] as Chunk
        assert.notEqual(finish.choices[0]?.finish_reason, null, 'timings ride on the finish chunk')
        const t = finish.timings as LlamaCppTimings
        const tokens = tokenIndexes(s)
        assert.equal(t.predicted_n, tokens.length, 'predicted_n = tokens streamed')
        assert.equal(t.prompt_n, usageOf(s).prompt_tokens)
        assert.equal(t.cache_n, 0)
        // The model's prefill, measured on the server's clock (a timer may fire ~1 ms early).
        assert.ok(
          t.prompt_ms >= prefillMs(resolveSimParams(params), t.prompt_n) - 1.5,
          `prompt_ms ${t.prompt_ms}`,
        )
        const clientTtft = (s.stamps[tokens[0] ?? 0] ?? 0) - s.t0
        assert.ok(t.prompt_ms <= clientTtft + 1, `prompt_ms ${t.prompt_ms} <= client TTFT ${clientTtft}`)
        // Decode steps keep absolute deadlines: a first token that came late (its prefill ran over the
        // model's time, on a busy loop) leaves the later steps less time to the same final deadline.
        const firstLate = Math.max(0, t.prompt_ms - prefillMs(resolveSimParams(params), t.prompt_n))
        assert.ok(
          t.predicted_ms >= (tokens.length - 1) * 4 - 1.5 - firstLate,
          `predicted_ms ${t.predicted_ms} (first token ${firstLate} ms late)`,
        )
        assert.ok(
          Math.abs(t.predicted_per_second - (t.predicted_n * 1000) / t.predicted_ms) <
            0.01 * t.predicted_per_second + 1e-9,
        )
        assert.ok(
          Math.abs(t.prompt_per_second - (t.prompt_n * 1000) / t.prompt_ms) < 0.01 * t.prompt_per_second,
        )
      }
      const res = await request(`${sim.url}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          model: MODEL,
          messages: [{ role: 'user', content: PROMPT }],
          max_tokens: 7,
          ignore_eos: true,
        }),
        dispatcher: agent,
      })
      const body = (await res.body.json()) as { usage: { prompt_tokens: number }; timings?: LlamaCppTimings }
      assert.equal(body.timings?.predicted_n, 7)
      assert.equal(body.timings?.prompt_n, body.usage.prompt_tokens)
    })
  },
)

test('timings are off by default', opts, async () => {
  await withSim({ decode_base_ms: 1, prefill_base_ms: 1 }, async (sim, agent) => {
    const s = await streamed(sim.url, agent, '/chat/completions', {
      messages: [{ role: 'user', content: 'hi' }],
      max_tokens: 3,
    })
    assert.ok(s.chunks.every((c) => c.timings === undefined))
  })
})

test(
  'llmbench sim --timings --kv-cache-tokens: the flags reach the server (as demo starts it)',
  opts,
  async () => {
    const sim = await startSimulatorProcess(
      { kv_cache_tokens: 50, slots: 1, decode_base_ms: 50, prefill_base_ms: 1 },
      { args: ['--timings'] },
    )
    const agent = new Agent()
    try {
      const origin = new URL(sim.url).origin
      const held = streamed(sim.url, agent, '/chat/completions', {
        messages: [{ role: 'user', content: 'x'.repeat(80) }], // 20 tokens of the 50
        max_tokens: 40,
        ignore_eos: true,
      })
      // The gauge, once the request runs (it then holds its slot for ~2 s).
      const during = await waitForValue(
        async () => parsePrometheus((await scrape(`${origin}/metrics`)).text),
        (metrics) => value(metrics, 'vllm:num_requests_running') !== 0,
        'the request to run',
        15_000,
      )
      assert.equal(value(during, 'vllm:num_requests_running'), 1)
      const generated = value(during, 'vllm:generation_tokens_total')
      assert.equal(value(during, 'vllm:kv_cache_usage_perc'), Math.min(1, (20 + generated) / 50))
      const s = await held
      assert.equal(s.chunks.find((c) => c.timings !== undefined)?.timings?.predicted_n, 40)
      const m = parsePrometheus((await scrape(`${origin}/metrics`)).text)
      assert.equal(value(m, 'vllm:generation_tokens_total'), 40)
    } finally {
      await agent.destroy()
      await sim.close()
    }
  },
)
