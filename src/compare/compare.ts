import { clientJitterMs, inconclusiveReason, pairedInconclusiveReason } from '../analysis/client-trust.js'
import type { Saturation } from '../analysis/saturation.js'
import {
  absoluteChange,
  type BlockSample,
  blockBootstrapChange,
  type ChangeInterval,
  relativeChange,
  weightedPercentile,
} from '../analysis/stats.js'
import { throughputStatistic } from '../analysis/throughput-change.js'
import type { ClientHealth } from '../metrics/client-health.js'
import { round } from '../metrics/distribution.js'
import { figureKey, measureOf, measuresFor } from '../metrics/measures.js'
import type { LoadMode } from '../metrics/summarize.js'
import type { RequestRecord } from '../records/types.js'
import type { RunMeta } from '../result/run-meta.js'
import {
  pairedChange,
  pairedSamples,
  pairsOf,
  runFigure,
  runSamples,
  runsOf,
  welchChange,
} from './between-runs.js'
import { compareKnees, type KneeComparison, kneePlace } from './knee-gate.js'
import { type LevelSamples, levelSamples, levelThroughput } from './level-samples.js'
import { type Resolution, resolutionOf } from './resolution.js'
import { judgeTailShares, TAIL_FIGURES, type TailShare, tailShare } from './tail-share.js'

/** A compared figure: latency percentiles (ttft_p95 ...), throughput or success_rate. */
export interface MetricComparison {
  metric: string
  base: number | null
  new: number | null
  /** (new - base) / base, or the difference in points for success_rate. */
  change: number | null
  /** new - base in the figure's own unit (ms, tok/s; a share for success_rate). */
  absolute_change: number | null
  /** 95% block-bootstrap interval of `change` (gated metrics only). */
  interval: { low: number; high: number } | null
  threshold: number | null
  /** The absolute change a regression must exceed (ms, tok/s); null when none applies. */
  floor: number | null
  /** The change itself is worse than the threshold. */
  beyond_threshold: boolean
  /** The whole interval is worse than the threshold: the evidence says the change exceeds it. */
  interval_beyond_threshold: boolean
  /** The absolute change exceeds the floor (true when there is none). */
  beyond_floor: boolean
  /**
   * Why a gated metric cannot gate here, or null: a tail percentile with fewer than MIN_TAIL_VALUES
   * values beyond it in either run (p99 of 30 requests is the slowest one, and a bootstrap cannot draw
   * past a sample's maximum, so its interval is too narrow on the worse side).
   */
  not_gated: string | null
  /** interval_beyond_threshold and beyond_floor, where it can gate, beyond the runs' remeasurement noise. */
  regressed: boolean
  /**
   * The worst change the interval leaves possible, as a worsening (its high end for a latency, minus
   * its low end for a figure where lower is worse); null without an interval. A pass covers changes
   * up to here only (./resolution.ts).
   */
  worst_case?: number | null
  /** Worse beyond the threshold, but not by more than the runs' own remeasurement moved (drift_size). */
  within_noise?: boolean
  /** --paired: each pair's [A, B] figure in time order, the very figures the interval was judged on. */
  pairs?: [number, number][]
}

export interface LevelComparison {
  /** The level value, as Comparison.mode says. */
  value: number
  /** Consecutive requests resampled together in each run (see blockLengthFor). */
  block_length: { base: number; new: number }
  metrics: MetricComparison[]
  /**
   * Per request figure (TTFT, TPOT, E2E) whose gated tail percentiles had too few values to gate
   * here: the share of the new requests beyond the base's p90, judged by an exact test (tail-share.ts).
   * Absent in comparisons of older versions; [] when every tail could gate or `tail` is not gated.
   */
  tails: TailShare[]
  /** Why the level's changes may be the client's (either run's), or null: it then gates only with strictClient. */
  inconclusive: string | null
}

/** What the comparison concludes; the exit code follows it (0, 1, 5). */
export type CompareOutcome = 'pass' | 'regression' | 'inconclusive'

/**
 * What a change's interval is judged on. `within-run`: a block bootstrap over each run's requests (one
 * run a side). `between-run`: both runs repeated each level (--repeat, at least two runs a side), so
 * the interval is Welch's t interval of the change in the mean over the runs, and base and new are
 * those means: the host's noise from one run to the next is then part of the evidence.
 */
export type CompareBasis =
  | { kind: 'within-run' }
  | { kind: 'between-run'; runs: { base: number; new: number } }
  /**
   * --paired: one run's two targets in blocks stamped with their pair, alternating or (mode
   * 'together', --paired-mode together) loaded at once; the interval a paired t interval over the pairs.
   */
  | { kind: 'paired'; pairs: number; mode?: 'together' }

export interface Comparison {
  /** What differs between the runs' set-ups; compared only when allowed. */
  mismatches: string[]
  /** What the intervals were judged on (absent in comparisons of older versions: within-run). */
  basis: CompareBasis
  /** What the level values are: streams, or requests per second. */
  mode: LoadMode
  outcome: CompareOutcome
  /** The runs whose environment drifted, in words; [] when none. */
  drift: string[]
  /**
   * How far either run's own remeasurement (its control level) moved, the larger of the two
   * (driftSize); a change must clear its threshold by more than this to gate. 0 without controls.
   */
  drift_size: number
  /** The knee of each run with its bracket, a gate item when `threshold` is set; null when a run does not say (records only). */
  knee: KneeComparison | null
  /** --repeat on either side: where each of its runs placed the knee (null: that side ran once); shown, not gated. */
  knee_runs?: { base: string | null; new: string | null }
  levels: LevelComparison[]
  regressions: { value: number; metric: string; change: number }[]
  /** Regressions not gated: at levels where a client was not trustworthy, or in runs that drifted. */
  inconclusive: { value: number; metric: string; change: number; reason: string }[]
  /** The gated figure whose interval leaves the largest worsening possible against its threshold (./resolution.ts). */
  resolution?: Resolution | null
}

/** A run's own verdict on its environment (a control level measured again): moved = it drifted. */
export interface RunDrift {
  moved: boolean
  reason: string
  /** The control's figures and the first level's (medians), when the result carries them. */
  first?: Record<string, { p50: number } | null | number>
  control?: Record<string, { p50: number } | null | number>
}

/**
 * How far a run's own remeasurement moved: the largest relative change of a median between its
 * first level and the control, whether or not beyond their intervals. The same level measured twice
 * in one run differed by that much, so a change between two runs smaller than that may be the host,
 * not the server. 0 without a control; unbounded for a drifted run that does not size its drift.
 */
export function driftSize(drift: RunDrift | null | undefined, keys?: readonly string[]): number {
  if (drift == null) return 0
  let size = 0
  for (const [key, first] of Object.entries(drift.first ?? {})) {
    if (keys !== undefined && !keys.includes(key)) continue
    const control = drift.control?.[key]
    if (typeof first !== 'object' || first === null || typeof control !== 'object' || control === null)
      continue
    if (first.p50 > 0) size = Math.max(size, Math.abs(control.p50 / first.p50 - 1))
  }
  // A drift the result does not size is taken as large: it vouches for nothing.
  const sized = Object.keys(drift.first ?? {}).length > 0 && drift.control !== undefined
  return sized || size > 0 || drift.moved !== true ? size : Number.POSITIVE_INFINITY
}

/**
 * The control's figures that speak for a compared metric's noise: a TTFT of 30 ms that moved 7 ms
 * on a busy host says nothing of TPOT, and a 23% band from it had hidden a 29% TPOT regression.
 * E2E and throughput hold both parts of a request (a stream's tokens over its whole time: on the
 * simulator an A/A pair whose c=4 streams shared prefills in one run and not the other moved TTFT
 * and throughput together), so all of them; success rate is not a speed.
 */
function driftKeysOf(metric: string): readonly string[] {
  if (metric.startsWith('ttft_')) return ['ttft_ms', 'server_prefill_ms_per_token']
  if (metric.startsWith('tpot_')) return ['tpot_ms', 'server_decode_ms_per_token']
  if (metric === 'success_rate') return []
  return [
    'ttft_ms',
    'tpot_ms',
    'server_decode_ms_per_token',
    'server_prefill_ms_per_token',
    'request_tokens_per_s',
  ]
}

/** The larger remeasurement move of either run among the figures that speak for `metric`. */
function driftBandOf(
  metric: string,
  base: RunDrift | null | undefined,
  next: RunDrift | null | undefined,
): number {
  const keys = driftKeysOf(metric)
  return Math.max(driftSize(base, keys), driftSize(next, keys))
}

/**
 * Whether a regression stands beyond the drift: the near end of its interval clears the threshold by
 * more than the environment moved. The success rate is not a speed: drift does not move it.
 */
function clearsDrift(metric: MetricComparison, drift: number): boolean {
  if (metric.interval === null || metric.threshold === null) return false
  if (metric.metric === 'success_rate') return true
  // The near end of the interval on the worse side: the high end's negative where lower is worse.
  const worse = worseSign(metric.metric) < 0 ? -metric.interval.high : metric.interval.low
  return worse > metric.threshold + drift
}

/**
 * Whether a latency regression is larger than a noisy client could have made it: the low end of its
 * change, in ms, beyond twice the late timers of both runs. Throughput is not a timestamp's jitter.
 */
function beyondClientJitter(metric: MetricComparison, jitterMs: number): boolean {
  if (metric.metric === 'throughput' || metric.metric === 'success_rate') return false
  if (metric.base === null || metric.interval === null) return false
  return metric.interval.low * metric.base > 2 * jitterMs
}

export interface RunRecords {
  meta: RunMeta
  records: readonly RequestRecord[]
  /** The run's own level summaries, for how its client fared; absent = the client is not judged. */
  levels?: readonly {
    value: number
    client?: Pick<ClientHealth, 'bound' | 'reasons' | 'notes' | 'noisy'> &
      Partial<Pick<ClientHealth, 'event_loop_delay_p99_ms'>>
  }[]
  /** The run's knee (bench_result.json `saturation`); absent = not compared. */
  saturation?: Saturation | null
  /** The run's drift verdict (bench_result.json `drift`); absent or null = not known. */
  drift?: RunDrift | null
  /** --repeat: where each run placed its knee, in words (bench_result.json `repeats.knee_summary`); absent = one run. */
  knees?: string
}

export interface CompareOptions {
  /** Gate on levels where either run's client was not trustworthy too. Default false. */
  strictClient?: boolean
  /** Absolute floors per metric or family (ttft, tpot, itl, e2e in ms; throughput in tok/s). */
  minChange?: Record<string, number>
  /** Bootstrap rounds. Default 1000. */
  rounds?: number
  /**
   * The two sides are a --paired run's two targets, their records stamped with the pair of blocks
   * they ran in: each change is judged on the per-pair differences (between-runs.ts pairedChange).
   */
  paired?: boolean
  /**
   * With paired: how the run loaded its two targets (meta.split.paired_mode; absent = interleave):
   * the basis and a client-bound level's reason say which, since one client drove both.
   */
  pairedMode?: 'interleave' | 'together'
}

/**
 * Default gates: relative worsening allowed per metric; success_rate in points (0.01 = 1 point);
 * tail: how far the share of new requests beyond the base p90 may exceed its expected ~10%, in
 * points, where a tail percentile has too few requests to gate (tail-share.ts); knee: how far below the base bracket the new knee's bracket may lie (0: not at all). The median
 * beside the tails: a slowdown of every request moves p50 first, and with few requests p95 and p99
 * are the slowest one or two.
 */
export const DEFAULT_MAX_REGRESSION: Record<string, number> = {
  ...Object.fromEntries(
    measuresFor('compare').flatMap((measure) =>
      measure.gate === null ? [] : [50, 95, 99].map((p) => [figureKey(measure, p), measure.gate]),
    ),
  ),
  throughput: 0.05,
  success_rate: 0.01,
  fluidity_p90: 0.05,
  tail: 0.05,
  knee: 0,
}

/**
 * Default absolute floors: a regression must also be worse by more than this, whatever its share
 * (a +30% TPOT on a 2 ms figure is 0.6 ms: scheduling noise, not a slower server). A key per
 * measure (ttft, tpot, itl, e2e: ms, each measure's floor in measures.ts) covers every percentile;
 * a key per metric (ttft_p99) overrides it.
 */
export const DEFAULT_MIN_CHANGE: Record<string, number> = {
  ...Object.fromEntries(
    measuresFor('compare').flatMap((measure) =>
      measure.floor === null ? [] : [[measure.key, measure.floor]],
    ),
  ),
  throughput: 3,
}

/** The measures compared at each percentile (measures.ts: ttft, tpot, itl, e2e). */
const LATENCY_METRICS = measuresFor('compare')
const DEFAULT_ROUNDS = 1000
/**
 * --paired: the percentile of TPOT (measures.ts pairedFloor) judged on both sides' pooled blocks
 * rather than pair by pair, its floor. A neighbour on the host slows the requests it overlaps and never speeds one, so
 * the fastest tenth of each side's requests come from the quiet moments, which a balanced block order
 * gives both sides alike; a change of the server's own cost moves them all. In `npm run bench:gate`
 * under a neighbour switching on and off every 8-20 s (80 requests a level and side), the pooled p10
 * of TPOT moved by 1.6% (sd) between identical targets and found a 10% decode slowdown at +9.5 ± 1.6%,
 * where the p50 of the same blocks moved by 19% (pair by pair, four pairs: a t interval of 3 degrees
 * of freedom). The minimum is the classic such estimate of a benchmark's own cost (Chen and Revels,
 * "Robust benchmarking in noisy environments", 2016); the p10 keeps a bootstrap interval.
 */
export const PAIRED_FLOOR_PERCENTILE = 10
/** Values a percentile needs beyond it in each run to gate: below, its bootstrap interval is not to be trusted. */
export const MIN_TAIL_VALUES = 5

/** Differences in set-up that make two runs incomparable, in words; the first thing compare says. */
export function setupMismatches(base: RunMeta, next: RunMeta): string[] {
  const out: string[] = []
  const differ = (what: string, a: unknown, b: unknown): void => {
    if (JSON.stringify(a) !== JSON.stringify(b))
      out.push(`${what}: ${JSON.stringify(a)} vs ${JSON.stringify(b)}`)
  }
  differ('model', base.target.model, next.target.model)
  differ('input tokens', base.workload.input_tokens, next.workload.input_tokens)
  differ('output tokens', base.workload.output_tokens, next.workload.output_tokens)
  differ('levels', base.load.levels, next.load.levels)
  differ('warm-up requests', base.load.warmup_requests, next.load.warmup_requests)
  differ('stream', base.workload.stream, next.workload.stream)
  differ('load mode', base.load.mode ?? 'concurrency', next.load.mode ?? 'concurrency')
  // Keys newer results carry: compared when both runs have them, so a baseline from an older
  // version still compares on what it records.
  const both = <T>(what: string, pick: (meta: RunMeta) => T | undefined): void => {
    const a = pick(base)
    const b = pick(next)
    if (a !== undefined && b !== undefined) differ(what, a, b)
  }
  both('input lengths', (meta) => meta.workload.input)
  both('output lengths', (meta) => meta.workload.output)
  both('prompts', (meta) => (meta.workload.input === undefined ? undefined : meta.workload.dataset))
  both('arrival process', (meta) => meta.load.arrival)
  both('ignore_eos', (meta) => meta.workload.ignore_eos)
  both('stop rule', stopRule)
  both(
    'trace replayed',
    (meta) => meta.trace && { file: meta.trace.file, rows: meta.trace.rows_used, window: meta.trace.window },
  )
  return out
}

/**
 * How each level ended: after a count of requests, or after a duration (with its warm-up and
 * cool-down). 40 requests and 30 s per level measure different windows (ramp-up and drain weigh
 * differently), so they are a set-up difference like the lengths. Undefined in results without it.
 */
function stopRule(meta: RunMeta): string | undefined {
  const { load } = meta
  if (load.duration_per_level !== undefined) {
    const extra =
      (load.warmup_s ?? 0) > 0 || (load.cooldown_s ?? 0) > 0
        ? ` (+${load.warmup_s ?? 0} s warm-up, +${load.cooldown_s ?? 0} s cool-down)`
        : ''
    return `${load.duration_per_level} s per level${extra}`
  }
  if (load.requests_per_level !== undefined) return `${load.requests_per_level} requests per level`
  return undefined
}

/** The floor of a metric: its own key, else its family's (ttft_p99 → ttft); null when none. */
function floorOf(metric: string, floors: Record<string, number>): number | null {
  return floors[metric] ?? floors[metric.replace(/_p[\d.]+$/, '')] ?? null
}

/** The block bootstrap of one figure of the level in both runs. */
function sides(
  a: LevelSamples,
  b: LevelSamples,
  statistic: (samples: LevelSamples) => BlockSample['statistic'],
): [BlockSample, BlockSample] {
  const side = (samples: LevelSamples): BlockSample => ({
    requests: samples.ok.length,
    blockLength: samples.blockLength,
    statistic: statistic(samples),
  })
  return [side(a), side(b)]
}

function latencyComparison(
  metric: string,
  family: string,
  percentile: number,
  a: LevelSamples,
  b: LevelSamples,
  threshold: number | null,
  floor: number | null,
  rounds: number,
): MetricComparison {
  const [base, next] = sides(a, b, (samples) =>
    weightedPercentile(samples.measures[family] ?? [], percentile),
  )
  const everyOnce = (sample: BlockSample): number | null =>
    sample.statistic(new Uint32Array(sample.requests).fill(1))
  const tested = threshold === null ? null : blockBootstrapChange(base, next, relativeChange, rounds)
  const interval = tested === null ? null : { low: tested.low, high: tested.high }
  const compared = comparison(metric, 3, everyOnce(base), everyOnce(next), relativeChange, interval, {
    threshold,
    floor,
    worse: 1,
  })
  const values = Math.min(
    ...[a, b].map((samples) => (samples.measures[family] ?? []).reduce((n, v) => n + v.length, 0)),
  )
  const tail = (values * (100 - percentile)) / 100
  if (threshold === null || tail >= MIN_TAIL_VALUES) return compared
  const needed = Math.ceil((MIN_TAIL_VALUES * 100) / (100 - percentile))
  return {
    ...compared,
    not_gated: `${values} values, p${percentile} needs ${needed} (${MIN_TAIL_VALUES} beyond it)`,
    regressed: false,
  }
}

/**
 * One compared figure, rounded for the report. `worse` is the sign of a worsening (1: higher is
 * worse, latencies; -1: lower is worse). A regression: the whole interval of the change is worse than
 * the threshold, and the absolute change worse than the floor.
 */
function comparison(
  metric: string,
  digits: number,
  b: number | null,
  n: number | null,
  change: (base: number, next: number) => number | null,
  interval: { low: number; high: number } | null,
  gate: { threshold: number | null; floor: number | null; worse: 1 | -1 },
): MetricComparison {
  const { threshold, floor, worse } = gate
  const changed = b === null || n === null ? null : change(b, n)
  const absolute = b === null || n === null ? null : n - b
  const beyond = threshold !== null && changed !== null && worse * changed > threshold
  const intervalBeyond =
    threshold !== null &&
    interval !== null &&
    (worse > 0 ? interval.low > threshold : -interval.high > threshold)
  const beyondFloor = floor === null || (absolute !== null && worse * absolute > floor)
  return {
    metric,
    base: b === null ? null : round(b, digits),
    new: n === null ? null : round(n, digits),
    change: changed === null ? null : round(changed, 4),
    absolute_change: absolute === null ? null : round(absolute, digits),
    interval: interval === null ? null : { low: round(interval.low, 4), high: round(interval.high, 4) },
    threshold,
    floor: threshold === null ? null : floor,
    beyond_threshold: beyond,
    interval_beyond_threshold: intervalBeyond,
    beyond_floor: beyondFloor,
    not_gated: null,
    regressed: intervalBeyond && beyondFloor,
    worst_case: interval === null ? null : round(worse > 0 ? interval.high : -interval.low, 4),
  }
}

/** Throughput: Σ tokens / window per run; its change and interval from one block bootstrap of that figure. */
function throughputComparison(
  a: LevelSamples,
  b: LevelSamples,
  threshold: number | null,
  floor: number | null,
  closedLoop: boolean,
  rounds: number,
): MetricComparison {
  const figureA = levelThroughput(a)
  const figureB = levelThroughput(b)
  let tested: ChangeInterval | null = null
  if (threshold !== null && figureA !== null && figureB !== null) {
    const [base, next] = sides(a, b, (samples) =>
      throughputStatistic(
        { tokens: samples.tokens, seconds: samples.seconds, figure: levelThroughput(samples) ?? 0 },
        closedLoop,
      ),
    )
    tested = blockBootstrapChange(base, next, relativeChange, rounds)
  }
  const interval = tested === null ? null : { low: tested.low, high: tested.high }
  return comparison('throughput', 2, figureA, figureB, relativeChange, interval, {
    threshold,
    floor,
    worse: -1,
  })
}

/** Success rate: the change in points, its interval from the same block bootstrap (failures come in spells). */
function successComparison(
  a: LevelSamples,
  b: LevelSamples,
  threshold: number | null,
  rounds: number,
): MetricComparison {
  const [base, next] = sides(a, b, (samples) => (counts) => {
    let drawn = 0
    let succeeded = 0
    samples.ok.forEach((ok, i) => {
      drawn += counts[i] as number
      if (ok) succeeded += counts[i] as number
    })
    return drawn === 0 ? null : succeeded / drawn
  })
  const rate = (sample: BlockSample): number | null =>
    sample.requests === 0 ? null : sample.statistic(new Uint32Array(sample.requests).fill(1))
  const tested = threshold === null ? null : blockBootstrapChange(base, next, absoluteChange, rounds)
  const interval = tested === null ? null : { low: tested.low, high: tested.high }
  // The threshold is in points already: it is its own floor.
  return comparison('success_rate', 4, rate(base), rate(next), absoluteChange, interval, {
    threshold,
    floor: null,
    worse: -1,
  })
}

/**
 * Fluidity p90 (the index 90% of requests reach): its change in points, lower being worse, its
 * interval from the block bootstrap the latencies use.
 */
function fluidityComparison(
  a: LevelSamples,
  b: LevelSamples,
  threshold: number | null,
  rounds: number,
): MetricComparison {
  const [base, next] = sides(a, b, (samples) => weightedPercentile(samples.fluidity, 10))
  const everyOnce = (sample: BlockSample): number | null =>
    sample.statistic(new Uint32Array(sample.requests).fill(1))
  const tested = threshold === null ? null : blockBootstrapChange(base, next, absoluteChange, rounds)
  const interval = tested === null ? null : { low: tested.low, high: tested.high }
  return comparison('fluidity_p90', 4, everyOnce(base), everyOnce(next), absoluteChange, interval, {
    threshold,
    floor: null,
    worse: -1,
  })
}

/**
 * A metric judged again on the spread between the runs (--repeat on both sides): base and new are
 * the means of the runs' figures, the interval Welch's (between-runs.ts). A tail the pooled requests
 * were too few to gate stays ungated; a level with under two runs a side keeps its bootstrap.
 */
function onRuns(
  metric: MetricComparison,
  a: readonly LevelSamples[],
  b: readonly LevelSamples[],
  /** --paired: a[i] and b[i] are the two blocks of one pair. */
  paired = false,
): MetricComparison {
  const figures = (runs: readonly LevelSamples[]): number[] =>
    runs.map((run) => runFigure(run, metric.metric)).filter((x): x is number => x !== null)
  const share = metric.metric === 'success_rate' || metric.metric === 'fluidity_p90'
  const pairs = paired ? pairedFigures(a, b, metric.metric) : null
  const change = pairs !== null ? pairedChange(pairs, !share) : welchChange(figures(a), figures(b), !share)
  if (change === null) return metric
  const judged = comparison(
    metric.metric,
    share ? 4 : metric.metric === 'throughput' ? 2 : 3,
    change.base,
    change.next,
    share ? absoluteChange : relativeChange,
    metric.threshold === null ? null : { low: change.low, high: change.high },
    { threshold: metric.threshold, floor: metric.floor, worse: worseSign(metric.metric) },
  )
  const withPairs = pairs === null ? judged : { ...judged, pairs }
  return metric.not_gated === null
    ? withPairs
    : { ...withPairs, not_gated: metric.not_gated, regressed: false }
}

/** Each pair's figure on both sides, where both have one. */
function pairedFigures(
  a: readonly LevelSamples[],
  b: readonly LevelSamples[],
  metric: string,
): [number, number][] {
  return a.flatMap((samples, i) => {
    const x = runFigure(samples, metric)
    const y = runFigure(b[i] as LevelSamples, metric)
    return x === null || y === null ? [] : [[x, y] as [number, number]]
  })
}

/**
 * -1 where lower is worse (throughput, success rate, a measure better higher: fluidity_p90), 1
 * where higher is; a measure's direction is its own (measures.ts).
 */
function worseSign(metric: string): 1 | -1 {
  if (metric === 'throughput' || metric === 'success_rate') return -1
  return measureOf(metric.replace(/_p[\d.]+$/, ''))?.better === 'higher' ? -1 : 1
}

/** Percentiles compared per latency metric: the runs' own, and every one a gate names. */
function comparedPercentiles(meta: RunMeta, gates: Record<string, number>): Map<string, number[]> {
  const out = new Map<string, number[]>()
  for (const { key: family } of LATENCY_METRICS) {
    const gated = Object.keys(gates)
      .filter((key) => key.startsWith(`${family}_p`))
      .map((key) => Number(key.slice(family.length + 2)))
    out.set(
      family,
      [...new Set([...meta.percentiles, ...gated])].sort((x, y) => x - y),
    )
  }
  return out
}

type Client = NonNullable<NonNullable<RunRecords['levels']>[number]['client']>

/** Compares two runs level by level, from their raw records (never from averaged summaries). */
export function compareRuns(
  base: RunRecords,
  next: RunRecords,
  maxRegression: Record<string, number>,
  options: CompareOptions = {},
): Comparison {
  const floors = { ...DEFAULT_MIN_CHANGE, ...options.minChange }
  const rounds = options.rounds ?? DEFAULT_ROUNDS
  const levels = base.meta.levels_run
    .map((level) => level.value)
    .filter((value) => next.meta.levels_run.some((level) => level.value === value))
  const percentiles = comparedPercentiles(base.meta, maxRegression)
  const top = (run: RunRecords): number => Math.max(...run.meta.levels_run.map((level) => level.value))
  const drift = [
    ...(base.drift?.moved === true ? [`base run drifted: ${base.drift.reason}`] : []),
    ...(next.drift?.moved === true ? [`new run drifted: ${next.drift.reason}`] : []),
  ]
  const movedBy = Math.max(driftSize(base.drift), driftSize(next.drift))
  // The runs whose control moved beyond its intervals: how far, for whether they could hide a change.
  const drifted = Math.max(
    ...[base.drift, next.drift].map((run) => (run?.moved === true ? driftSize(run) : 0)),
  )
  const baseRuns = runsOf(base.records)
  const nextRuns = runsOf(next.records)
  const paired = options.paired === true
  const basePairs = paired ? pairsOf(base.records) : null
  const nextPairs = paired ? pairsOf(next.records) : null
  const betweenRuns = !paired && baseRuns.length >= 2 && nextRuns.length >= 2
  const result: Comparison = {
    mismatches: setupMismatches(base.meta, next.meta),
    basis: paired
      ? {
          kind: 'paired',
          pairs: Math.min(basePairs?.size ?? 0, nextPairs?.size ?? 0),
          ...(options.pairedMode === 'together' ? { mode: 'together' as const } : {}),
        }
      : betweenRuns
        ? { kind: 'between-run', runs: { base: baseRuns.length, new: nextRuns.length } }
        : { kind: 'within-run' },
    mode: base.meta.load.mode ?? 'concurrency',
    outcome: 'pass',
    drift,
    drift_size: movedBy,
    knee:
      base.saturation === undefined || next.saturation === undefined
        ? null
        : compareKnees(
            kneePlace(base.saturation, top(base)),
            kneePlace(next.saturation, top(next)),
            maxRegression.knee ?? null,
          ),
    levels: [],
    regressions: [],
    inconclusive: [],
    ...(base.knees === undefined && next.knees === undefined
      ? {}
      : { knee_runs: { base: base.knees ?? null, new: next.knees ?? null } }),
  }
  const driftReason = drift.join('; ')
  let clientBound = false
  for (const value of levels) {
    // Fluidity under one pace for both runs: the base run's deadlines (each run sets its own from its probes).
    const deadlines = base.meta.fluidity ?? null
    const a = levelSamples(base.records, value, deadlines)
    const b = levelSamples(next.records, value, deadlines)
    const pairs = basePairs !== null && nextPairs !== null ? pairedSamples(basePairs, nextPairs, value) : null
    const metrics = levelMetrics(a, b, deadlines !== null, {
      percentiles,
      maxRegression,
      floors,
      rounds,
      concurrency: result.mode === 'concurrency',
      runs: betweenRuns ? [runSamples(baseRuns, value), runSamples(nextRuns, value)] : null,
      pairs,
    })
    const clientOf = (run: RunRecords): Client | undefined =>
      run.levels?.find((level) => level.value === value)?.client
    // --paired: both sides are one run's, its one client (the sides carry the same levels).
    const inconclusive = paired
      ? pairedInconclusiveReason(clientOf(base), options.pairedMode ?? 'interleave')
      : inconclusiveReason(clientOf(base), clientOf(next))
    const judged = inconclusive === null || options.strictClient === true
    if (!judged && (clientOf(base)?.bound === true || clientOf(next)?.bound === true)) clientBound = true
    const jitter = clientJitterMs(clientOf(base), clientOf(next))
    const bands = (metric: string) => driftBandOf(metric, base.drift, next.drift)
    judgeLevel(result, value, metrics, { judged, jitter, inconclusive, driftReason, bands })
    result.levels.push({
      value,
      block_length: { base: a.blockLength, new: b.blockLength },
      metrics,
      // Not under --paired yet: counted per pair, a neighbour switching on between a pair's two
      // blocks put a whole B block past its A block's p90, and A/A failed 45% of bench:gate trials.
      tails: pairs == null ? ungatedTails(metrics, [[a, b]], maxRegression.tail ?? null) : [],
      inconclusive,
    })
  }
  gateTails(result, options.strictClient === true, driftReason)
  gateKnee(result, driftReason, movedBy)
  result.outcome = outcomeOf(result, clientBound, drifted >= smallestThreshold(maxRegression))
  result.resolution = resolutionOf(result.levels)
  return result
}

/** What a level's figures are compared under: the gates, the floors, and the samples each side is judged on. */
interface LevelMetricsContext {
  percentiles: ReadonlyMap<string, readonly number[]>
  maxRegression: Record<string, number>
  floors: Record<string, number>
  rounds: number
  concurrency: boolean
  /** --repeat on both sides: each side's runs at this level, judged on the spread between runs. */
  runs: [LevelSamples[], LevelSamples[]] | null
  /** --paired: each pair's [A, B] samples at this level, judged pair by pair. */
  pairs: [LevelSamples, LevelSamples][] | null
}

/** Every gated figure of one level, base against new: the latency percentiles, throughput, success, fluidity. */
function levelMetrics(
  a: LevelSamples,
  b: LevelSamples,
  fluidity: boolean,
  context: LevelMetricsContext,
): MetricComparison[] {
  const { percentiles, maxRegression, floors, rounds } = context
  const metrics: MetricComparison[] = []
  for (const measure of LATENCY_METRICS) {
    const family = measure.key
    for (const percentile of percentiles.get(family) ?? []) {
      if (context.pairs !== null && measure.pairedFloor && percentile === PAIRED_FLOOR_PERCENTILE) continue // pooled, below
      const name = figureKey(measure, percentile)
      metrics.push(
        latencyComparison(
          name,
          family,
          percentile,
          a,
          b,
          maxRegression[name] ?? null,
          floorOf(name, floors),
          rounds,
        ),
      )
    }
  }
  metrics.push(
    throughputComparison(
      a,
      b,
      maxRegression.throughput ?? null,
      floorOf('throughput', floors),
      context.concurrency,
      rounds,
    ),
  )
  metrics.push(successComparison(a, b, maxRegression.success_rate ?? null, rounds))
  if (fluidity && a.fluidity.some((values) => values.length > 0))
    metrics.push(fluidityComparison(a, b, maxRegression.fluidity_p90 ?? null, rounds))
  if (context.runs !== null) {
    const [runsA, runsB] = context.runs
    return metrics.map((metric) => onRuns(metric, runsA, runsB))
  }
  if (context.pairs !== null) {
    const sideA = context.pairs.map(([x]) => x)
    const sideB = context.pairs.map(([, y]) => y)
    return [...metrics.map((metric) => onRuns(metric, sideA, sideB, true)), ...pairedFloors(a, b, context)]
  }
  return metrics
}

/**
 * --paired: the floor (PAIRED_FLOOR_PERCENTILE) of each measure whose fastest requests show the server's
 * own cost (measures.ts pairedFloor: TPOT) over both sides' pooled blocks, gated at
 * its own threshold when one is named (`tpot_p10`), else at its p50's: a slower server is slower in
 * its fastest requests too, which a neighbour's on and off phases do not move.
 */
function pairedFloors(a: LevelSamples, b: LevelSamples, context: LevelMetricsContext): MetricComparison[] {
  const { maxRegression, floors, rounds } = context
  return LATENCY_METRICS.filter((measure) => measure.pairedFloor).map((measure) => {
    const name = figureKey(measure, PAIRED_FLOOR_PERCENTILE)
    const threshold = maxRegression[name] ?? maxRegression[figureKey(measure, 50)] ?? null
    return latencyComparison(
      name,
      measure.key,
      PAIRED_FLOOR_PERCENTILE,
      a,
      b,
      threshold,
      floorOf(name, floors),
      rounds,
    )
  })
}

/**
 * A level's regressed figures sorted into the comparison: a regression, inconclusive (an untrusted
 * client, a drifted run), or within the runs' own remeasurement noise (then no regression at all).
 */
function judgeLevel(
  result: Comparison,
  value: number,
  metrics: readonly MetricComparison[],
  level: {
    judged: boolean
    jitter: number | null
    inconclusive: string | null
    driftReason: string
    bands: (metric: string) => ReturnType<typeof driftBandOf>
  },
): void {
  for (const metric of metrics) {
    if (!metric.regressed) continue
    const found = { value, metric: metric.metric, change: metric.change ?? 0 }
    // A noisy machine's late timers (a few ms) cannot make a latency 135 ms worse: a change
    // whose low end is well beyond what they add stands.
    const beyondJitter = level.jitter !== null && beyondClientJitter(metric, level.jitter)
    if (!clearsDrift(metric, level.bands(metric.metric))) {
      // Within what remeasuring one level in one run moved: inconclusive when a run drifted, else
      // the hosts' noise, not a regression.
      if (result.drift.length > 0) result.inconclusive.push({ ...found, reason: level.driftReason })
      else {
        metric.regressed = false
        metric.within_noise = true
      }
    } else if (level.judged || beyondJitter) result.regressions.push(found)
    else result.inconclusive.push({ ...found, reason: level.inconclusive ?? '' })
  }
}

/** The knee, when it regressed: a regression, or inconclusive in a run that drifted by an unknown amount. */
function gateKnee(result: Comparison, driftReason: string, movedBy: number): void {
  if (result.knee?.regressed !== true) return
  const { base: was, new: now } = result.knee
  const from = was.value ?? was.bracket[0]
  const found = { value: from, metric: 'knee', change: round(((now.value ?? from) - from) / from, 4) }
  // The knee is placed on the server's gauges or the curve's shape, not on a speed the drift scales.
  if (result.drift.length > 0 && movedBy === Number.POSITIVE_INFINITY)
    result.inconclusive.push({ ...found, reason: driftReason })
  else result.regressions.push(found)
}

/**
 * The tail-share checks of a level (tail-share.ts), before their alpha: one per figure whose gated
 * tail percentiles could not gate for too few values; none when `tail` is not gated.
 */
function ungatedTails(
  metrics: readonly MetricComparison[],
  groups: readonly (readonly [LevelSamples, LevelSamples])[],
  threshold: number | null,
): TailShare[] {
  if (threshold === null) return []
  return TAIL_FIGURES.flatMap((figure) => {
    const ungated = metrics.filter(
      (metric) => metric.metric.startsWith(`${figure}_p`) && metric.not_gated !== null,
    )
    const standsFor = ungated.map((metric) => metric.metric)
    // Counted beyond the base p90 worsened by what the percentiles it stands for allow (their
    // threshold and floor): beyond the bare p90, a tight distribution shifted 2% by a ramp puts half
    // its requests past it (bench:gate: paired A/A failed 65% of trials under a ramp).
    const allowance = {
      relative: Math.min(...ungated.map((metric) => metric.threshold ?? 0)),
      absolute: Math.min(...ungated.map((metric) => metric.floor ?? 0)),
    }
    const check = standsFor.length === 0 ? null : tailShare(groups, figure, standsFor, threshold, allowance)
    return check === null ? [] : [check]
  })
}

/**
 * Judges every level's tail checks together (their alpha is shared out over all of them), and lists
 * the regressions as the other figures' are: inconclusive in a drifted run, or at a level whose client
 * was not trustworthy unless `strictClient`. No noise band: the control's medians say nothing of a share.
 */
function gateTails(result: Comparison, strictClient: boolean, driftReason: string): void {
  const judged = judgeTailShares(result.levels.flatMap((level) => level.tails))
  for (const level of result.levels) {
    level.tails = judged.splice(0, level.tails.length)
    for (const tail of level.tails) {
      if (!tail.regressed) continue
      const found = {
        value: level.value,
        metric: `${tail.figure}_tail`,
        change: round(tail.share - tail.expected, 4),
      }
      if (result.drift.length > 0) result.inconclusive.push({ ...found, reason: driftReason })
      else if (level.inconclusive === null || strictClient) result.regressions.push(found)
      else result.inconclusive.push({ ...found, reason: level.inconclusive })
    }
  }
}

/**
 * A regression only on evidence that stands. A drifted run vouches only for changes larger than its
 * drift: a slower server may hide a regression as well as fake one, so a change within the drift is
 * inconclusive, and so is a comparison that flagged nothing when the drift was as large as the
 * smallest change gated (it could have hidden one). A client-bound level did not send the load it
 * was asked for, so it makes the comparison inconclusive; a noisy client (timers late) only adds
 * latency, so its level is inconclusive only where it would have flagged something.
 */
function outcomeOf(comparison: Comparison, clientBound: boolean, couldHide: boolean): CompareOutcome {
  if (comparison.regressions.length > 0) return 'regression'
  if (clientBound || comparison.inconclusive.length > 0 || couldHide) return 'inconclusive'
  return 'pass'
}

/** The smallest relative change any gated latency or throughput figure is held to. */
function smallestThreshold(maxRegression: Record<string, number>): number {
  const relative = Object.entries(maxRegression)
    .filter(([key]) => key !== 'knee' && key !== 'success_rate' && key !== 'tail')
    .map(([, value]) => value)
  return relative.length === 0 ? Number.POSITIVE_INFINITY : Math.min(...relative)
}
