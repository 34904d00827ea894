/**
 * The simulator's server-side view on a virtual clock: what the engine reports to its observer, the
 * vLLM-named exposition of it (parsed back with parse-prometheus-text-format), and llama.cpp's timings.
 * Expected times are worked out by hand from the capacity model's formulas.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import {
  type JobSink,
  type JobTimeline,
  resolveSimParams,
  SimEngine,
  type SimParams,
  VirtualClock,
} from '../../src/model/engine.js'
import { BucketHistogram } from '../../src/sim/histogram.js'
import { llamaCppTimings } from '../../src/sim/llamacpp-timings.js'
import { renderExposition } from '../../src/sim/metrics-exposition.js'
import { VllmMetrics } from '../../src/sim/vllm-metrics.js'
import {
  buckets,
  family,
  histogramTotals,
  type PromFamily,
  parsePrometheus,
  readSimReference,
  sample,
  value,
} from '../helpers/prometheus.js'

/** Round numbers so expected times are exact in floating point. */
const P: SimParams = resolveSimParams({
  slots: 1,
  prefill_base_ms: 50,
  prefill_ms_per_token: 0.5,
  decode_base_ms: 10,
  decode_ms_per_seq: 2,
  kv_cache_tokens: 1000,
})

const MODEL = 'sim-model'

function sink(onFinish: (t: JobTimeline) => void = () => {}): JobSink {
  return { onToken: () => {}, onFinish }
}

/** The parsed families, and the text for what the parser leaves out (histograms' _count and _sum). */
function scrape(metrics: VllmMetrics, engine: SimEngine<number>): PromFamily[] & { text: string } {
  const text = metrics.render(engine.stats())
  return Object.assign(parsePrometheus(text), { text })
}

function setup(params: SimParams = P) {
  const clock = new VirtualClock()
  const metrics = new VllmMetrics(MODEL, params.kv_cache_tokens)
  const engine = new SimEngine(params, clock, metrics)
  return { clock, metrics, engine }
}

test('engine + VllmMetrics: gauges, counters and histograms follow the model, one slot, two requests', () => {
  const { clock, metrics, engine } = setup()
  // A: 20 prompt tokens, prefill 50 + 0.5 * 20 = 60 ms, tokens at 60, 72, 84 (step 10 + 2 * 1).
  // B: queued until A ends at 84, prefill 50 ms, tokens at 134, 146.
  engine.submit({ inputTokens: 20, outputTokens: 3 }, sink())
  engine.submit({ inputTokens: 0, outputTokens: 2 }, sink())
  clock.advanceBy(70)
  let m = scrape(metrics, engine)
  assert.equal(value(m, 'vllm:num_requests_running'), 1)
  assert.equal(value(m, 'vllm:num_requests_waiting'), 1)
  assert.equal(value(m, 'vllm:kv_cache_usage_perc'), 21 / 1000, "A's prompt and its first token")
  assert.equal(value(m, 'vllm:prompt_tokens_total'), 20)
  assert.equal(value(m, 'vllm:generation_tokens_total'), 1)
  assert.equal(histogramTotals(m.text, 'vllm:e2e_request_latency_seconds').count, 0)

  clock.runAll()
  m = scrape(metrics, engine)
  assert.equal(value(m, 'vllm:num_requests_running'), 0)
  assert.equal(value(m, 'vllm:num_requests_waiting'), 0)
  assert.equal(value(m, 'vllm:kv_cache_usage_perc'), 0, 'a finished request frees its KV')
  assert.equal(value(m, 'vllm:num_preemptions_total'), 0)
  assert.equal(value(m, 'vllm:prompt_tokens_total'), 20)
  assert.equal(value(m, 'vllm:generation_tokens_total'), 5)
  const expected: Record<string, { count: number; sum: number }> = {
    'vllm:request_queue_time_seconds': { count: 2, sum: 0 + 0.084 },
    'vllm:time_to_first_token_seconds': { count: 2, sum: 0.06 + 0.134 },
    'vllm:inter_token_latency_seconds': { count: 3, sum: 0.012 * 3 },
    'vllm:e2e_request_latency_seconds': { count: 2, sum: 0.084 + 0.146 },
  }
  for (const [name, { count, sum }] of Object.entries(expected)) {
    const h = histogramTotals(m.text, name)
    assert.equal(h.count, count, `${name} count`)
    assert.ok(Math.abs(h.sum - sum) < 1e-9, `${name} sum ${h.sum}, expected ${sum}`)
    assert.equal(buckets(m, name)['+Inf'], String(count), `${name} +Inf bucket = count`)
  }
  assert.deepEqual(sample(m, 'vllm:generation_tokens_total').labels, { model_name: MODEL })
  // `le` is inclusive: TTFT 0.06 s lands in le="0.06", 0.134 s in le="0.25".
  const ttft = buckets(m, 'vllm:time_to_first_token_seconds')
  assert.deepEqual([ttft['0.04'], ttft['0.06'], ttft['0.1'], ttft['0.25']], ['0', '1', '1', '2'])
})

test('engine: a cancelled request frees its KV; arrivedAt moves TTFT and E2E, not the queue time', () => {
  const { clock, metrics, engine } = setup()
  const handle = engine.submit({ inputTokens: 100, outputTokens: 50 }, sink())
  clock.advanceBy(130) // first token at 100, then 112, 124
  assert.equal(engine.stats().kv_tokens, 103)
  handle.cancel()
  assert.equal(engine.stats().kv_tokens, 0)
  clock.advanceBy(5)
  let timeline: JobTimeline | undefined
  engine.submit(
    { inputTokens: 0, outputTokens: 1, arrivedAt: clock.now() - 7 },
    sink((t) => (timeline = t)),
  )
  clock.runAll()
  assert.deepEqual(timeline, {
    arrivedAt: 128,
    queuedAt: 135,
    admittedAt: 135,
    firstTokenAt: 185,
    finishedAt: 185,
  })
  const m = scrape(metrics, engine)
  const e2e = histogramTotals(m.text, 'vllm:e2e_request_latency_seconds')
  assert.equal(e2e.count, 1, 'completed requests only')
  assert.ok(Math.abs(e2e.sum - 0.057) < 1e-9, `e2e ${e2e.sum}: from arrival, 7 ms before submit`)
  const ttft = histogramTotals(m.text, 'vllm:time_to_first_token_seconds')
  assert.equal(ttft.count, 2, 'the cancelled one had its first token')
  assert.ok(Math.abs(ttft.sum - (0.1 + 0.057)) < 1e-9)
  assert.equal(histogramTotals(m.text, 'vllm:request_queue_time_seconds').sum, 0)
  assert.equal(value(m, 'vllm:prompt_tokens_total'), 100)
  assert.equal(value(m, 'vllm:generation_tokens_total'), 4)
})

test('kv_cache_usage_perc is capped at 1: the model does not preempt', () => {
  const { clock, metrics, engine } = setup({ ...P, kv_cache_tokens: 10 })
  engine.submit({ inputTokens: 30, outputTokens: 5 }, sink())
  clock.advanceBy(1)
  assert.equal(engine.stats().kv_tokens, 30)
  assert.equal(value(scrape(metrics, engine), 'vllm:kv_cache_usage_perc'), 1)
  clock.runAll()
})

test("the exposition has vLLM's families, types and bucket bounds (a real vLLM scrape)", () => {
  const real = parsePrometheus(readSimReference('vllm.prom'))
  const { metrics, engine } = setup()
  const ours = scrape(metrics, engine)
  assert.equal(ours.length, 10)
  for (const f of ours) {
    const theirs = family(real, f.name)
    assert.equal(f.type, theirs.type, f.name)
    if (f.type !== 'HISTOGRAM') continue
    const bounds = (s: PromFamily): number[] => Object.keys(s.metrics[0]?.buckets ?? {}).map(Number)
    assert.deepEqual(bounds(f), bounds(theirs), `${f.name} buckets`)
  }
})

test('renderExposition escapes label values and HELP text so they parse back as written', () => {
  const h = new BucketHistogram([1, 2])
  h.observe(1)
  h.observe(1.5)
  h.observe(9)
  const model = 'org/m "quoted" \\ back\nline'
  const text = renderExposition(
    [
      { name: 'x_total', help: 'a \\ help\nline', type: 'counter', value: 3 },
      { name: 'h_seconds', help: 'h', type: 'histogram', histogram: h },
    ],
    { model_name: model },
  )
  const parsed = parsePrometheus(text)
  assert.deepEqual(sample(parsed, 'x_total').labels, { model_name: model })
  assert.equal(value(parsed, 'x_total'), 3)
  assert.deepEqual(buckets(parsed, 'h_seconds'), { '1.0': '1', '2.0': '2', '+Inf': '3' })
  assert.deepEqual(histogramTotals(text, 'h_seconds'), { count: 3, sum: 11.5 })
  assert.equal(family(parsed, 'x_total').help, 'a \\ help\nline')
})

test('BucketHistogram rejects bounds that are not strictly increasing', () => {
  assert.throws(() => new BucketHistogram([1, 1]), RangeError)
  assert.throws(() => new BucketHistogram([1, Number.POSITIVE_INFINITY]), RangeError)
})

test("llamaCppTimings: llama.cpp's fields, from the timeline", () => {
  const t = llamaCppTimings(31, 12, {
    arrivedAt: 0,
    queuedAt: 1,
    admittedAt: 5,
    firstTokenAt: 30,
    finishedAt: 96,
  })
  const finish = readSimReference('llamacpp_chat_timings.sse')
    .split('\n')
    .filter((line) => line.includes('"timings"'))
  assert.equal(finish.length, 1, 'the recording has one chunk with timings')
  const real = JSON.parse((finish[0] as string).slice('data: '.length)) as { timings: object }
  assert.deepEqual(Object.keys(t).sort(), [...Object.keys(real.timings), 'cache_n'].sort())
  assert.deepEqual(t, {
    cache_n: 0,
    prompt_n: 31,
    prompt_ms: 25,
    prompt_per_token_ms: 25 / 31,
    prompt_per_second: 31_000 / 25,
    predicted_n: 12,
    predicted_ms: 66,
    predicted_per_token_ms: 66 / 12,
    predicted_per_second: 12_000 / 66,
  })
  assert.equal(
    llamaCppTimings(3, 1, { arrivedAt: 0, queuedAt: 0, admittedAt: 0, firstTokenAt: 9, finishedAt: 9 })
      .predicted_per_second,
    0,
  )
})
