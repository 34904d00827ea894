import { runAdvice } from '../analysis/advice.js'
import { misconfiguredAdvice, misconfiguredSummary } from '../analysis/run-gate.js'
import { findSaturation, type Saturation } from '../analysis/saturation.js'
import { stepsFromBelow } from '../analysis/scaling-step.js'
import { findCapacity, toSlos } from '../analysis/slo.js'
import { adviceFor, levelVerdict } from '../analysis/verdict.js'
import type { LevelClientStats } from '../metrics/client-health.js'
import { round } from '../metrics/distribution.js'
import { unreachableAfterAnswers } from '../metrics/failure-causes.js'
import { type LevelSummary, type SummaryOptions, summarizeLevel } from '../metrics/summarize.js'
import { type Prices, priceTokens, tokenTotals } from '../metrics/workload-figures.js'
import type { RequestRecord } from '../records/types.js'
import type { Calibration } from '../run/calibrate.js'
import type { ConnectionPolicy } from '../run/connection-policy.js'
import type { CostEstimate } from '../run/estimate.js'
import type { MergeInfo } from '../run/merge.js'
import type { ShardInfo } from '../run/shard.js'
import { DEFINITIONS } from './definitions.js'
import { levelName } from './workload-notes.js'

export const RESULT_SCHEMA = 'llmbench.result/1'

/** What a run was: everything besides the records that a report needs. */
export interface RunMeta {
  tool_version: string
  /** This run's id, also on each of its records; absent in results written before ids existed. */
  run_id?: string
  started_at: string
  finished_at: string | null
  /** True when the run was interrupted or is still going: levels may be missing. */
  partial: boolean
  target: { base_url: string; endpoint: string; model: string }
  workload: {
    /** Mean requested lengths (the plan's, over its prompts). */
    input_tokens: number
    output_tokens: number
    /** The length settings as written: "256", "normal(512, 64)", "dataset", ... */
    input?: string
    output?: string
    dataset: string
    tokenizer: string
    stream: boolean
    profile?: string | null
    shared_prefix?: number
    ignore_eos?: boolean
    seed?: number
    /** Prompt-length calibration against the server's usage.prompt_tokens, or why there was none. */
    calibration?: Calibration | { skipped: string } | null
  }
  load: {
    mode: 'concurrency' | 'request_rate'
    /** The level values: streams, or requests per second in request_rate mode. */
    levels: number[]
    arrival?: string
    burstiness?: number
    max_in_flight?: number
    requests_per_level?: number
    duration_per_level?: number
    warmup_s?: number
    cooldown_s?: number
    warmup_requests: number
    retry: number
    timeout_s: number
  }
  /** Prices the cost figures use; null or absent = none given. */
  pricing?: Prices | null
  /** The plan's estimate before the run (requests, tokens, cost). */
  estimate?: CostEstimate | null
  /** Every request sent (warm-up, probes and failures included): what the endpoint billed. */
  totals?: { requests: number; input_tokens: number; output_tokens: number }
  client: {
    workers: number
    architecture: string
    node_version: string
    cpus: number
    host: string
    /** Connection reuse, and whether the server was seen closing after responses; absent in older results. */
    connections?: ConnectionPolicy
  }
  percentiles: number[]
  /** Service-level objectives the run was judged against ({} = none). */
  slo: Record<string, number>
  /** Levels actually run, in order, with how the client's own threads fared during each. */
  levels_run: { concurrency: number; workers: number; client: LevelClientStats }[]
  /** performance.timeOrigin of the run's process: record times + this = wall-clock ms (for merging shards). */
  time_origin_ms?: number
  /** Set on the result of `llmbench merge`: the shards and how well their levels overlapped. */
  merged?: MergeInfo
  /** Set when this result is one shard of a run spread over several processes or machines. */
  shard?: ShardInfo
}

export interface BenchResult {
  schema: typeof RESULT_SCHEMA
  meta: RunMeta
  definitions: typeof DEFINITIONS
  levels: LevelSummary[]
  saturation: Saturation | null
  /** The saturation point in words, also when there is none. */
  saturation_summary: string
  /** The highest level meeting every SLO; null when none does or no SLO was set. */
  capacity: { concurrency: number; reason: string } | null
  capacity_summary: string | null
  /** What to change about the run itself: a coarse ladder, outputs too short, ... */
  advice: string[]
  /** Tokens and cost: measured levels, everything sent, and the estimate made before the run. */
  cost: RunCost | null
}

export interface RunCost {
  currency: string
  estimated: number | null
  /** Sum over the measured levels. */
  measured: number
  /** Every request sent, warm-up and probes included. */
  total: number | null
}

/** The whole summary as a pure function of the records and meta: `report` reuses it unchanged. */
export function buildResult(records: readonly RequestRecord[], meta: RunMeta): BenchResult {
  // A level cut short by a crash or a second Ctrl-C has records but no entry in meta: it is shown
  // too, without the client's self-watch (which it never got to write).
  const known = new Set(meta.levels_run.map((level) => level.concurrency))
  const cut = [
    ...new Set(records.filter((r) => r.phase === 'measure' && !known.has(r.level)).map((r) => r.level)),
  ]
  const levels = [
    ...meta.levels_run,
    ...cut.map((concurrency) => ({ concurrency, workers: 0, client: { cpu_percent: 0, loops: [] } })),
  ]
  const totals = { requests: records.length, ...tokenTotals(records) }
  return finishResult(
    levels.map((level) => summarizeLevel(level.concurrency, records, summaryOptions(meta), level.client)),
    { ...meta, partial: meta.partial || cut.length > 0, totals },
  )
}

type LevelFigures = Omit<LevelSummary, 'verdict' | 'advice'>

/** How levels are summarized, from the run's own meta (so `report` summarizes as `run` did). */
export function summaryOptions(meta: RunMeta): SummaryOptions {
  return {
    percentiles: meta.percentiles,
    timeout_ms: meta.load.timeout_s * 1000,
    slos: toSlos(meta.slo ?? {}),
    // Results written before request-rate mode and pricing existed have neither key.
    mode: meta.load.mode ?? 'concurrency',
    pricing: meta.pricing ?? null,
    shard: meta.shard ?? null,
  }
}

/**
 * The same, from per-level summaries: a run summarizes each level when it ends and drops its records
 * (they are on disk), so memory stays flat over long runs.
 */
export function finishResult(figures: readonly LevelFigures[], meta: RunMeta): BenchResult {
  const summaries = unreachableAfterAnswers(figures)
  const ttftKey = meta.percentiles.includes(95) ? 'p95' : 'mean'
  const rateMode = meta.load?.mode === 'request_rate'
  const saturation = findSaturation(summaries, ttftKey, rateMode)
  const steps = stepsFromBelow(summaries, ttftKey, rateMode)
  const levels: LevelSummary[] = summaries.map((summary) => {
    const step = steps.get(summary.concurrency) ?? null
    const verdict = levelVerdict(summary, saturation, step)
    const advice =
      misconfiguredAdvice({ ...summary, verdict }) ??
      adviceFor(verdict, summary.concurrency, saturation, step, ttftKey)
    return { ...summary, verdict, advice }
  })
  const hasSlos = Object.keys(meta.slo ?? {}).length > 0
  const misconfigured = misconfiguredSummary(levels, (value) => levelName(meta, value))
  return {
    schema: RESULT_SCHEMA,
    meta,
    definitions: DEFINITIONS,
    levels,
    saturation: misconfigured === null ? saturation : null,
    saturation_summary:
      misconfigured ?? describeSaturation(saturation, levels, meta.load?.mode === 'request_rate'),
    capacity: hasSlos ? findCapacity(levels) : null,
    capacity_summary: hasSlos ? describeCapacity(findCapacity(levels), meta.slo) : null,
    advice: runAdvice(levels, misconfigured === null ? saturation : null, meta.workload.output_tokens),
    cost: runCost(levels, meta),
  }
}

function runCost(levels: readonly LevelSummary[], meta: RunMeta): RunCost | null {
  const prices = meta.pricing ?? null
  if (prices === null) return null
  const totals = meta.totals
  return {
    currency: prices.currency,
    estimated: meta.estimate?.cost ?? null,
    measured: round(
      levels.reduce((sum, level) => sum + (level.cost?.amount ?? 0), 0),
      6,
    ),
    total: totals === undefined ? null : priceTokens(totals.input_tokens, totals.output_tokens, prices),
  }
}

function describeCapacity(
  capacity: { concurrency: number; reason: string } | null,
  slo: Record<string, number>,
): string {
  const objectives = Object.entries(slo)
    .map(([key, value]) => `${key} ≤ ${value}`)
    .join(', ')
  if (capacity === null) return `no level meets the SLOs (${objectives})`
  return `capacity ${capacity.concurrency} under the SLOs (${objectives}): ${capacity.reason}`
}

function describeSaturation(
  saturation: Saturation | null,
  levels: readonly LevelSummary[],
  rateMode: boolean,
): string {
  const unit = rateMode ? 'request rate' : 'concurrency'
  if (saturation !== null) return `saturation at ${unit} ${saturation.concurrency}: ${saturation.reason}`
  const highest = levels.reduce((max, level) => Math.max(max, level.concurrency), 0)
  if (levels.length < 2) return 'one level only: run a gradient to find the saturation point'
  return `not saturated up to ${highest}: keep adding ${rateMode ? 'load' : 'concurrency'}`
}
