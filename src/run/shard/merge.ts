import type { LevelClientStats } from '../../metrics/client-health.js'
import { shardWindows } from '../../metrics/shard-windows.js'
import type { RequestRecord } from '../../records/types.js'
import type { BenchResult } from '../../result/bench-result.js'
import { buildResult } from '../../result/build-result.js'
import type { LoadedRun } from '../../result/load-run.js'
import type { LevelOverlap, MergeInfo, RunMeta } from '../../result/run-meta.js'
import type { ServerScrape } from '../../server-metrics/scrape-file.js'

/**
 * Merging the shards of one run, exactly: their raw records are put on one clock and concatenated,
 * and every figure is recomputed by the same pure functions as a single run's (percentiles are
 * never averaged). Throughput per level is the sum of each shard's own rate (see summarizeLevel).
 */

/** Shards that cannot be merged: different runs, missing or repeated shards, no records. */
export class MergeError extends Error {
  override name = 'MergeError'
}

export interface MergeOutcome {
  result: BenchResult
  records: RequestRecord[]
  /** Levels whose windows overlapped less than MIN_OVERLAP, in words. */
  warnings: string[]
}

/** Below this the shards did not load the server together for the level's window: flagged. */
export const MIN_OVERLAP = 0.95

export function mergeShards(runs: readonly LoadedRun[]): MergeOutcome {
  const shards = checkShards(runs)
  const reference = shards[0] as ShardRun
  const base = timeBase(shards)
  const origin = base.originOf(reference)
  const records: RequestRecord[] = []
  for (const shard of shards) {
    // Each process stamps on its own monotonic clock; its time origin, on the time base, puts it on the first shard's.
    const shift = base.originOf(shard) - origin
    for (const record of shard.records) records.push(shiftRecord({ ...record, shard: shard.index }, shift))
  }
  const incomplete = incompleteLevels(shards)
  const meta = mergedMeta(shards, new Set(incomplete.map((cut) => cut.level)))
  const overlap = levelOverlaps(
    records,
    meta.levels_run.map((level) => level.value),
  )
  meta.merged = {
    shards: shards.map((shard) => ({
      index: shard.index,
      host: shard.meta.shard?.host ?? shard.meta.client.host,
      dir: shard.dir,
      records: shard.records.length,
      clock_offset_ms: shard.meta.shard?.clock_offset_ms ?? null,
      coordinator_offset_ms: shard.meta.shard?.coordinator?.offset_ms ?? null,
      coordinator_bound_ms: shard.meta.shard?.coordinator?.bound_ms ?? null,
    })),
    config_digest: reference.meta.shard?.config_digest ?? '',
    overlap,
    time_base: base.kind,
    alignment_error_ms: base.errorMs,
    incomplete,
  }
  const timeBaseWarning =
    base.kind === 'wall-clock' && shards.length > 1
      ? [
          "the shards ran without a coordinator: their records are aligned by the hosts' wall clocks, whose error is not known",
        ]
      : []
  const warnings = [
    ...timeBaseWarning,
    ...incomplete.map(
      (cut) =>
        `level ${cut.level}: incomplete (${cut.reason} at ${cut.at}): shown, not judged; it was not the load planned`,
    ),
    ...overlap
      .filter((level) => level.flagged === true)
      .map(
        (level) =>
          `level ${level.level}: the shards' measured windows overlapped ${(level.ratio * 100).toFixed(0)}% ` +
          `(below ${MIN_OVERLAP * 100}%): they did not load the server together for all of it; ` +
          (base.kind === 'coordinator'
            ? 'a shard started late or ran longer than the others'
            : 'run the shards with a coordinator (llmbench coordinate, run --coordinator)'),
      ),
  ]
  return { result: buildResult(records, meta, serverScrapesOf(runs, shards, base)), records, warnings }
}

interface TimeBase {
  kind: 'coordinator' | 'wall-clock'
  /** A shard's time origin on the merged time base, ms since the epoch. */
  originOf(shard: ShardRun): number
  /** Largest misalignment of two shards' records, ms; null = not known. */
  errorMs: number | null
}

/**
 * With every shard coordinated, each time origin is moved onto the coordinator's clock by the shard's
 * measured offset, and two shards are aligned within the sum of their bounds; otherwise the hosts'
 * wall clocks are trusted as they were.
 */
function timeBase(shards: readonly ShardRun[]): TimeBase {
  const coordinated = shards.map((shard) => shard.meta.shard?.coordinator)
  if (coordinated.some((info) => info === undefined))
    return { kind: 'wall-clock', originOf: (shard) => shard.meta.time_origin_ms as number, errorMs: null }
  const bounds = coordinated.map((info) => info?.bound_ms as number).sort((a, b) => b - a)
  return {
    kind: 'coordinator',
    originOf: (shard) =>
      (shard.meta.time_origin_ms as number) + (shard.meta.shard?.coordinator?.offset_ms as number),
    errorMs: Math.ceil(((bounds[0] ?? 0) + (bounds[1] ?? 0)) * 1000) / 1000,
  }
}

/** Levels any shard's coordinator account says were cut, once each (the first account of the cut). */
function incompleteLevels(shards: readonly ShardRun[]): NonNullable<MergeInfo['incomplete']> {
  const cuts = new Map<number, NonNullable<MergeInfo['incomplete']>[number]>()
  for (const shard of shards)
    for (const level of shard.meta.shard?.coordinator?.levels ?? []) {
      if (level.complete !== false || cuts.has(level.value)) continue
      const cut = level.incomplete
      cuts.set(level.value, {
        level: level.value,
        shard: cut?.shard ?? null,
        at: cut === null ? '' : new Date(cut.at_ms).toISOString(),
        reason: cut?.reason ?? 'cut short',
      })
    }
  return [...cuts.values()]
}

/**
 * Every shard scraped the same server: one shard's scrapes are enough, and adding several would count
 * the server's counters once per shard. The first shard (by index) that has any, on the merged clock.
 */
function serverScrapesOf(
  runs: readonly LoadedRun[],
  shards: readonly ShardRun[],
  base: TimeBase,
): ServerScrape[] {
  const sorted = [...runs].sort(
    (a, b) => (a.result.meta.shard?.index ?? 0) - (b.result.meta.shard?.index ?? 0),
  )
  const run = sorted.find((one) => (one.serverScrapes?.length ?? 0) > 0)
  const shard = shards.find((one) => one.dir === run?.dir)
  if (run === undefined || shard === undefined) return []
  const shift = base.originOf(shard) - base.originOf(shards[0] as ShardRun)
  return (run.serverScrapes as ServerScrape[]).map((scrape) => ({ ...scrape, at: scrape.at + shift }))
}

interface ShardRun {
  dir: string
  index: number
  count: number
  meta: RunMeta
  records: RequestRecord[]
}

function checkShards(runs: readonly LoadedRun[]): ShardRun[] {
  if (runs.length === 0) throw new MergeError('merge: give the shard result folders')
  const shards: ShardRun[] = runs.map((run) => {
    const shard = run.result.meta.shard
    if (shard === undefined)
      throw new MergeError(`${run.dir}: not a shard (its run had no --shard); nothing to merge it with`)
    if (run.records === null)
      throw new MergeError(`${run.dir}: no requests.jsonl; merging needs the raw records`)
    if (run.result.meta.time_origin_ms === undefined)
      throw new MergeError(
        `${run.dir}: its bench_result.json has no time_origin_ms (written by an older llmbench)`,
      )
    return {
      dir: run.dir,
      index: shard.index,
      count: shard.count,
      meta: run.result.meta,
      records: run.records,
    }
  })
  const first = shards[0] as ShardRun
  const digest = first.meta.shard?.config_digest
  const different = shards.filter((shard) => shard.meta.shard?.config_digest !== digest)
  if (different.length > 0) {
    const list = [first, ...different]
      .map((shard) => `${shard.dir} (${shard.meta.shard?.config_digest})`)
      .join(', ')
    throw new MergeError(
      `merge: these shards come from different runs (config digests differ): ${list}. ` +
        'Shards of one run share target, load, workload and client settings',
    )
  }
  const counts = new Set(shards.map((shard) => shard.count))
  if (counts.size > 1) throw new MergeError(`merge: shards of runs split ${[...counts].join(' and ')} ways`)
  const seen = new Map<number, string>()
  for (const shard of shards) {
    const other = seen.get(shard.index)
    if (other !== undefined)
      throw new MergeError(`merge: shard ${shard.index} given twice: ${other} and ${shard.dir}`)
    seen.set(shard.index, shard.dir)
  }
  const missing = Array.from({ length: first.count }, (_, i) => i).filter((i) => !seen.has(i))
  if (missing.length > 0)
    throw new MergeError(
      `merge: shard(s) ${missing.join(', ')} of ${first.count} missing: the merged run would not be the load that was planned`,
    )
  return shards.sort((a, b) => a.index - b.index)
}

const TIME_FIELDS = ['scheduled_at', 'sent_at', 'end_at'] as const

function shiftRecord(record: RequestRecord, shift: number): RequestRecord {
  if (shift === 0) return record
  for (const field of TIME_FIELDS) record[field] += shift
  if (record.headers_at !== null) record.headers_at += shift
  if (record.first_token_at !== null) record.first_token_at += shift
  record.token_times = record.token_times.map((time) => time + shift)
  return record
}

/**
 * The first shard's meta with what the shards add up to: workers, levels (in the order run, each
 * with every shard's client figures side by side), totals, estimates, and partial if any was.
 */
function mergedMeta(shards: readonly ShardRun[], incomplete: ReadonlySet<number>): RunMeta {
  const first = shards[0] as ShardRun
  const levels = new Map<number, { workers: number; client: LevelClientStats; interrupted?: true }>()
  for (const shard of shards) {
    for (const level of shard.meta.levels_run) {
      const merged = levels.get(level.value) ?? { workers: 0, client: { cpu_percent: 0, loops: [] } }
      merged.workers += level.workers
      // Cut on any shard, or marked incomplete by the coordinator: shown, never judged as whole.
      if (level.interrupted === true || incomplete.has(level.value)) merged.interrupted = true
      const client = merged.client
      // Shards run on their own machines: the busiest one is the figure that matters.
      client.cpu_percent = Math.max(client.cpu_percent, level.client.cpu_percent)
      client.rss_mib = Math.max(client.rss_mib ?? 0, level.client.rss_mib ?? 0)
      client.loops.push(
        ...level.client.loops.map((loop) => ({ ...loop, thread: `shard-${shard.index}/${loop.thread}` })),
      )
      if (level.client.arrivals !== undefined) {
        const sum = client.arrivals ?? { planned: 0, sent: 0, dropped: 0 }
        sum.planned += level.client.arrivals.planned
        sum.sent += level.client.arrivals.sent
        sum.dropped += level.client.arrivals.dropped
        client.arrivals = sum
        client.max_in_flight = (client.max_in_flight ?? 0) + (level.client.max_in_flight ?? 0)
      }
      levels.set(level.value, merged)
    }
  }
  const order = first.meta.load.levels
  const levelsRun = [...levels.entries()]
    .sort(([a], [b]) => {
      const ia = order.indexOf(a)
      const ib = order.indexOf(b)
      return (ia < 0 ? Number.POSITIVE_INFINITY : ia) - (ib < 0 ? Number.POSITIVE_INFINITY : ib) || a - b
    })
    .map(([value, level]) => ({ value, ...level }))
  const sum = (pick: (meta: RunMeta) => number | null | undefined): number =>
    shards.reduce((total, shard) => total + (pick(shard.meta) ?? 0), 0)
  const { shard: _shard, ...rest } = first.meta
  const estimate = first.meta.estimate
  return {
    ...rest,
    started_at: shards.map((shard) => shard.meta.started_at).sort()[0] as string,
    finished_at: shards.some((shard) => shard.meta.finished_at === null)
      ? null
      : (shards
          .map((shard) => shard.meta.finished_at as string)
          .sort()
          .at(-1) as string),
    partial: shards.some((shard) => shard.meta.partial),
    client: {
      ...first.meta.client,
      workers: sum((meta) => meta.client.workers),
      architecture: `${shards.length} shards (${[...new Set(shards.map((shard) => shard.meta.client.host))].join(', ')}), each: ${first.meta.client.architecture}`,
      host: [...new Set(shards.map((shard) => shard.meta.client.host))].join(', '),
    },
    estimate:
      estimate == null
        ? null
        : {
            ...estimate,
            requests: sum((meta) => meta.estimate?.requests),
            input_tokens: sum((meta) => meta.estimate?.input_tokens),
            output_tokens: sum((meta) => meta.estimate?.output_tokens),
            cost: estimate.cost === null ? null : sum((meta) => meta.estimate?.cost),
          },
    levels_run: levelsRun,
  }
}

function levelOverlaps(records: readonly RequestRecord[], levels: readonly number[]): LevelOverlap[] {
  return levels.map((level) => {
    const windows = shardWindows(records.filter((r) => r.phase === 'measure' && r.level === level))
    const list = [...windows.entries()].sort(([a], [b]) => a - b)
    const starts = list.map(([, w]) => w.start)
    const ends = list.map(([, w]) => w.end)
    const span = Math.max(...ends) - Math.min(...starts)
    const common = Math.min(...ends) - Math.max(...starts)
    const ratio = list.length < 2 || span <= 0 ? 1 : Math.round((Math.max(0, common) / span) * 1000) / 1000
    return {
      level,
      ratio,
      windows: list.map(([shard, w]) => ({ shard, start_ms: round1(w.start), end_ms: round1(w.end) })),
      flagged: ratio < MIN_OVERLAP,
    }
  })
}

function round1(value: number): number {
  return Math.round(value * 10) / 10
}
