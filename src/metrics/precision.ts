import type { RequestRecord } from '../records/types.js'
import { Samples } from './accumulator.js'
import { e2eMs, isOk } from './derive.js'
import { percentileOfSorted } from './distribution.js'
import { throughputInterval } from './intervals.js'
import { seriesIntervals } from './level-intervals.js'
import { type Measure, measureOf } from './measures.js'
import { type PrecisionFigure, parsePrecisionKey } from './precision-key.js'
import { TokenTimeline } from './token-timeline.js'

/**
 * How precise a level's named figures are so far, as --precision asks: each figure's 95% interval
 * half-width relative to the figure. Percentiles use the order-statistic interval widened by the
 * series' effective sample size (requests under load are not independent), as the level's summary
 * does; throughput uses the t interval over time slices, on the part of the window no request still
 * in flight can add tokens to.
 */
export interface FigurePrecision {
  /** The key as the user wrote it: ttft_p95, tput. */
  key: string
  target_pct: number
  /** The figure so far (ms, or tokens/s for tput); null before any request gave one. */
  value: number | null
  /** Half-width of its 95% interval, percent of the figure; null while the samples cannot bound it. */
  reached_pct: number | null
  met: boolean
}

/** A level run with --precision: what it was asked, what it reached and what ended it. */
export interface LevelPrecision {
  /** requests_per_level: no stop before this many measured requests. */
  floor: number
  /** The ceilings: the most requests, and the longest the level may send (null = none). */
  max_requests: number
  max_duration_s: number | null
  figures: FigurePrecision[]
  /** Every named figure reached its target. */
  met: boolean
  /**
   * precise: stopped once met; max_requests/max_duration: a ceiling came first; out_of_reach: the
   * spread so far said no ceiling would be enough (default sizing only); interrupted: Ctrl-C.
   */
  stopped_by: 'precise' | 'max_requests' | 'max_duration' | 'out_of_reach' | 'interrupted'
  /** Measured requests the level sent. */
  requests: number
}

export class PrecisionTracker {
  private readonly targets: { key: string; figure: PrecisionFigure; target: number }[]
  /**
   * Each named measure's values and their requests' send times (autocorrelation reads them in send
   * order); a request with several values (ITL's gaps) stamps each with its send time.
   */
  private readonly series = new Map<string, { measure: Measure; values: Samples; sent: Samples }>()
  private readonly timeline = new TokenTimeline()
  private first = Number.POSITIVE_INFINITY
  private lastEnd = Number.NEGATIVE_INFINITY
  private longest = 0
  /** Measured records, failed ones included: the floor counts requests, not successes. */
  requests = 0

  constructor(targets: Readonly<Record<string, number>>) {
    this.targets = Object.entries(targets).map(([key, target]) => {
      const figure = parsePrecisionKey(key)
      if (typeof figure === 'string') throw new Error(figure)
      if (figure.kind === 'percentile' && !this.series.has(figure.metric))
        this.series.set(figure.metric, {
          measure: measureOf(figure.metric) as Measure,
          values: new Samples(),
          sent: new Samples(),
        })
      return { key, figure, target }
    })
  }

  add(record: RequestRecord): void {
    this.requests++
    if (!isOk(record)) return
    this.timeline.add(record)
    const e2e = e2eMs(record)
    this.first = Math.min(this.first, record.sent_at)
    this.lastEnd = Math.max(this.lastEnd, record.end_at)
    this.longest = Math.max(this.longest, e2e)
    for (const { measure, values, sent } of this.series.values())
      measure.read(
        record,
        {
          push(value) {
            values.push(value)
            sent.push(record.sent_at)
          },
        },
        null,
      )
  }

  /** Every named figure's precision now. */
  assess(): FigurePrecision[] {
    return this.targets.map(({ key, figure, target }) => {
      const { value, half } =
        figure.kind === 'throughput' ? this.throughput() : this.percentile(figure.metric, figure.percentile)
      const reached = value === null || half === null || !(value > 0) ? null : (100 * half) / value
      return {
        key,
        target_pct: target,
        value,
        reached_pct: reached === null ? null : Math.round(reached * 100) / 100,
        met: reached !== null && reached <= target,
      }
    })
  }

  private percentile(metric: string, percentile: number): { value: number | null; half: number | null } {
    const series = this.series.get(metric)
    if (series === undefined || series.values.length === 0) return { value: null, half: null }
    const { values, sent } = series
    // The same interval as the level's summary: in send order, widened by the effective sample size.
    const times = sent.copy()
    const all = values.copy()
    const order = Array.from(all.keys()).sort((a, b) => (times[a] as number) - (times[b] as number))
    const inOrder = Float64Array.from(order, (i) => all[i] as number)
    const sorted = all.sort()
    const interval = seriesIntervals(inOrder, [percentile], sorted).intervals[`p${percentile}`]
    const value = percentileOfSorted(sorted, percentile)
    if (interval === undefined || interval.low === null || interval.high === null)
      return { value, half: null }
    return { value, half: (interval.high - interval.low) / 2 }
  }

  /**
   * Tokens/s up to the last end less the longest request seen: a request still in flight started
   * after that (in a closed loop, when the stream's previous request ended), so every token before it
   * has been counted; later slices would read low only because their tokens are still arriving.
   */
  private throughput(): { value: number | null; half: number | null } {
    const end = this.lastEnd - this.longest
    const interval = this.requests === 0 ? null : throughputInterval(this.timeline, this.first, end)
    if (interval === null || interval.low === null || interval.high === null)
      return { value: null, half: null }
    return { value: (interval.low + interval.high) / 2, half: (interval.high - interval.low) / 2 }
  }
}

/** "ttft_p95 4.1% (target 5%)", for the live line and the level's notes; "?" while unbounded. */
export function describePrecision(figure: FigurePrecision): string {
  const reached = figure.reached_pct === null ? '?' : `±${figure.reached_pct.toFixed(1)}%`
  return `${figure.key} ${reached} (target ${figure.target_pct}%)`
}

/** The level's line: why it stopped where it did, and what was not precise enough by how much. */
export function precisionLine(levelName: string, precision: LevelPrecision): string {
  const figures = precision.figures.map(describePrecision).join(', ')
  switch (precision.stopped_by) {
    case 'precise':
      // The check said precise; the requests then in flight can move a figure back past its target.
      // Said as what happened, so the note ("not precise: ...") does not read "not precise: precise".
      if (!precision.met) {
        const past = precision.figures.filter((figure) => !figure.met).map((figure) => figure.key)
        return (
          `${levelName}: stopped as its figures reached their targets, but with the requests then in flight ` +
          `(${precision.requests} in all) ${past.join(' and ')} ended past ${past.length > 1 ? 'their targets' : 'its target'}: ${figures}`
        )
      }
      // Never at the floor itself: a level stops once precise over a round of its streams past it, 4 records at least.
      return `${levelName}: ran ${precision.requests} requests until precise: ${figures}`
    case 'interrupted':
      return `${levelName}: interrupted after ${precision.requests} requests: ${figures}`
    case 'out_of_reach': {
      const short = precision.figures
        .filter((figure) => !figure.met)
        .map(
          (figure) =>
            `${figure.key} ${figure.reached_pct === null ? '?' : `±${figure.reached_pct.toFixed(1)}%`} (target ±${figure.target_pct}%)`,
        )
      return (
        `${levelName}: stopped at ${precision.requests} requests, precision out of reach: ${short.join(' and ')} ` +
        'would not reach the target within the level’s ceilings at this spread (a noisy environment): moved on'
      )
    }
    default: {
      const ceiling =
        precision.stopped_by === 'max_duration'
          ? `the ceiling of ${precision.max_duration_s} s`
          : `the ceiling of ${precision.max_requests} requests`
      const short = precision.figures.filter((figure) => !figure.met)
      return `${levelName}: reached ${ceiling} (${precision.requests} requests) before ${short.map(describeShortfall).join(' and ')}`
    }
  }
}

function describeShortfall(figure: FigurePrecision): string {
  if (figure.reached_pct === null)
    return `${figure.key} could be bounded (its 95% interval is still open at the top; target ±${figure.target_pct}%)`
  return `${figure.key} was within ±${figure.target_pct}% (it is ±${figure.reached_pct.toFixed(1)}%, ${(figure.reached_pct / figure.target_pct).toFixed(1)}× the target)`
}
