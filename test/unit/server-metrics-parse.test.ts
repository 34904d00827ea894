import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { ExpositionError, parseExposition } from '../../src/server-metrics/prometheus-text.js'
import { mapScrape, type ScrapeValues } from '../../src/server-metrics/vocabulary.js'

/** Real scrapes of each engine: see test/fixtures/metrics/README.md. Expected values read off the files by hand. */
const DIR = fileURLToPath(new URL('../fixtures/metrics/', import.meta.url))

function scrape(file: string): ScrapeValues {
  return mapScrape(parseExposition(readFileSync(join(DIR, file), 'utf8'))).values
}

test('every fixture parses, and every family its TYPE lines declare is found', () => {
  const files = readdirSync(DIR).filter((name) => name.endsWith('.prom'))
  assert.equal(files.length, 8)
  for (const file of files) {
    const text = readFileSync(join(DIR, file), 'utf8')
    const families = parseExposition(text)
    const declared = [...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)]
    for (const [, name, type] of declared) {
      const family = families.get(name as string)
      assert.ok(family !== undefined, `${file}: ${name}`)
      assert.equal(family.type, type, `${file}: ${name}`)
    }
    assert.equal(families.size, declared.length, `${file}: no family beyond the declared ones`)
  }
})

test('vLLM (v1 engine): gauges, counters and labelled histograms with their counts', () => {
  const v = scrape('vllm.prom')
  assert.deepEqual(v.gauges, { running: 0, waiting: 0, kv_cache_usage: 0 })
  assert.deepEqual(v.counters, {
    prefix_cache_queries: 0,
    prefix_cache_hits: 0,
    preemptions: 0,
    prompt_tokens: 66,
    generation_tokens: 600,
  })
  assert.equal(v.sources.running, 'vllm:num_requests_running')
  assert.equal(v.sources.prompt_tokens, 'vllm:prompt_tokens_total')
  const ttft = v.histograms.server_ttft
  assert.equal(ttft?.count, 2)
  assert.equal(ttft?.sum, 0.4143967628479004)
  assert.deepEqual(
    ttft?.buckets.filter(([bound]) => bound === 0.01 || bound === 0.02 || bound === 0.25 || bound === 0.5),
    [
      [0.01, 0],
      [0.02, 1],
      [0.25, 1],
      [0.5, 2],
    ],
  )
  assert.equal(v.histograms.server_queue_time?.count, 2)
  assert.equal(v.histograms.server_queue_time?.sum, 1.883227378129959e-5)
  assert.equal(v.histograms.server_e2e?.sum, 3.5736520290374756)
  assert.equal(v.histograms.server_itl?.count, 598)
})

test('SGLang (documented busy server): running 162, queue 2826, token usage 0.28, its own hit rate', () => {
  const v = scrape('sglang.prom')
  assert.deepEqual(v.gauges, {
    running: 162,
    waiting: 2826,
    kv_cache_usage: 0.28,
    cache_hit_rate: 0.007507552643049313,
  })
  assert.deepEqual(v.counters, { prompt_tokens: 8128902, generation_tokens: 7557572 })
  const ttft = v.histograms.server_ttft
  assert.equal(ttft?.count, 11008)
  assert.deepEqual(
    ttft?.buckets.find(([bound]) => bound === 0.04),
    [0.04, 1],
  )
  assert.deepEqual(ttft?.buckets.at(-1), [30, 2513], 'the last finite bucket; +Inf is the count')
  assert.equal(v.histograms.server_queue_time, undefined, 'this SGLang had no queue-time histogram')
})

test('SGLang under Dynamo (newer labels): queue time, retractions as preemptions', () => {
  const v = scrape('sglang-dynamo-worker.prom')
  // Its speculative-decoding gauges read 0: the worker did not speculate.
  assert.deepEqual(v.gauges, {
    running: 0,
    waiting: 0,
    kv_cache_usage: 0,
    cache_hit_rate: 0,
    spec_accept_length: 0,
    spec_accept_rate: 0,
  })
  assert.deepEqual(v.counters, { preemptions: 0, prompt_tokens: 33, generation_tokens: 300 })
  assert.equal(v.sources.preemptions, 'sglang:num_retractions')
  assert.equal(v.histograms.server_queue_time?.count, 1)
  assert.equal(v.histograms.server_queue_time?.sum, 0.0018392642959952354)
  assert.deepEqual(v.histograms.server_queue_time?.buckets.slice(0, 2), [
    [0, 0],
    [0.1, 1],
  ])
  assert.equal(v.histograms.server_ttft?.sum, 1.5573770999908447)
  assert.equal(v.histograms.server_itl?.count, 299)
})

test('TGI: batch size and queue as running and waiting; queue and request duration histograms', () => {
  const v = scrape('tgi.prom')
  assert.deepEqual(v.gauges, { running: 0, waiting: 0 })
  assert.equal(v.sources.running, 'tgi_batch_current_size')
  assert.equal(v.histograms.server_queue_time?.count, 109)
  assert.equal(v.histograms.server_queue_time?.sum, 295.275961956)
  assert.equal(v.histograms.server_e2e?.sum, 541.2140316159999)
  assert.equal(v.histograms.server_ttft, undefined, 'TGI has no TTFT histogram')
})

test('TensorRT-LLM under Dynamo: in-flight, KV stats and the trtllm_ histograms', () => {
  const v = scrape('trtllm.prom')
  assert.deepEqual(v.gauges, { running: 0, kv_cache_usage: 0, cache_hit_rate: 0 })
  assert.equal(v.sources.running, 'dynamo_component_inflight_requests')
  assert.equal(v.histograms.server_ttft?.count, 2)
  assert.equal(v.histograms.server_ttft?.sum, 0.06795299984514713)
  assert.equal(v.histograms.server_queue_time?.sum, 0.01181500032544136)
  assert.equal(v.histograms.server_e2e?.count, 2)
})

test('Dynamo frontend: in-flight and queued, token counts from its sequence histogram and counter', () => {
  const v = scrape('dynamo-frontend.prom')
  assert.deepEqual(v.gauges, { running: 0, waiting: 0 })
  assert.deepEqual(v.counters, { prompt_tokens: 33, generation_tokens: 300 })
  assert.equal(v.sources.generation_tokens, 'dynamo_frontend_output_tokens_total')
  assert.equal(v.histograms.server_ttft?.sum, 1.5625701570000001)
  assert.deepEqual(
    v.histograms.server_ttft?.buckets.find(([bound]) => bound === 2.2),
    [2.2, 1],
  )
  assert.equal(v.histograms.server_itl?.count, 299)
})

test('DCGM: utilisation as a fraction, memory in bytes, power in watts, energy in joules', () => {
  const v = scrape('dcgm-exporter.prom')
  assert.deepEqual(v.gauges, { gpu_utilization: 0, gpu_memory_used_bytes: 0, gpu_power_watts: 8.969 })
  assert.equal(v.counters.gpu_energy_joules, 128996.013)
})

test('llama.cpp (recorded here, 4 slots under load): processing 2, deferred 0, KV 0.132324', () => {
  const v = scrape('llamacpp.prom')
  assert.deepEqual(v.gauges, { running: 2, waiting: 0, kv_cache_usage: 0.132324 })
  assert.deepEqual(v.counters, { prompt_tokens: 171, generation_tokens: 820 })
  assert.deepEqual(v.histograms, {})
})

test('OpenMetrics naming: a counter declared without _total, with _created beside it', () => {
  const families = parseExposition(
    '# TYPE vllm:prompt_tokens counter\n' +
      'vllm:prompt_tokens_total{model_name="m"} 12\n' +
      'vllm:prompt_tokens_created{model_name="m"} 1.7e9\n' +
      '# EOF\n',
  )
  assert.deepEqual(families.get('vllm:prompt_tokens')?.series, [{ labels: { model_name: 'm' }, value: 12 }])
  assert.equal(mapScrape(families).values.counters.prompt_tokens, 12)
  // No TYPE line at all: x_total is untyped, and still found.
  const untyped = parseExposition('llamacpp:prompt_tokens_total 7\n')
  assert.equal(mapScrape(untyped).values.counters.prompt_tokens, 7)
  // The last line without a newline is kept (the library alone drops it).
  assert.equal(mapScrape(parseExposition('llamacpp:requests_processing 3')).values.gauges.running, 3)
})

test('a histogram with two label sets keeps both, with their counts and sums, and adds them up', () => {
  const families = parseExposition(
    [
      '# TYPE vllm:time_to_first_token_seconds histogram',
      'vllm:time_to_first_token_seconds_bucket{engine="0",le="0.1"} 1',
      'vllm:time_to_first_token_seconds_bucket{engine="0",le="+Inf"} 2',
      'vllm:time_to_first_token_seconds_count{engine="0"} 2',
      'vllm:time_to_first_token_seconds_sum{engine="0"} 0.3',
      'vllm:time_to_first_token_seconds_bucket{engine="1",le="0.1"} 5',
      'vllm:time_to_first_token_seconds_bucket{engine="1",le="+Inf"} 6',
      'vllm:time_to_first_token_seconds_count{engine="1"} 6',
      'vllm:time_to_first_token_seconds_sum{engine="1"} 0.7',
    ].join('\n'),
  )
  const family = families.get('vllm:time_to_first_token_seconds')
  assert.equal(family?.histograms.length, 2)
  assert.deepEqual(family?.histograms[1], {
    labels: { engine: '1' },
    buckets: [
      [0.1, 5],
      [Number.POSITIVE_INFINITY, 6],
    ],
    count: 6,
    sum: 0.7,
  })
  assert.deepEqual(mapScrape(families).values.histograms.server_ttft, {
    buckets: [[0.1, 6]],
    count: 8,
    sum: 1,
  })
})

test('not Prometheus text: an HTML page, JSON, a bad label line, an empty body are ExpositionErrors', () => {
  for (const body of [
    '<!DOCTYPE html><html><body>Not Found</body></html>',
    '{"error":"not found"}',
    'vllm:x{model="a} 1',
    '',
    'metric_without_value\n',
  ])
    assert.throws(() => parseExposition(body), ExpositionError, JSON.stringify(body))
})
