import type { RunConfig } from '../../config/types.js'
import {
  describePrecision,
  type FigurePrecision,
  type LevelPrecision,
  PrecisionTracker,
} from '../../metrics/precision.js'

import type { RequestRecord } from '../../records/types.js'

/** Without max_requests_per_level, a level that runs until precise sends at most this many times its floor. */
export const PRECISION_CEILING_FACTOR = 10

/**
 * The fewest records a level's figures must stay precise over before it stops, whatever its streams:
 * an interval from a dozen requests is itself noisy (their effective size comes from autocorrelations
 * estimated from a dozen values), and a level that stopped on one lucky check could find its figure
 * unbounded once the request in flight landed. Over 3,000 simulated one-stream levels from a floor of
 * 12 (ttft_p50 ±25%, noise correlated request to request), holding 1 record left 6.6% of them not
 * precise at their end, holding 4 left 1.2%.
 */
export const PRECISE_HOLD_MIN = 4

/** Records a level's figures must stay precise over before it stops: its streams (their requests in flight are measured too), at least PRECISE_HOLD_MIN. */
export function preciseHold(concurrency: number): number {
  return Math.max(PRECISE_HOLD_MIN, concurrency)
}

/** The most requests a level sends: its floor with fixed sizes, its ceiling with --precision. */
export function levelRequestBudget(load: RunConfig['load']): number | null {
  if (load.requests_per_level === null || load.precision === null) return load.requests_per_level
  return load.max_requests_per_level ?? PRECISION_CEILING_FACTOR * load.requests_per_level
}

/**
 * --precision for one level: fed its measured records as they are completed, it says `enough` (no
 * new requests; those in flight finish) once the floor is sent and every named figure has been precise
 * over the last `preciseHold(concurrency)` records, or once max_duration has passed. Checked every few records rather than on each: a check sorts the
 * samples, and a level of thousands would spend more time checking than sending.
 */
export class PrecisionWatch {
  private readonly tracker: PrecisionTracker
  private readonly floor: number
  private readonly ceiling: number
  private readonly maxDurationS: number | null
  private readonly checkEvery: number
  /** Records the figures must stay precise over before the level stops: preciseHold. */
  private readonly hold: number
  private readonly stopOutOfReach: boolean
  private startedAt: number | null = null
  private checkedAt = 0
  /** The record count at the first check of the current run of precise checks; null when the last check was not. */
  private preciseSince: number | null = null
  private stoppedBy: LevelPrecision['stopped_by'] | null = null
  private timer: NodeJS.Timeout | null = null
  private last: FigurePrecision[] = []

  constructor(
    load: RunConfig['load'],
    concurrency: number,
    private readonly enough: () => void,
  ) {
    this.tracker = new PrecisionTracker(load.precision ?? {})
    this.floor = load.requests_per_level ?? 1
    this.ceiling = levelRequestBudget(load) ?? this.floor
    this.maxDurationS = load.max_duration_per_level_s
    this.checkEvery = Math.max(1, Math.ceil(concurrency / 2))
    this.hold = preciseHold(concurrency)
    this.stopOutOfReach = load.stop_out_of_reach === true
  }

  /** The measured round began: the duration ceiling counts from here. */
  start(): void {
    this.startedAt = performance.now()
    if (this.maxDurationS === null) return
    this.timer = setTimeout(() => this.stop('max_duration'), this.maxDurationS * 1000)
    this.timer.unref()
  }

  add(record: RequestRecord): void {
    this.tracker.add(record)
    const { requests } = this.tracker
    if (this.stoppedBy !== null || requests < this.floor) return
    // Every few records, and more seldom as the level grows (5%): the check's cost stays a fraction.
    if (requests - this.checkedAt < Math.max(this.checkEvery, Math.ceil(requests * 0.05))) return
    this.checkedAt = requests
    this.last = this.tracker.assess()
    if (this.last.every((figure) => figure.met)) {
      // The requests in flight when the level stops are measured too: a figure must have stayed
      // precise over as many records as that, and a few at least, before the level trusts it. A small
      // sample's interval can open again with one slow value (a CI run at load: precise at 12
      // requests, unbounded at 13; a later CI run failed the same test with one record held).
      this.preciseSince ??= requests
      if (requests - this.preciseSince >= this.hold) this.stop('precise')
      return
    }
    this.preciseSince = null
    if (this.stopOutOfReach && this.outOfReach(requests)) this.stop('out_of_reach')
  }

  /**
   * Whether a figure cannot reach its target within the ceilings: a half-width shrinks as one over
   * the square root of the requests, so ±h% at n requests needs about n·(h/target)² for ±target.
   * Judged from twice the floor on (a half-width from fewer swings too much to give up on), and only
   * on figures that can be bounded at all.
   */
  private outOfReach(requests: number): boolean {
    if (requests < 2 * this.floor) return false
    const elapsedS = this.startedAt === null ? null : (performance.now() - this.startedAt) / 1000
    return this.last.some((figure) => {
      if (figure.met || figure.reached_pct === null) return false
      const factor = (figure.reached_pct / figure.target_pct) ** 2
      if (requests * factor > this.ceiling) return true
      return this.maxDurationS !== null && elapsedS !== null && elapsedS * factor > this.maxDurationS
    })
  }

  /** The precision reached so far, for the live line: "ttft_p95 ±6.2% (target 5%)". */
  progress(): string | null {
    if (this.last.length === 0) return null
    return this.last.map(describePrecision).join(', ')
  }

  /** The level's account once it has ended (every record added). */
  finish(interrupted: boolean): LevelPrecision {
    if (this.timer !== null) clearTimeout(this.timer)
    const figures = this.tracker.assess()
    const met = figures.every((figure) => figure.met)
    const stoppedBy = interrupted ? 'interrupted' : (this.stoppedBy ?? (met ? 'precise' : 'max_requests'))
    return {
      floor: this.floor,
      max_requests: this.ceiling,
      max_duration_s: this.maxDurationS,
      figures,
      met,
      stopped_by: stoppedBy,
      requests: this.tracker.requests,
    }
  }

  private stop(reason: 'precise' | 'max_duration' | 'out_of_reach'): void {
    if (this.stoppedBy !== null) return
    this.stoppedBy = reason
    this.enough()
  }
}

/**
 * What a run sizes its levels by when no source said: precise enough for the knee's own figures
 * (throughput and the TTFT median) rather than a fixed 40 requests that a steady server answers
 * long before and a queueing one leaves a coin toss. Tails are not asked for: p95 alone needs 72
 * requests before its interval has an upper end.
 */
export const DEFAULT_PRECISION: Readonly<Record<string, number>> = { tput: 5, ttft_p50: 10 }
/** ... from this floor (requests per level) ... */
export const DEFAULT_PRECISION_FLOOR = 20

/**
 * What the default sizing spends on measured load, seconds, shared by the levels (each between
 * DEFAULT_LEVEL_SECONDS' ends): a newcomer's ladder of six levels got a 33-minute plan on a busy
 * host chasing ±5% it could not reach (issue 36); a couple of minutes is what they expect.
 */
export const DEFAULT_MEASURE_BUDGET_S = 120
export const DEFAULT_LEVEL_SECONDS = { min: 10, max: 60 } as const

/** The time cap of each default-sized level of a gradient of `levels` levels. */
export function defaultLevelSeconds(levels: number): number {
  const share = Math.round(DEFAULT_MEASURE_BUDGET_S / Math.max(1, levels))
  return Math.min(DEFAULT_LEVEL_SECONDS.max, Math.max(DEFAULT_LEVEL_SECONDS.min, share))
}

/**
 * The load of a run whose levels no source sized: by precision where it can work (a whole
 * concurrency gradient: not request-rate mode, a trace, sessions, a shard, --repeat or --paired, whose
 * blocks are paired by size), else as it was.
 */
export function defaultPrecisionLoad(config: RunConfig, sharded: boolean): RunConfig['load'] {
  const { load, workload } = config
  // Repeats are compared run against run: they keep one size.
  if (
    sharded ||
    load.mode !== 'concurrency' ||
    workload.trace !== null ||
    workload.sessions ||
    workload.jobs ||
    load.repeat > 1 ||
    config.run.paired
  )
    return load
  if (load.precision !== null || load.duration_per_level_s !== null) return load
  return {
    ...load,
    precision: { ...DEFAULT_PRECISION },
    requests_per_level: DEFAULT_PRECISION_FLOOR,
    max_duration_per_level_s: defaultLevelSeconds(load.levels.length),
    stop_out_of_reach: true,
  }
}

/** What the default sizing will spend, said before the run with how to change it; null when it did not apply. */
export function describeDefaultSizing(load: RunConfig['load']): string | null {
  if (load.stop_out_of_reach !== true || load.precision === null) return null
  const targets = Object.entries(load.precision)
    .map(([key, pct]) => `${key} ±${pct}%`)
    .join(', ')
  return (
    `sizing: no --requests, --duration or --precision given: each level runs until ${targets}, ` +
    `${load.requests_per_level}–${levelRequestBudget(load)} requests and at most ${load.max_duration_per_level_s} s ` +
    '(sooner when its spread puts the target out of reach); --requests N gives fixed levels, --max-duration S another cap'
  )
}
