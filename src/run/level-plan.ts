import type { RunConfig } from '../config/types.js'
import { seededRandom } from '../random.js'
import { arrivalOffsets, dealArrivals } from '../schedule/arrivals.js'
import { splitEvenly, splitProportionally } from '../schedule/split.js'
import type { LevelRun } from '../worker/pool.js'

/** This process's place in a sharded run; {0, 1} for a whole run. */
export interface ShardSlot {
  index: number
  count: number
}

export const WHOLE_RUN: ShardSlot = { index: 0, count: 1 }

/** The level values the run steps through: streams, or requests per second. */
export function levelValues(config: RunConfig): number[] {
  return config.load.mode === 'request_rate' ? config.load.rates : config.load.levels
}

/** A timed level's whole length, seconds: warm-up window + measured window + cool-down window. */
export function timedLevelSeconds(load: RunConfig['load']): number {
  return load.warmup_s + (load.duration_per_level_s ?? 0) + load.cooldown_s
}

/**
 * One level as this process runs it: its shard's share of the streams (or of the arrivals), the
 * requests and the warm-up, remainders spread over the first shards. Every shard derives the same
 * whole schedule from the seed and keeps its own arrivals, so together they send exactly it.
 * Returns null when the shard's share of the level is empty (e.g. level 1 of 4 shards).
 */
export function planLevel(config: RunConfig, value: number, shard: ShardSlot): LevelRun | null {
  const { load } = config
  const warmup = splitEvenly(load.warmup_requests, shard.count)[shard.index] as number
  const window =
    load.duration_per_level_s === null
      ? null
      : { warmup_s: load.warmup_s, duration_s: load.duration_per_level_s, cooldown_s: load.cooldown_s }
  if (load.mode === 'request_rate') {
    const random = seededRandom(config.workload.seed * 31 + Math.round(value * 1000))
    const plan = { rate: value, process: load.arrival, burstiness: load.burstiness }
    const all = arrivalOffsets(
      plan,
      random,
      window === null
        ? { count: load.requests_per_level as number }
        : { durationMs: timedLevelSeconds(load) * 1000 },
    )
    const offsets = dealArrivals(all, shard.count)[shard.index] as Float64Array
    if (offsets.length === 0) return null
    return {
      level: value,
      warmup,
      retry: config.client.retry,
      window,
      load: {
        kind: 'open',
        offsets,
        maxInFlight: Math.max(1, splitEvenly(load.max_in_flight, shard.count)[shard.index] as number),
        dropAfterMs: config.client.timeout_s * 1000,
      },
    }
  }
  const streams = splitEvenly(value, shard.count)
  const concurrency = streams[shard.index] as number
  if (concurrency === 0) return null
  const requests =
    load.requests_per_level === null
      ? null
      : (splitProportionally(load.requests_per_level, streams)[shard.index] as number)
  return {
    level: value,
    warmup,
    retry: config.client.retry,
    window,
    load: { kind: 'closed', concurrency, requests },
  }
}
