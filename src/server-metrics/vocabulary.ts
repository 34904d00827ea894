import type { Family, HistogramSeries } from './prometheus-text.js'

/**
 * One vocabulary for what LLM servers say about themselves on /metrics, whatever the engine: each
 * term lists the families that mean it, per engine, first match wins. Units are made the same here
 * (fractions 0..1, bytes, watts, joules, seconds), so nothing downstream knows which engine it was.
 */

/** A level of something at the moment of the scrape: averaged and maxed over a level. */
export const GAUGE_TERMS = [
  'running',
  'waiting',
  'kv_cache_usage',
  'cache_hit_rate',
  'gpu_utilization',
  'gpu_memory_used_bytes',
  'gpu_power_watts',
  'spec_accept_length',
  'spec_accept_rate',
] as const
/** Only ever grows (until the server restarts): its increase over a level counts. */
export const COUNTER_TERMS = [
  'prefix_cache_queries',
  'prefix_cache_hits',
  'preemptions',
  'prompt_tokens',
  'generation_tokens',
  'gpu_energy_joules',
  'spec_drafts',
  'spec_draft_tokens',
  'spec_accepted_tokens',
] as const
/** Cumulative buckets, seconds: their increase over a level gives its percentiles. */
export const HISTOGRAM_TERMS = ['server_ttft', 'server_queue_time', 'server_e2e', 'server_itl'] as const

export type GaugeTerm = (typeof GAUGE_TERMS)[number]
export type CounterTerm = (typeof COUNTER_TERMS)[number]
export type HistogramTerm = (typeof HISTOGRAM_TERMS)[number]
export type Term = GaugeTerm | CounterTerm | HistogramTerm

/** A histogram of one scrape, its series added up: cumulative counts by upper bound (seconds). */
export interface Buckets {
  buckets: [number, number][]
  count: number
  sum: number | null
}

/** One scrape in the vocabulary: what `server-metrics.jsonl` keeps and the per-level figures read. */
export interface ScrapeValues {
  gauges: Partial<Record<GaugeTerm, number>>
  counters: Partial<Record<CounterTerm, number>>
  histograms: Partial<Record<HistogramTerm, Buckets>>
  /** The family each term was read from, e.g. { running: 'vllm:num_requests_running' }. */
  sources: Partial<Record<Term, string>>
}

/** How a family becomes a term's value. */
interface Source {
  family: string
  /** Multiply by this (DCGM's MiB to bytes, percent to a fraction). */
  scale?: number
  /** A counter read from a histogram's _sum (SGLang retractions, TGI token lengths). */
  fromSum?: true
}

/**
 * Series of one family in one scrape are added up (engines, GPUs, finish reasons), except for
 * fractions, which are averaged: two GPUs at 50% are at 50%, two engines' KV caches half full are
 * half full.
 */
const AVERAGED: ReadonlySet<Term> = new Set([
  'kv_cache_usage',
  'cache_hit_rate',
  'gpu_utilization',
  'spec_accept_length',
  'spec_accept_rate',
])

const MIB = 1024 * 1024

/** Families by term; vLLM, SGLang, TGI, llama.cpp, TensorRT-LLM under Dynamo, the Dynamo frontend, DCGM. */
const SOURCES: Record<Term, readonly Source[]> = {
  running: [
    { family: 'vllm:num_requests_running' },
    { family: 'sglang:num_running_reqs' },
    { family: 'tgi_batch_current_size' },
    { family: 'llamacpp:requests_processing' },
    { family: 'dynamo_frontend_inflight_requests' },
    { family: 'dynamo_component_inflight_requests' },
  ],
  waiting: [
    { family: 'vllm:num_requests_waiting' },
    { family: 'sglang:num_queue_reqs' },
    { family: 'tgi_queue_size' },
    { family: 'llamacpp:requests_deferred' },
    { family: 'dynamo_frontend_queued_requests' },
  ],
  kv_cache_usage: [
    { family: 'vllm:kv_cache_usage_perc' },
    // vLLM's V0 engine; a fraction too, despite the name.
    { family: 'vllm:gpu_cache_usage_perc' },
    { family: 'sglang:token_usage' },
    { family: 'llamacpp:kv_cache_usage_ratio' },
    { family: 'dynamo_component_kvstats_gpu_cache_usage_percent' },
  ],
  cache_hit_rate: [
    // Engines that only publish a rate; vLLM's counters below give it per level instead.
    { family: 'vllm:gpu_prefix_cache_hit_rate' },
    { family: 'sglang:cache_hit_rate' },
    { family: 'dynamo_component_kvstats_gpu_prefix_cache_hit_rate' },
  ],
  gpu_utilization: [{ family: 'DCGM_FI_DEV_GPU_UTIL', scale: 0.01 }],
  gpu_memory_used_bytes: [{ family: 'DCGM_FI_DEV_FB_USED', scale: MIB }],
  gpu_power_watts: [{ family: 'DCGM_FI_DEV_POWER_USAGE' }],
  prefix_cache_queries: [
    { family: 'vllm:prefix_cache_queries' },
    { family: 'vllm:gpu_prefix_cache_queries' },
  ],
  prefix_cache_hits: [{ family: 'vllm:prefix_cache_hits' }, { family: 'vllm:gpu_prefix_cache_hits' }],
  preemptions: [
    { family: 'vllm:num_preemptions' },
    // SGLang's retraction (a running request evicted for KV space) is vLLM's preemption; the
    // histogram of retractions per request sums to the total.
    { family: 'sglang:num_retractions', fromSum: true },
  ],
  prompt_tokens: [
    { family: 'vllm:prompt_tokens' },
    { family: 'sglang:prompt_tokens' },
    { family: 'llamacpp:prompt_tokens' },
    { family: 'tgi_request_input_length', fromSum: true },
    { family: 'dynamo_frontend_input_sequence_tokens', fromSum: true },
  ],
  generation_tokens: [
    { family: 'vllm:generation_tokens' },
    { family: 'sglang:generation_tokens' },
    { family: 'llamacpp:tokens_predicted' },
    { family: 'tgi_request_generated_tokens', fromSum: true },
    { family: 'dynamo_frontend_output_tokens' },
  ],
  // Speculative decoding: vLLM's v1 counters (vllm/v1/spec_decode/metrics.py) and llama.cpp's of the
  // same names (builds since 2025); SGLang's running gauges.
  spec_drafts: [{ family: 'vllm:spec_decode_num_drafts' }, { family: 'llamacpp:spec_decode_num_drafts' }],
  spec_draft_tokens: [
    { family: 'vllm:spec_decode_num_draft_tokens' },
    { family: 'llamacpp:spec_decode_num_draft_tokens' },
  ],
  spec_accepted_tokens: [
    { family: 'vllm:spec_decode_num_accepted_tokens' },
    { family: 'llamacpp:spec_decode_num_accepted_tokens' },
  ],
  spec_accept_length: [{ family: 'sglang:spec_accept_length' }],
  spec_accept_rate: [{ family: 'sglang:spec_accept_rate' }],
  // DCGM counts millijoules since the driver loaded.
  gpu_energy_joules: [{ family: 'DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION', scale: 0.001 }],
  server_ttft: [
    { family: 'vllm:time_to_first_token_seconds' },
    { family: 'sglang:time_to_first_token_seconds' },
    { family: 'trtllm_time_to_first_token_seconds' },
    { family: 'dynamo_frontend_time_to_first_token_seconds' },
  ],
  server_queue_time: [
    { family: 'vllm:request_queue_time_seconds' },
    { family: 'sglang:queue_time_seconds' },
    { family: 'tgi_request_queue_duration' },
    { family: 'trtllm_request_queue_time_seconds' },
  ],
  server_e2e: [
    { family: 'vllm:e2e_request_latency_seconds' },
    { family: 'sglang:e2e_request_latency_seconds' },
    { family: 'tgi_request_duration' },
    { family: 'trtllm_e2e_request_latency_seconds' },
    { family: 'dynamo_frontend_request_duration_seconds' },
  ],
  server_itl: [
    { family: 'vllm:inter_token_latency_seconds' },
    { family: 'sglang:inter_token_latency_seconds' },
    { family: 'dynamo_frontend_inter_token_latency_seconds' },
  ],
}

/** Every family some term can come from: what a scrape keeps of a /metrics body (exposition-filter.ts). */
export const VOCABULARY_FAMILIES: ReadonlySet<string> = new Set(
  Object.values(SOURCES).flatMap((sources) => sources.map((source) => source.family)),
)

/** The families a term can come from, for the docs and the tests. */
export function sourcesOf(term: Term): readonly string[] {
  return SOURCES[term].map((source) => source.family)
}

/**
 * A family by its name as the table spells it. OpenMetrics names a counter family without _total
 * (`# TYPE x counter`, samples x_total), classic Prometheus with it (`# TYPE x_total counter`), and an
 * exposition without TYPE lines leaves x_total untyped: all three are found.
 */
export function findFamily(families: ReadonlyMap<string, Family>, name: string): Family | undefined {
  return families.get(name) ?? families.get(`${name}_total`)
}

/** One scrape's families in the vocabulary, and the families that were read (for the raw file). */
export function mapScrape(families: ReadonlyMap<string, Family>): {
  values: ScrapeValues
  used: Family[]
} {
  const values: ScrapeValues = { gauges: {}, counters: {}, histograms: {}, sources: {} }
  const used = new Map<string, Family>()
  const take = (term: Term, read: (family: Family, source: Source) => boolean): void => {
    for (const source of SOURCES[term]) {
      const family = findFamily(families, source.family)
      if (family === undefined || !read(family, source)) continue
      values.sources[term] = family.name
      used.set(family.name, family)
      return
    }
  }
  for (const term of GAUGE_TERMS)
    take(term, (family, source) => {
      const value = plainValue(family, source, AVERAGED.has(term))
      if (value === null) return false
      values.gauges[term] = term === 'kv_cache_usage' ? asFraction(value) : value
      return true
    })
  for (const term of COUNTER_TERMS)
    take(term, (family, source) => {
      const value = plainValue(family, source, false)
      if (value === null) return false
      values.counters[term] = value
      return true
    })
  for (const term of HISTOGRAM_TERMS)
    take(term, (family) => {
      const buckets = addedHistograms(family.histograms)
      if (buckets === null) return false
      values.histograms[term] = buckets
      return true
    })
  return { values, used: [...used.values()] }
}

/** A gauge's or counter's series added up (or averaged), scaled; null when there is no finite value. */
function plainValue(family: Family, source: Source, averaged: boolean): number | null {
  const values = source.fromSum
    ? family.histograms.map((series) => series.sum ?? Number.NaN)
    : family.type === 'histogram'
      ? []
      : family.series.map((series) => series.value)
  const finite = values.filter(Number.isFinite)
  if (finite.length === 0) return null
  const total = finite.reduce((sum, value) => sum + value, 0)
  return (averaged ? total / finite.length : total) * (source.scale ?? 1)
}

/**
 * A KV-cache usage above 1 can only be a percentage (an engine whose "_percent" means what it
 * says): read as one. Every engine seen so far publishes a fraction.
 */
function asFraction(value: number): number {
  return value > 1 ? value / 100 : value
}

/**
 * A histogram's series added up bucket by bucket (several engines, models or endpoints). Series
 * with other bucket bounds than the first one's cannot be added and are left out; a histogram with
 * no buckets (only _count and _sum) gives no percentiles and is skipped. The +Inf bucket is not kept
 * (JSON has no Infinity): it is `count`.
 */
function addedHistograms(series: readonly HistogramSeries[]): Buckets | null {
  const withBuckets = series.filter((one) => one.buckets.length > 0)
  const first = withBuckets[0]
  if (first === undefined) return null
  const bounds = first.buckets.map(([bound]) => bound)
  const finite = bounds.filter(Number.isFinite)
  const counts = finite.map(() => 0)
  let count = 0
  let sum: number | null = 0
  for (const one of withBuckets) {
    if (one.buckets.length !== bounds.length || one.buckets.some(([bound], i) => bound !== bounds[i]))
      continue
    for (let i = 0; i < finite.length; i++)
      counts[i] = (counts[i] as number) + (one.buckets[i] as [number, number])[1]
    count += one.count ?? (one.buckets.at(-1) as [number, number])[1]
    sum = sum === null || one.sum === null || !Number.isFinite(one.sum) ? null : sum + one.sum
  }
  return { buckets: finite.map((bound, i) => [bound, counts[i] as number]), count, sum }
}
