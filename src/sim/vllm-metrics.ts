/**
 * The simulator's server-side view in vLLM's metric names, observed from its own capacity model, so a
 * /metrics scraper (and the demo) sees running/waiting, KV usage and TTFT/queue histograms with no GPU.
 *
 * What each figure is here:
 * - num_requests_running / num_requests_waiting: requests holding a batch slot / waiting for one.
 * - kv_cache_usage_perc: tokens held by the requests in a slot (prompt + generated so far) over the
 *   `kv_cache_tokens` parameter, capped at 1 (the model does not preempt; vLLM would, beyond 1).
 * - num_preemptions_total: always 0, for that reason.
 * - prompt_tokens_total: prompt tokens of every request whose prefill ended (its first token came).
 * - generation_tokens_total: every output token the engine emitted.
 * - request_queue_time_seconds: submit to getting a slot. time_to_first_token_seconds: arrival at the
 *   server to the first token event written. inter_token_latency_seconds: one gap per later token.
 *   e2e_request_latency_seconds: arrival to the last token, for completed requests only.
 * Bucket bounds are vLLM's own (test/fixtures/metrics/vllm.prom, a real v1-engine scrape).
 */

import type { EngineObserver, SimStats } from '../model/engine.js'
import type { StepObserver } from './draft-model.js'
import { BucketHistogram } from './histogram.js'
import { type MetricFamily, renderExposition } from './metrics-exposition.js'

export const VLLM_TTFT_BUCKETS: readonly number[] = [
  0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80, 160, 640,
  2560,
]
export const VLLM_ITL_BUCKETS: readonly number[] = [
  0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80,
]
/** vLLM uses one set for the request-level durations: E2E, queue, prefill, decode, inference. */
export const VLLM_REQUEST_LATENCY_BUCKETS: readonly number[] = [
  0.3, 0.5, 0.8, 1, 1.5, 2, 2.5, 5, 10, 15, 20, 30, 40, 50, 60, 120, 240, 480, 960, 1920, 7680,
]

export class VllmMetrics implements EngineObserver, StepObserver {
  private promptTokens = 0
  private generationTokens = 0
  /** With a draft model (draft-model.ts): verification steps, drafted and accepted tokens; null without. */
  private spec: { drafts: number; draftTokens: number; accepted: number } | null = null
  private readonly queueTime = new BucketHistogram(VLLM_REQUEST_LATENCY_BUCKETS)
  private readonly ttft = new BucketHistogram(VLLM_TTFT_BUCKETS)
  private readonly itl = new BucketHistogram(VLLM_ITL_BUCKETS)
  private readonly e2e = new BucketHistogram(VLLM_REQUEST_LATENCY_BUCKETS)

  constructor(
    private readonly model: string,
    private readonly kvCacheTokens: number,
  ) {}

  admitted(queuedMs: number): void {
    this.queueTime.observe(queuedMs / 1000)
  }

  firstToken(inputTokens: number, ttftMs: number): void {
    this.promptTokens += inputTokens
    this.generationTokens++
    this.ttft.observe(ttftMs / 1000)
  }

  /** A decode step with a draft: the engine counted one token of it, the accepted drafts are the rest. */
  step(tokens: number, drafted: number): void {
    if (drafted === 0) return // the prefill's token: no draft
    this.spec ??= { drafts: 0, draftTokens: 0, accepted: 0 }
    this.spec.drafts++
    this.spec.draftTokens += drafted
    this.spec.accepted += tokens - 1
    this.generationTokens += tokens - 1
  }

  nextToken(gapMs: number): void {
    this.generationTokens++
    this.itl.observe(gapMs / 1000)
  }

  completed(e2eMs: number): void {
    this.e2e.observe(e2eMs / 1000)
  }

  /** The exposition text, with the gauges read from the engine's stats now. */
  render(stats: SimStats): string {
    const families: MetricFamily[] = [
      gauge('vllm:num_requests_running', 'Number of requests in model execution batches.', stats.running),
      gauge('vllm:num_requests_waiting', 'Number of requests waiting to be processed.', stats.waiting),
      gauge(
        'vllm:kv_cache_usage_perc',
        'KV-cache usage. 1 means 100 percent usage.',
        Math.min(1, stats.kv_tokens / this.kvCacheTokens),
      ),
      counter('vllm:num_preemptions_total', 'Cumulative number of preemption from the engine.', 0),
      counter('vllm:prompt_tokens_total', 'Number of prefill tokens processed.', this.promptTokens),
      counter(
        'vllm:generation_tokens_total',
        'Number of generation tokens processed.',
        this.generationTokens,
      ),
      histogram(
        'vllm:time_to_first_token_seconds',
        'Histogram of time to first token in seconds.',
        this.ttft,
      ),
      histogram('vllm:inter_token_latency_seconds', 'Histogram of inter-token latency in seconds.', this.itl),
      histogram('vllm:e2e_request_latency_seconds', 'Histogram of e2e request latency in seconds.', this.e2e),
      histogram(
        'vllm:request_queue_time_seconds',
        'Histogram of time spent in WAITING phase for request.',
        this.queueTime,
      ),
      ...this.specFamilies(),
    ]
    return renderExposition(families, { model_name: this.model })
  }

  /** vLLM's spec_decode counters (vllm/v1/spec_decode/metrics.py), once a draft step happened. */
  private specFamilies(): MetricFamily[] {
    if (this.spec === null) return []
    return [
      counter('vllm:spec_decode_num_drafts_total', 'Number of spec decoding drafts.', this.spec.drafts),
      counter('vllm:spec_decode_num_draft_tokens_total', 'Number of draft tokens.', this.spec.draftTokens),
      counter('vllm:spec_decode_num_accepted_tokens_total', 'Number of accepted tokens.', this.spec.accepted),
    ]
  }
}

function gauge(name: string, help: string, value: number): MetricFamily {
  return { name, help, type: 'gauge', value }
}

function counter(name: string, help: string, value: number): MetricFamily {
  return { name, help, type: 'counter', value }
}

function histogram(name: string, help: string, h: BucketHistogram): MetricFamily {
  return { name, help, type: 'histogram', histogram: h }
}
