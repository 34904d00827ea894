import type { RequestRecord } from '../records/types.js'
import { type Accumulator, accumulate, Samples } from './accumulator.js'
import { isOk } from './derive.js'
import { round } from './distribution.js'

/**
 * Request-rate mode (an open loop): did the server keep up with what was offered? Arrivals come on
 * their schedule whatever the server does, so a server slower than the rate shows in two ways that
 * are the same fact seen twice: it serves fewer requests per second than arrive, and the requests
 * in flight (arrived, not yet answered) pile up over the window. A closed loop cannot show either:
 * it sends only when a request ends.
 *
 * The window runs from the level's first measured completion to its last measured arrival. Before
 * the first completion the level is filling (every request is new), after the last arrival it is
 * draining; inside, a server that keeps up has as many in flight at the end as at the start.
 * Requests are counted from their intended arrival (scheduled_at), so arrivals that waited in the
 * client or for a connection count as in flight: from the arriving user's side, they were.
 */
export interface OpenLoopFigures {
  /** From the first measured completion to the last measured arrival, seconds. */
  window_s: number
  /** Measured arrivals (intended times) inside the window. */
  arrivals: number
  /** Successful completions inside the window. */
  completions: number
  /** arrivals / window_s: the rate offered, as it came. */
  offered_per_s: number
  /** completions / window_s: the rate served. */
  served_per_s: number
  /** 95% interval of the served rate: a Poisson interval on the completions count (see servedInterval). */
  served_per_s_low: number
  served_per_s_high: number
  /** Time-averaged requests in flight over the window's first third, and over its last third. */
  in_flight_first: number
  in_flight_last: number
  /** 95% interval of in_flight_last - in_flight_first (see growthInterval). */
  in_flight_growth_low: number
  in_flight_growth_high: number
  /**
   * Mann-Kendall z of each request's wait (first token, or end, minus its intended arrival) against
   * its arrival order: a queue that keeps up has no trend, one that falls behind makes every arrival
   * wait longer than the one before (z of 3 or more is a trend beyond noise). Absent in older results.
   */
  wait_trend_z?: number
}

/** A wait trend with z at least this (one-sided p about 0.001) rises beyond noise. */
export const WAIT_TREND_Z = 3
/** Waits beyond this many are thinned evenly for the trend test (it compares every pair). */
const MAX_TREND_POINTS = 2000

/** Fewer arrivals than this inside the window give no figures: a rate or a trend of a handful is noise. */
export const MIN_WINDOW_ARRIVALS = 8

/** The normal quantile of a two-sided 95% interval. */
const Z95 = 1.96

export function openLoopFigures(records: readonly RequestRecord[]): OpenLoopFigures | null {
  return accumulate(records, openLoopAccumulator())
}

/** The same, fed record by record: it keeps each request's intended arrival and end, and whether it succeeded. */
export function openLoopAccumulator(): Accumulator<OpenLoopFigures | null> {
  const arrivals = new Samples()
  const ends = new Samples()
  const okEnds = new Samples()
  const waits: [number, number][] = []
  return {
    add(r) {
      // A retry is the same arrival asked again: the first attempt stands for it.
      if (r.attempt !== 1) return
      arrivals.push(r.scheduled_at)
      ends.push(Math.max(r.end_at, r.scheduled_at))
      if (isOk(r)) okEnds.push(r.end_at)
      waits.push([r.scheduled_at, (r.first_token_at ?? r.end_at) - r.scheduled_at])
    },
    result: () => {
      const figures = figuresOf(arrivals, ends, okEnds.sorted())
      if (figures === null) return null
      waits.sort((x, y) => x[0] - y[0])
      return { ...figures, wait_trend_z: round(mannKendallZ(waits.map(([, wait]) => wait)), 2) }
    },
  }
}

/**
 * Mann-Kendall trend statistic of a series, as a z score (normal approximation, no tie correction:
 * waits are measured to the microsecond). Positive: later values tend to be larger.
 */
export function mannKendallZ(series: readonly number[]): number {
  const step = Math.max(1, series.length / MAX_TREND_POINTS)
  const values: number[] = []
  for (let i = 0; i < series.length; i += step) values.push(series[Math.floor(i)] as number)
  const n = values.length
  if (n < 3) return 0
  let s = 0
  for (let i = 0; i < n - 1; i++)
    for (let j = i + 1; j < n; j++) s += Math.sign((values[j] as number) - (values[i] as number))
  const variance = (n * (n - 1) * (2 * n + 5)) / 18
  return s === 0 ? 0 : (s - Math.sign(s)) / Math.sqrt(variance)
}

function figuresOf(arrivals: Samples, ends: Samples, okEnds: Float64Array): OpenLoopFigures | null {
  if (arrivals.length === 0) return null
  const sortedArrivals = arrivals.sorted()
  const sortedEnds = ends.sorted()
  const start = okEnds.length > 0 ? (okEnds[0] as number) : (sortedEnds[0] as number)
  const end = sortedArrivals[sortedArrivals.length - 1] as number
  const inWindow = countIn(sortedArrivals, start, end)
  if (end <= start || inWindow < MIN_WINDOW_ARRIVALS) return null
  const seconds = (end - start) / 1000
  const completions = countIn(okEnds, start, end)
  const served = servedInterval(completions)
  const third = (end - start) / 3
  const first = meanInFlight(arrivals, ends, start, start + third)
  const last = meanInFlight(arrivals, ends, end - third, end)
  const growth = growthInterval(first, last)
  return {
    window_s: round(seconds, 3),
    arrivals: inWindow,
    completions,
    offered_per_s: round(inWindow / seconds, 3),
    served_per_s: round(completions / seconds, 3),
    served_per_s_low: round(served.low / seconds, 3),
    served_per_s_high: round(served.high / seconds, 3),
    in_flight_first: round(first, 2),
    in_flight_last: round(last, 2),
    in_flight_growth_low: round(growth.low, 2),
    in_flight_growth_high: round(growth.high, 2),
  }
}

/** Values of a sorted array in (from, to]: the window is half-open so its first completion is not served within it. */
function countIn(sorted: Float64Array, from: number, to: number): number {
  let count = 0
  for (const value of sorted) if (value > from && value <= to) count++
  return count
}

/** Time-averaged requests in flight over [from, to]: each request's overlap with it, summed, over its length. */
function meanInFlight(arrivals: Samples, ends: Samples, from: number, to: number): number {
  let area = 0
  for (let i = 0; i < arrivals.length; i++) {
    const overlap = Math.min(ends.at(i), to) - Math.max(arrivals.at(i), from)
    if (overlap > 0) area += overlap
  }
  return to > from ? area / (to - from) : 0
}

/**
 * 95% Poisson interval on a count (Byar's approximation, within 0.03 of the exact Garwood bounds).
 * Why Poisson: with Poisson arrivals, a queue that keeps up sends its requests out as a Poisson
 * stream too (Burke's theorem for M/M/c), so this is the spread of a served count when the server
 * keeps up; completions follow arrivals, so it is, if anything, wider than the truth.
 */
export function servedInterval(count: number): { low: number; high: number } {
  const low = count === 0 ? 0 : count * (1 - 1 / (9 * count) - Z95 / (3 * Math.sqrt(count))) ** 3
  const next = count + 1
  const high = next * (1 - 1 / (9 * next) + Z95 / (3 * Math.sqrt(next))) ** 3
  return { low, high }
}

/**
 * 95% interval of the growth in flight, last third against first: each mean read as a Poisson count
 * (requests in flight in a queue that keeps up spread about as a Poisson count of their mean, as in
 * an M/G/infinity system; a time average over a third of the window spreads less), so the
 * difference's variance is their sum. Wide on purpose: growth counts only when it is plain.
 */
export function growthInterval(first: number, last: number): { low: number; high: number } {
  const spread = Z95 * Math.sqrt(first + last)
  return { low: last - first - spread, high: last - first + spread }
}
