import { weightedPercentile } from '../analysis/stats.js'
import { CONFIDENCE, studentT } from '../metrics/intervals.js'
import { parseFigureKey } from '../metrics/measures.js'
import type { RequestRecord } from '../records/types.js'
import { type LevelSamples, levelSamples, levelThroughput } from './level-samples.js'

/**
 * The runs of a --repeat result, by their `repeat` stamp: each run's records apart, in run order.
 * Fewer than two (a single run, or records older than --repeat) = no between-run basis.
 */
export function runsOf(records: readonly RequestRecord[]): RequestRecord[][] {
  const byRun = new Map<number, RequestRecord[]>()
  for (const record of records) {
    if (record.repeat === undefined || record.phase !== 'measure') continue
    const run = byRun.get(record.repeat)
    if (run === undefined) byRun.set(record.repeat, [record])
    else run.push(record)
  }
  return [...byRun.entries()].sort(([a], [b]) => a - b).map(([, run]) => run)
}

/** Each run's samples of one level; runs without a request at it are left out. */
export function runSamples(runs: readonly (readonly RequestRecord[])[], value: number): LevelSamples[] {
  return runs.map((run) => levelSamples(run, value)).filter((samples) => samples.ok.length > 0)
}

/** One run's figure of a compared metric (ttft_p95, throughput, success_rate), as the single-run compare computes it. */
export function runFigure(samples: LevelSamples, metric: string): number | null {
  if (metric === 'throughput') return levelThroughput(samples)
  if (metric === 'success_rate') return samples.ok.filter(Boolean).length / samples.ok.length
  if (metric === 'fluidity_p90')
    return weightedPercentile(samples.fluidity, 10)(new Uint32Array(samples.ok.length).fill(1))
  const parsed = parseFigureKey(metric, 'compare')
  const values = parsed === null ? undefined : samples.measures[parsed.measure.key]
  if (parsed === null || values === undefined) return null
  return weightedPercentile(values, parsed.percentile)(new Uint32Array(samples.ok.length).fill(1))
}

/** The change of the mean over the runs, with its Welch t interval; relative to the base mean, or absolute. */
export interface RunsChange {
  base: number
  next: number
  low: number
  high: number
}

/**
 * Welch's t interval of the difference of two means, from each side's per-run figures: the runs are
 * the samples, so the spread between runs (the host's noise from one run to the next, which a
 * bootstrap over one run's requests cannot see) is what a change must stand out of. Degrees of
 * freedom by Welch–Satterthwaite, rounded down (the t table is by whole degrees; down is wider).
 * `relative`: the interval divided by the base mean. Null under two runs a side, or a base mean of 0
 * for a relative change.
 */
export function welchChange(
  base: readonly number[],
  next: readonly number[],
  relative: boolean,
): RunsChange | null {
  if (base.length < 2 || next.length < 2) return null
  const stats = (xs: readonly number[]) => {
    const mean = xs.reduce((sum, x) => sum + x, 0) / xs.length
    const variance = xs.reduce((sum, x) => sum + (x - mean) ** 2, 0) / (xs.length - 1)
    return { mean, share: variance / xs.length, n: xs.length }
  }
  const a = stats(base)
  const b = stats(next)
  if (relative && a.mean === 0) return null
  const se2 = a.share + b.share
  const df = se2 === 0 ? a.n + b.n - 2 : se2 ** 2 / (a.share ** 2 / (a.n - 1) + b.share ** 2 / (b.n - 1))
  const half = studentT(Math.max(1, Math.floor(df)), CONFIDENCE) * Math.sqrt(se2)
  const difference = b.mean - a.mean
  const scale = relative ? a.mean : 1
  return {
    base: a.mean,
    next: b.mean,
    low: (difference - half) / scale,
    high: (difference + half) / scale,
  }
}

/**
 * --paired (run/plan/paired-blocks.ts): the t interval of the mean of per-pair differences, B minus A,
 * each pair two adjacent blocks of one level. A slow minute slows both blocks of its pair, so it
 * cancels in their difference, where two runs made at different times (welchChange) carry it whole
 * (Abedi and Brecht, ICPE 2017). `pairs` holds [A, B] figures of every pair that measured both.
 * `relative`: divided by A's mean. Null under two pairs, or A's mean 0 for a relative change.
 */
export function pairedChange(
  pairs: readonly (readonly [number, number])[],
  relative: boolean,
): RunsChange | null {
  if (pairs.length < 2) return null
  const n = pairs.length
  const base = pairs.reduce((sum, [a]) => sum + a, 0) / n
  const next = pairs.reduce((sum, [, b]) => sum + b, 0) / n
  if (relative && base === 0) return null
  const differences = pairs.map(([a, b]) => b - a)
  const mean = next - base
  const variance = differences.reduce((sum, d) => sum + (d - mean) ** 2, 0) / (n - 1)
  const half = studentT(n - 1, CONFIDENCE) * Math.sqrt(variance / n)
  const scale = relative ? base : 1
  return { base, next, low: (mean - half) / scale, high: (mean + half) / scale }
}

/** --paired: each pair's records of one target, by the pair stamped on them (records without one are left out). */
export function pairsOf(records: readonly RequestRecord[]): Map<number, RequestRecord[]> {
  const byPair = new Map<number, RequestRecord[]>()
  for (const record of records) {
    if (record.pair === undefined || record.phase !== 'measure') continue
    const pair = byPair.get(record.pair)
    if (pair === undefined) byPair.set(record.pair, [record])
    else pair.push(record)
  }
  return byPair
}

/** The pairs of one level where both sides measured something: [A's samples, B's samples], in pair order. */
export function pairedSamples(
  base: ReadonlyMap<number, readonly RequestRecord[]>,
  next: ReadonlyMap<number, readonly RequestRecord[]>,
  value: number,
): [LevelSamples, LevelSamples][] {
  const out: [LevelSamples, LevelSamples][] = []
  for (const pair of [...base.keys()].sort((x, y) => x - y)) {
    const a = levelSamples(base.get(pair) ?? [], value)
    const b = levelSamples(next.get(pair) ?? [], value)
    if (a.ok.length > 0 && b.ok.length > 0) out.push([a, b])
  }
  return out
}
