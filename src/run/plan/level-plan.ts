import { bracketLadder, defaultTolerance, type SearchPlan } from '../../analysis/search.js'
import { requestTimeoutMs } from '../../client/request-timeout.js'
import type { RunConfig } from '../../config/types.js'
import { seededRandom } from '../../random.js'
import { arrivalOffsets } from '../../schedule/arrivals.js'
import { type LevelShare, shareOf } from '../../schedule/level-share.js'
import { rampStarts } from '../../schedule/ramp-starts.js'
import { staggeredStarts } from '../../schedule/stagger.js'
import { levelRequestBudget } from '../level/precision-watch.js'
import { traceWarmupPrompts } from './trace-plan.js'

/** The drift control takes at least this many requests (a median's 95% interval needs 6), ... */
export const CONTROL_MIN_REQUESTS = 8
/** ... and at most this long or as long as the first level's measured window took, whichever is longer. */
export const CONTROL_MIN_SECONDS = 5

/**
 * Whether the run measures its first level again after the last (the drift control): a concurrency
 * gradient that is not a trace, sessions or --paired, with the control on. The run still skips it when it is
 * interrupted, a shard, fewer than two levels ran or the first level had too few successes.
 */
export function plansControl(config: RunConfig): boolean {
  const { load, workload } = config
  // --paired needs none: its blocks alternate, so a drift hits both targets alike.
  return (
    load.control &&
    load.mode === 'concurrency' &&
    workload.trace === null &&
    !workload.sessions &&
    !workload.jobs &&
    !config.run.paired
  )
}

/** The control's requests: a third of one run of the first level's, at least CONTROL_MIN_REQUESTS and its streams, at most all of them. */
export function controlRequests(perRun: number, streams: number): number {
  return Math.min(perRun, Math.max(CONTROL_MIN_REQUESTS, streams, Math.ceil(perRun / 3)))
}

/** This process's place in a sharded run; {0, 1} for a whole run. */
export interface ShardSlot {
  index: number
  count: number
}

export const WHOLE_RUN: ShardSlot = { index: 0, count: 1 }

/** The level values the run steps through: streams, or requests per second (--search: its bracket's ladder). */
export function levelValues(config: RunConfig): number[] {
  if (config.workload.trace !== null) return config.workload.trace_speeds
  const plan = searchPlan(config)
  if (plan !== null) return bracketLadder(plan.range)
  return configuredLevels(config)
}

function configuredLevels(config: RunConfig): number[] {
  return config.load.mode === 'request_rate' ? config.load.rates : config.load.levels
}

/** --search: what it looks for (the SLO capacity when there are SLOs, else the knee), where, and how finely; null without. */
export function searchPlan(config: RunConfig): SearchPlan | null {
  if (!config.run.search) return null
  const levels = configuredLevels(config)
  const range: [number, number] = [Math.min(...levels), Math.max(...levels)]
  return {
    target: Object.keys(config.metrics.slo).length > 0 ? 'slo' : 'knee',
    range,
    tolerance: config.run.search_tolerance ?? defaultTolerance(config.load.mode, range),
  }
}

/** A timed level's whole length, seconds: warm-up window + measured window + cool-down window. */
export function timedLevelSeconds(load: RunConfig['load']): number {
  return load.warmup_s + (load.duration_per_level_s ?? 0) + load.cooldown_s
}

/**
 * One level as this process runs it: its shard's share of the whole level (see `shareOf`). Every
 * shard derives the same whole schedule from the seed and keeps its own arrivals, so together they
 * send exactly it. Returns null when the shard's share sends nothing (e.g. level 1 of 4 shards).
 */
export function planLevel(
  config: RunConfig,
  value: number,
  shard: ShardSlot,
  traceOffsetsMs: Float64Array | null = null,
  /** Concurrency mode: the streams' first sends spread over this many ms (0 = all at once). */
  staggerMs = 0,
): LevelShare | null {
  const whole =
    traceOffsetsMs === null ? wholeLevel(config, value, staggerMs) : traceLevel(config, value, traceOffsetsMs)
  const share = shareOf(whole, shard.index, shard.count)
  const idle = share.load.kind === 'closed' ? share.load.concurrency === 0 : share.load.offsets.length === 0
  return idle ? null : share
}

/** The level before any division, the same in every shard. */
function wholeLevel(config: RunConfig, value: number, staggerMs: number): LevelShare {
  const { load } = config
  const window =
    load.duration_per_level_s === null
      ? null
      : { warmup_s: load.warmup_s, duration_s: load.duration_per_level_s, cooldown_s: load.cooldown_s }
  const level = {
    level: value,
    warmup: load.warmup_requests,
    retry: config.client.retry,
    window,
    ...withCancel(load),
  }
  if (load.mode === 'concurrency') {
    // With --precision the budget is the ceiling: the level is told `enough` once precise.
    const closed = { kind: 'closed' as const, concurrency: value, requests: levelRequestBudget(load) }
    // --ramp: the streams start one after another over the level's seconds (config/load.ts made it one timed level).
    if (load.ramp_s !== null)
      return { ...level, load: { ...closed, startOffsets: rampStarts(value, load.ramp_s * 1000) } }
    if (staggerMs <= 0 || value <= 1) return { ...level, load: closed }
    // Seeded per level, as the arrivals are: every shard derives the same starts and keeps its own.
    const startOffsets = staggeredStarts(value, staggerMs, config.workload.seed * 31 + value)
    return { ...level, load: { ...closed, startOffsets } }
  }
  const random = seededRandom(config.workload.seed * 31 + Math.round(value * 1000))
  const offsets = arrivalOffsets(
    { rate: value, process: load.arrival, burstiness: load.burstiness },
    random,
    window === null
      ? { count: load.requests_per_level as number }
      : { durationMs: timedLevelSeconds(load) * 1000 },
  )
  const timeoutMs = requestTimeoutMs(config.client)
  return { ...level, load: { kind: 'open', offsets, maxInFlight: load.max_in_flight, timeoutMs } }
}

/**
 * A trace replayed at `speed`: row i at its trace offset / speed, sending row i's own prompt. The
 * level is its rows: no timed window, and --requests does not apply.
 */
function traceLevel(config: RunConfig, speed: number, offsetsMs: Float64Array): LevelShare {
  const offsets = offsetsMs.map((offset) => offset / speed)
  const promptIds = Float64Array.from(offsetsMs, (_, row) => row)
  const warmups = traceWarmupPrompts(config.load)
  return {
    level: speed,
    warmup: config.load.warmup_requests,
    // The warm-up's own prompts, after the rows' (planTraceWorkload): none of them is measured.
    ...(warmups > 0 ? { warmupPrompts: { first: offsetsMs.length, count: warmups } } : {}),
    retry: config.client.retry,
    ...withCancel(config.load),
    window: null,
    load: {
      kind: 'open',
      offsets,
      maxInFlight: config.load.max_in_flight,
      timeoutMs: requestTimeoutMs(config.client),
      promptIds,
    },
  }
}

/** The level's cancellation plan (schedule/cancel-pick.ts) as a spread: nothing when no request is cancelled. */
function withCancel(load: RunConfig['load']): Pick<LevelShare, 'cancel'> {
  if (!(load.cancel_share > 0)) return {}
  return {
    cancel: { share: load.cancel_share, after_events: load.cancel_after === 'first' ? 1 : load.cancel_after },
  }
}
