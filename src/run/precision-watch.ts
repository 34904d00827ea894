import type { RunConfig } from '../config/types.js'
import {
  describePrecision,
  type FigurePrecision,
  type LevelPrecision,
  PrecisionTracker,
} from '../metrics/precision.js'

import type { RequestRecord } from '../records/types.js'

/** Without max_requests_per_level, a level that runs until precise sends at most this many times its floor. */
export const PRECISION_CEILING_FACTOR = 10

/** The most requests a level sends: its floor with fixed sizes, its ceiling with --precision. */
export function levelRequestBudget(load: RunConfig['load']): number | null {
  if (load.requests_per_level === null || load.precision === null) return load.requests_per_level
  return load.max_requests_per_level ?? PRECISION_CEILING_FACTOR * load.requests_per_level
}

/**
 * --precision for one level: fed its measured records as they are completed, it says `enough` (no
 * new requests; those in flight finish) once the floor is sent and every named figure is precise,
 * or once max_duration has passed. Checked every few records rather than on each: a check sorts the
 * samples, and a level of thousands would spend more time checking than sending.
 */
export class PrecisionWatch {
  private readonly tracker: PrecisionTracker
  private readonly floor: number
  private readonly ceiling: number
  private readonly maxDurationS: number | null
  private readonly checkEvery: number
  private checkedAt = 0
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
  }

  /** The measured round began: the duration ceiling counts from here. */
  start(): void {
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
    if (this.last.every((figure) => figure.met)) this.stop('precise')
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

  private stop(reason: 'precise' | 'max_duration'): void {
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
 * The load of a run whose levels no source sized: by precision where it can work (a whole
 * concurrency gradient: not request-rate mode, a trace, sessions, a shard or --repeat), else as it was.
 */
export function defaultPrecisionLoad(config: RunConfig, sharded: boolean): RunConfig['load'] {
  const { load, workload } = config
  // Repeats are compared run against run: they keep one size.
  if (
    sharded ||
    load.mode !== 'concurrency' ||
    workload.trace !== null ||
    workload.sessions ||
    load.repeat > 1
  )
    return load
  if (load.precision !== null || load.duration_per_level_s !== null) return load
  return { ...load, precision: { ...DEFAULT_PRECISION }, requests_per_level: DEFAULT_PRECISION_FLOOR }
}
