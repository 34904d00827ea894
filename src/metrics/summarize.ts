import type { Protocol } from '../protocols/names.js'
import { protocolOf } from '../protocols/wire-protocol.js'
import type { ErrorClass, RequestRecord } from '../records/types.js'
import type { ServerLevelFigures } from '../server-metrics/level-figures.js'
import type { Accumulator } from './accumulator.js'
import type { CacheShareBucket } from './cache-effect.js'
import type { CancellationFigures } from './cancellation-figures.js'
import type { ClientHealth, LevelClientStats } from './client-health.js'
import type { ConnectionFigures } from './connection-figures.js'
import { isCancelled } from './derive.js'
import type { Distribution } from './distribution.js'
import type { EmbeddingFigures } from './embedding-figures.js'
import type { EventFigures } from './event-figures.js'
import type { LevelFailures } from './failure-causes.js'
import type { AnyFigure, Applicability, LevelContext, LevelFigures } from './figure.js'
import { LEVEL_FIGURES } from './figure-catalogue.js'
import type { FluidityDeadlines, FluidityFigures } from './fluidity.js'
import type { InBandFigures } from './in-band-figures.js'
import type { AchievedConcurrency, SteadyWindow } from './in-flight.js'
import type { LevelIntervals } from './intervals.js'
import type { JobFigures } from './job-figures.js'
import { LevelTally } from './level-tally.js'
import type { NetworkFigures } from './network-figures.js'
import type { OpenLoopFigures } from './open-loop-figures.js'
import type { LevelPrecision } from './precision.js'
import type { ReasoningFigures } from './reasoning-figures.js'
import type { LevelSlo, Slo } from './slo.js'
import type { SpeculativeFigures } from './speculative.js'
import type { StructuredFigures } from './structured-figures.js'
import type { TurnFigures } from './turn-figures.js'
import type { CostFigures, InputFigures, OutputFigures, Prices, ScheduleFigures } from './workload-figures.js'

export type { ClientHealth }

/**
 * What a level's value counts: streams held (a closed loop per level) or requests sent per second
 * (an open loop per level). Results carry it beside every level value, which means either.
 */
export type LoadMode = 'concurrency' | 'request_rate'

export type Verdict =
  | 'healthy'
  | 'saturated'
  | 'overloaded'
  | 'client-bound'
  | 'misconfigured'
  | 'interrupted'

export interface TokenCounting {
  from_usage: number
  from_tokenizer: number
  /** Mean of (tokenizer - usage) / usage over requests that had both, in percent; null if none. */
  tokenizer_vs_usage_percent: number | null
  /** Requests whose usage was impossible (see records/usage-check.ts): counted by the tokenizer instead. */
  usage_rejected?: number
  /** Requests whose text was too long to count whole (bounded-count.ts): its head counted, the rest at its rate; absent when none. */
  extrapolated?: number
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
  /** 95% intervals of the figures judgements rest on (intervals.ts); absent in results of older versions. */
  intervals?: LevelIntervals
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
  /** Request-rate mode: offered against served rate and requests in flight over the window; null otherwise (absent in older results). */
  open_loop?: OpenLoopFigures | null
  /** Measured requests' tokens priced; null without prices. */
  cost: CostFigures | null
  token_counting: TokenCounting
  /** New and reused connections, resends, and the server's closes after responses. */
  connections?: ConnectionFigures
  /** TCP handshakes of the connections opened for its requests (one round trip each); absent when none was timed. */
  network?: NetworkFigures
  /** Tokens per event, ITL per token, events after [DONE]. */
  events?: EventFigures
  /** Embeddings runs: inputs and input tokens per second (TTFT, TPOT, ITL, output tok/s do not apply). */
  embeddings?: EmbeddingFigures
  /** What the engine reported in its responses (llama.cpp timings, usage details); absent when nothing. */
  in_band?: InBandFigures
  /** Time to first reasoning and answer token, reasoning and answer tokens; absent when no request reasoned. */
  reasoning?: ReasoningFigures
  /** The fluidity index over the level's requests (fluidity.ts); absent without the run's deadlines or a stream. */
  fluidity?: FluidityFigures
  /** --response-schema, --tools: the answers checked and how many were valid (structured-figures.ts); absent otherwise. */
  structured?: StructuredFigures
  /** Of the answers checked (schema, tool calls), the share valid; absent when nothing was checked. */
  output_valid_share?: number
  /** Session runs: figures per turn index (turn-figures.ts); absent otherwise. */
  turns?: TurnFigures[]
  /** Job runs: job completion time, tokens per job, jobs per hour, TTFT and cached share by depth (job-figures.ts); absent otherwise. */
  jobs?: JobFigures
  /** TTFT by the share of the prompt served from the server's prefix cache (cache-effect.ts); absent without hits. */
  cache_effect?: CacheShareBucket[]
  /** --cancel-share: the requests the client cancelled, kept out of every other figure (cancellation-figures.ts); absent when none. */
  cancellation?: CancellationFigures
  /** The count of cancellation, for the table's column; absent when none. */
  cancelled?: number
  /** Speculative decoding from the cadence and the engine's own word (speculative.ts); absent without either. */
  speculative?: SpeculativeFigures
  /** The acceptance length to show: the engine's, else the cadence's when it saw bursts; absent otherwise. */
  acceptance_length?: number
  /**
   * What the level's own records say about the server's stream and connections, in words: resends,
   * closes after responses, tokens per event, events after [DONE], usage not trusted. The client's
   * own health is in client.notes.
   */
  notes?: string[]
  client: ClientHealth
  /** The server's own figures over the level, from its /metrics (server-metrics.jsonl); absent when not scraped. */
  server?: ServerLevelFigures | null
  /** The level was cut short by an interrupt (Ctrl-C, SIGTERM): shown, not judged; absent otherwise. */
  interrupted?: boolean
  /** --precision: the figures' precision reached and what ended the level; absent without it. */
  precision?: LevelPrecision
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
  /** The whole-request timeout, ms: a failed request's latency in error-adjusted figures. */
  timeoutMs: number
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
  /** --images: every prompt carried images, so the input figures say the share of the server's count they are. */
  images?: boolean
  /** The run's fluidity deadlines (fluidity.ts); absent or null = no fluidity figures. */
  fluidity?: FluidityDeadlines | null
}

export function summarizeLevel(
  value: number,
  allRecords: Iterable<RequestRecord>,
  options: SummaryOptions,
  clientStats: LevelClientStats,
): Omit<LevelSummary, 'verdict' | 'advice'> {
  const level = new LevelSummarizer(value, options)
  for (const record of allRecords) if (record.phase === 'measure' && record.level === value) level.add(record)
  return level.result(clientStats)
}

/** The client's self-watch before a level's end reports it. */
const NO_CLIENT_STATS: LevelClientStats = { cpu_percent: 0, loops: [] }

/**
 * One level's figures, fed its measured records one at a time as they arrive (each to every figure
 * of the catalogue that applies) and read once when the level ends, with the client's self-watch of
 * that level: nothing keeps the records.
 */
export class LevelSummarizer {
  private readonly context: LevelContext
  private readonly figures: { figure: AnyFigure; accumulator: Accumulator<object> | null }[] = []

  constructor(value: number, options: SummaryOptions) {
    this.context = {
      value,
      options,
      mode: options.mode ?? 'concurrency',
      clientStats: NO_CLIENT_STATS,
      generates: protocolOf(options.protocol).generatesTokens,
      tally: new LevelTally(),
      figures: {},
    }
    for (const figure of LEVEL_FIGURES) {
      const { source } = figure
      if ('from' in source) continue
      const applies = appliesTo(figure.applies, this.context)
      this.figures.push({
        figure,
        accumulator: applies && 'accumulator' in source ? source.accumulator(this.context) : null,
      })
    }
  }

  add(record: RequestRecord): void {
    // A request cancelled on purpose is its own outcome: only the figure that counts it sees it
    // (not the tally of successes and failures, not a latency that needs the whole reply).
    if (isCancelled(record)) {
      for (const { figure, accumulator } of this.figures) if (figure.takesCancelled) accumulator?.add(record)
      return
    }
    this.context.tally.add(record)
    for (const { figure, accumulator } of this.figures) if (!figure.takesCancelled) accumulator?.add(record)
  }

  /** The level's measured window (first send to last end, run-clock ms); null before its first record. */
  window(): { start: number; end: number } | null {
    const { tally } = this.context
    return tally.requests === 0 ? null : { start: tally.windowStart, end: tally.windowEnd }
  }

  /** The level's figures, in the catalogue's order; `clientStats` is the client's self-watch over the level. */
  result(clientStats: LevelClientStats): LevelFigures {
    const { context } = this
    context.clientStats = clientStats
    const figures = context.figures
    for (const { figure, accumulator } of this.figures) {
      const fields = Object.keys(figure.fields) as (keyof LevelFigures)[]
      if (!appliesTo(figure.applies, context)) {
        if (figure.applies?.otherwise === 'null')
          for (const key of fields) Object.assign(figures, { [key]: null })
        continue
      }
      const { source } = figure
      const values: Partial<LevelFigures> =
        accumulator !== null ? accumulator.result() : 'derive' in source ? source.derive(context) : {}
      if (figure.absentWhenNull && fields.every((key) => values[key] == null)) continue
      Object.assign(figures, values)
    }
    return figures as LevelFigures
  }
}

/** Whether a figure applies to this level's run (no conditions: always). */
function appliesTo(applies: Applicability | undefined, context: LevelContext): boolean {
  if (applies === undefined) return true
  if (applies.mode !== undefined && applies.mode !== context.mode) return false
  if (applies.generates !== undefined && applies.generates !== context.generates) return false
  if (applies.slos && context.options.slos.length === 0) return false
  if (applies.pricing && context.options.pricing == null) return false
  return true
}
