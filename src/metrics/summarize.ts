import type { Protocol } from '../protocols/names.js'
import { protocolOf } from '../protocols/wire-protocol.js'
import { fdLimitReason } from '../records/client-fd-limit.js'
import { ERROR_CLASSES, type ErrorClass, type RequestRecord } from '../records/types.js'
import { unstreamedReasoningTokens } from '../records/unstreamed-reasoning.js'
import { splitEvenly } from '../schedule/split.js'
import type { ServerLevelFigures } from '../server-metrics/level-figures.js'
import { type CacheShareBucket, cacheEffect } from './cache-effect.js'
import { type ClientHealth, type Dispatch, judgeClient, type LevelClientStats } from './client-health.js'
import { type ConnectionFigures, connectionFigures, connectionNotes } from './connection-figures.js'
import { e2eMs, isOk, pushItlMs, tpotMs, ttftMs } from './derive.js'
import { type Distribution, percentileOfSorted, round, summarizeSamples } from './distribution.js'
import { type EmbeddingFigures, embeddingFigures } from './embedding-figures.js'
import { type EventFigures, eventFigures, eventNotes } from './event-figures.js'
import { type LevelFailures, levelFailures } from './failure-causes.js'
import { type InBandFigures, inBandFigures } from './in-band-figures.js'
import { type AchievedConcurrency, inFlightFigures, type SteadyWindow } from './in-flight.js'
import { type ReasoningFigures, reasoningFigures, reasoningNotes } from './reasoning-figures.js'
import { shardWindows } from './shard-windows.js'
import { evaluateSlos, type LevelSlo, type Slo } from './slo.js'
import { type TurnFigures, turnFigures } from './turn-figures.js'
import {
  type CostFigures,
  costOf,
  type InputFigures,
  inputFigures,
  intendedLatencies,
  type OutputFigures,
  outputFigures,
  type Prices,
  type ScheduleFigures,
  scheduleFigures,
  tokenTotals,
} from './workload-figures.js'

export type { ClientHealth }

/**
 * What a level's value counts: streams held (a closed loop per level) or requests sent per second
 * (an open loop per level). Results carry it beside every level value, which means either.
 */
export type LoadMode = 'concurrency' | 'request_rate'

export type Verdict = 'healthy' | 'saturated' | 'overloaded' | 'client-bound' | 'misconfigured'

export interface TokenCounting {
  from_usage: number
  from_tokenizer: number
  /** Mean of (tokenizer - usage) / usage over requests that had both, in percent; null if none. */
  tokenizer_vs_usage_percent: number | null
  /** Requests whose usage was impossible (see records/usage-check.ts): counted by the tokenizer instead. */
  usage_rejected?: number
}

export interface LevelSummary extends LevelFailures {
  /** The level: streams in concurrency mode, requests per second in request_rate mode. */
  value: number
  mode: LoadMode
  requests: number
  ok: number
  failed: number
  success_rate: number
  errors: Record<ErrorClass, number>
  /** Up to three distinct failure messages per class, to show what went wrong. */
  error_samples: { class: ErrorClass; message: string }[]
  /** Timeouts by kind (their sum is errors.timeout). */
  timeouts: Record<'connect' | 'first_token' | 'idle' | 'total', number>
  ttft_ms: Distribution
  tpot_ms: Distribution
  itl_ms: Distribution
  e2e_ms: Distribution
  /** Over every request, a failed one counting as the timeout: a level cannot look fast by failing. */
  ttft_ms_error_adjusted: Distribution
  e2e_ms_error_adjusted: Distribution
  /** SLO accounting when objectives were set, else null. */
  slo: LevelSlo | null
  output_tokens_per_s: number
  /** Output tokens/s over the steady window when the level has one, else the same as output_tokens_per_s. */
  output_tokens_per_s_steady: number
  /** Where the level held its streams (see in-flight.ts); null = it never did for long enough. */
  steady_window: SteadyWindow | null
  /** Requests really in flight over the measured window, from the records. */
  achieved_concurrency: AchievedConcurrency
  requests_per_s: number
  /** Measured window of the level: first send to last response end, seconds. */
  duration_s: number
  output_tokens: number
  /** Input tokens requested vs counted by the server. */
  input: InputFigures
  /** Output lengths reached, and requests that stopped before max_tokens. */
  output: OutputFigures
  /** Request-rate mode: latency from the intended send time (coordinated omission); null otherwise. */
  ttft_ms_from_intended: Distribution | null
  e2e_ms_from_intended: Distribution | null
  /** Request-rate mode: arrivals planned, sent, dropped and late; null otherwise. */
  schedule: ScheduleFigures | null
  /** Measured requests' tokens priced; null without prices. */
  cost: CostFigures | null
  token_counting: TokenCounting
  /** New and reused connections, resends, and the server's closes after responses. */
  connections?: ConnectionFigures
  /** Tokens per event, ITL per token, events after [DONE]. */
  events?: EventFigures
  /** Embeddings runs: inputs and input tokens per second (TTFT, TPOT, ITL, output tok/s do not apply). */
  embeddings?: EmbeddingFigures
  /** What the engine reported in its responses (llama.cpp timings, usage details); absent when nothing. */
  in_band?: InBandFigures
  /** Time to first reasoning and answer token, reasoning and answer tokens; absent when no request reasoned. */
  reasoning?: ReasoningFigures
  /** Session runs: figures per turn index (turn-figures.ts); absent otherwise. */
  turns?: TurnFigures[]
  /** TTFT by the share of the prompt served from the server's prefix cache (cache-effect.ts); absent without hits. */
  cache_effect?: CacheShareBucket[]
  /**
   * What the level's own records say about the server's stream and connections, in words: resends,
   * closes after responses, tokens per event, events after [DONE], usage not trusted. The client's
   * own health is in client.notes.
   */
  notes?: string[]
  client: ClientHealth
  /** The server's own figures over the level, from its /metrics (server-metrics.jsonl); absent when not scraped. */
  server?: ServerLevelFigures | null
  verdict: Verdict
  advice: string
}

/**
 * Summarizes one level's measured records (warm-up and preflight excluded by the caller or here).
 * Latency distributions are over successful requests; throughput counts successful requests'
 * output tokens over the level's wall window (first send to last end).
 */
export interface SummaryOptions {
  percentiles: readonly number[]
  /** The request timeout: a failed request's latency in error-adjusted figures. */
  timeout_ms: number
  slos: readonly Slo[]
  /** Default concurrency: request-rate figures (intended-time latency, schedule) only when set. */
  mode?: LoadMode
  /** Default none: no cost figures. */
  pricing?: Prices | null
  /**
   * One shard of a run spread over processes: its records hold its own share of each level's streams
   * (split as the plan splits them), and its achieved concurrency is judged against that share.
   */
  shard?: { index: number; count: number } | null
  /** The wire protocol; embeddings levels get their own figures and generate nothing by design. */
  protocol?: Protocol | undefined
}

export function summarizeLevel(
  value: number,
  allRecords: readonly RequestRecord[],
  options: SummaryOptions,
  clientStats: LevelClientStats,
): Omit<LevelSummary, 'verdict' | 'advice'> {
  const { percentiles } = options
  const records = allRecords.filter((r) => r.phase === 'measure' && r.level === value)
  const errors = Object.fromEntries(ERROR_CLASSES.map((c) => [c, 0])) as Record<ErrorClass, number>
  const timeouts = { connect: 0, first_token: 0, idle: 0, total: 0 }
  const samples: { class: ErrorClass; message: string }[] = []
  const ttft: number[] = []
  const tpot: number[] = []
  const itl: number[] = []
  const e2e: number[] = []
  const counting = { from_usage: 0, from_tokenizer: 0, discrepancySum: 0, discrepancyCount: 0 }
  let ok = 0
  let outputTokens = 0
  let windowStart = Number.POSITIVE_INFINITY
  let windowEnd = Number.NEGATIVE_INFINITY
  const lateness: number[] = []
  for (const record of records) {
    windowStart = Math.min(windowStart, record.sent_at)
    windowEnd = Math.max(windowEnd, record.end_at)
    lateness.push(record.sent_at - record.scheduled_at)
    if (!isOk(record)) {
      const error = record.error as NonNullable<RequestRecord['error']>
      errors[error.class]++
      const sameClass = samples.filter((sample) => sample.class === error.class)
      if (sameClass.length < 3 && !sameClass.some((sample) => sample.message === error.message)) {
        samples.push({ class: error.class, message: error.message })
      }
      if (error.class === 'timeout') timeouts[error.timeout ?? 'total']++
      continue
    }
    ok++
    outputTokens += record.output_tokens
    const first = ttftMs(record)
    if (first !== null) ttft.push(first)
    const perToken = tpotMs(record)
    if (perToken !== null) tpot.push(perToken)
    pushItlMs(record, itl)
    e2e.push(e2eMs(record))
    countTokenSource(record, counting)
  }
  const durationS = records.length === 0 ? 0 : (windowEnd - windowStart) / 1000
  const connections = connectionFigures(records, clientStats.connections?.closed_by_server)
  const itlMs = summarizeSamples(itl, percentiles)
  const events = eventFigures(records, percentiles, itlMs)
  const usageRejected = records.filter((r) => r.rejected_usage !== undefined).length
  const reasoning = reasoningFigures(records, percentiles) ?? undefined
  const client = judgeClient(
    clientStats,
    options.mode === 'request_rate' ? null : dispatchFigures(lateness, e2e),
  )
  const fdLimit = fdLimitReason(records)
  if (fdLimit !== null) {
    client.reasons.push(fdLimit)
    client.bound = true
  }
  const rates = shardRates(records, durationS, outputTokens, ok)
  const streams =
    options.shard == null ? value : (splitEvenly(value, options.shard.count)[options.shard.index] ?? 0)
  const inFlight = inFlightFigures(records, options.mode === 'request_rate' ? null : streams)
  // Error-adjusted: every request counts, a failed one as the worst latency the client would wait.
  const failedAs = (value: number | null, record: RequestRecord): number | null =>
    isOk(record) ? value : options.timeout_ms
  const ttftAdjusted: number[] = []
  const e2eAdjusted: number[] = []
  for (const record of records) {
    const first = failedAs(ttftMs(record), record)
    if (first !== null) ttftAdjusted.push(first)
    e2eAdjusted.push(failedAs(e2eMs(record), record) as number)
  }
  return {
    value,
    mode: options.mode ?? 'concurrency',
    requests: records.length,
    ok,
    failed: records.length - ok,
    success_rate: records.length === 0 ? 0 : round(ok / records.length, 4),
    errors,
    error_samples: samples,
    ...levelFailures(records, ok, outputTokens, protocolOf(options.protocol).generatesTokens),
    ...(protocolOf(options.protocol).generatesTokens
      ? {}
      : { embeddings: embeddingFigures(records, durationS) }),
    timeouts,
    ttft_ms: summarizeSamples(ttft, percentiles),
    tpot_ms: summarizeSamples(tpot, percentiles),
    itl_ms: itlMs,
    e2e_ms: summarizeSamples(e2e, percentiles),
    ttft_ms_error_adjusted: summarizeSamples(ttftAdjusted, percentiles),
    e2e_ms_error_adjusted: summarizeSamples(e2eAdjusted, percentiles),
    slo:
      options.slos.length === 0 ? null : evaluateSlos(records, options.slos, options.timeout_ms, durationS),
    output_tokens_per_s: round(rates.tokensPerS, 2),
    output_tokens_per_s_steady: inFlight.steady?.output_tokens_per_s ?? round(rates.tokensPerS, 2),
    steady_window: inFlight.steady,
    achieved_concurrency: inFlight.achieved,
    requests_per_s: round(rates.requestsPerS, 3),
    duration_s: round(durationS, 3),
    output_tokens: outputTokens,
    input: inputFigures(records),
    output: outputFigures(records, percentiles),
    ...(options.mode === 'request_rate'
      ? intendedLatencies(records, percentiles)
      : { ttft_ms_from_intended: null, e2e_ms_from_intended: null }),
    schedule:
      options.mode === 'request_rate'
        ? scheduleFigures(records, clientStats.arrivals ?? null, clientStats.max_in_flight ?? null)
        : null,
    cost: options.pricing == null ? null : costOf(tokenTotals(records), options.pricing),
    token_counting: {
      from_usage: counting.from_usage,
      from_tokenizer: counting.from_tokenizer,
      tokenizer_vs_usage_percent:
        counting.discrepancyCount === 0
          ? null
          : round((100 * counting.discrepancySum) / counting.discrepancyCount, 2),
      usage_rejected: usageRejected,
    },
    connections,
    events,
    // Absent, not null, when no request carried any: results of runs without it stay as they were.
    ...inBand(records, percentiles),
    ...(reasoning === undefined ? {} : { reasoning }),
    ...prefixCacheFigures(records),
    notes: [
      ...connectionNotes(connections),
      ...eventNotes(events, usageRejected),
      ...reasoningNotes(reasoning),
    ],
    client,
  }
}

/** Per-turn and cache-share figures, each absent when the level has none (results stay as they were). */
function prefixCacheFigures(records: readonly RequestRecord[]): Pick<LevelSummary, 'turns' | 'cache_effect'> {
  const turns = turnFigures(records)
  const effect = cacheEffect(records)
  return { ...(turns === null ? {} : { turns }), ...(effect === null ? {} : { cache_effect: effect }) }
}

function inBand(
  records: readonly RequestRecord[],
  percentiles: readonly number[],
): { in_band?: InBandFigures } {
  const figures = inBandFigures(records, percentiles)
  return figures === null ? {} : { in_band: figures }
}

/**
 * Throughput over the level's window. Records of a merged sharded run carry their shard, and each
 * shard's throughput is taken over its own window (first send to last end) and summed: shards
 * started a little apart must not dilute each other's rate over the union of their windows.
 */
function shardRates(
  records: readonly RequestRecord[],
  durationS: number,
  outputTokens: number,
  ok: number,
): { tokensPerS: number; requestsPerS: number } {
  if (!records.some((r) => r.shard !== undefined))
    return durationS > 0
      ? { tokensPerS: outputTokens / durationS, requestsPerS: ok / durationS }
      : { tokensPerS: 0, requestsPerS: 0 }
  let tokensPerS = 0
  let requestsPerS = 0
  for (const shard of shardWindows(records).values()) {
    const seconds = (shard.end - shard.start) / 1000
    if (seconds <= 0) continue
    tokensPerS += shard.tokens / seconds
    requestsPerS += shard.ok / seconds
  }
  return { tokensPerS, requestsPerS }
}

function dispatchFigures(lateness: number[], e2e: number[]): Dispatch | null {
  if (lateness.length === 0 || e2e.length === 0) return null
  const mean = (values: number[]): number => values.reduce((a, b) => a + b, 0) / values.length
  return {
    lateness_p99_ms: percentileOfSorted(
      lateness.sort((x, y) => x - y),
      99,
    ) as number,
    lateness_mean_ms: mean(lateness),
    e2e_mean_ms: mean(e2e),
  }
}

function countTokenSource(
  record: RequestRecord,
  counting: { from_usage: number; from_tokenizer: number; discrepancySum: number; discrepancyCount: number },
): void {
  if (record.token_source === 'tokenizer') {
    counting.from_tokenizer++
    return
  }
  counting.from_usage++
  // The text holds no hidden reasoning: the tokenizer is compared with the usage of what was streamed.
  const streamed = record.output_tokens - unstreamedReasoningTokens(record)
  if (record.tokenizer_output_tokens !== null && streamed > 0) {
    counting.discrepancySum += (record.tokenizer_output_tokens - streamed) / streamed
    counting.discrepancyCount++
  }
}
