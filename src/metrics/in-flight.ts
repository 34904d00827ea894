import type { RequestRecord } from '../records/types.js'
import { type Accumulator, accumulate, Samples } from './accumulator.js'
import { isOk } from './derive.js'
import { round } from './distribution.js'
import { TokenTimeline } from './token-timeline.js'

/**
 * How many requests a level really had in flight, and the part of its window where it held its
 * streams. A closed-loop level bounded by a request count ramps up (streams start) and drains
 * (streams run out of requests one by one); with few requests per stream, or fewer requests than
 * streams, the nominal concurrency is never held and the whole window's throughput understates
 * what the server does at that concurrency.
 */

/** Requests in flight between the level's first send and last end, from the records alone. */
export interface AchievedConcurrency {
  /** Time-averaged over the window. */
  mean: number
  max: number
  /**
   * The streams these records were meant to hold: the level's concurrency, or one shard's share of
   * it. Absent in request-rate mode and in results of older versions.
   */
  streams?: number
}

/**
 * The steady part of a level: from the first moment it had at least STEADY_SHARE of its nominal
 * streams in flight and one request had completed, to the last moment it fell below that share (brief dips between one request's
 * end and the next one's send are inside). Times in seconds after the level's first send.
 */
export interface SteadyWindow {
  start_s: number
  end_s: number
  /** Time-averaged requests in flight within the steady window. */
  mean_in_flight: number
  /** Output tokens that arrived within the window / its length. */
  output_tokens_per_s: number
}

export interface InFlightFigures {
  achieved: AchievedConcurrency
  /** Null when the level never held its streams, or held them for too short a part of its window. */
  steady: SteadyWindow | null
}

/** A level "holds" its streams while at least this share of them is in flight. */
export const STEADY_SHARE = 0.9
/** A steady part shorter than this share of the whole window is too short to measure a rate on. */
export const MIN_STEADY_SHARE_OF_WINDOW = 0.25

/**
 * `nominal` is the level's concurrency (closed loop), or null when there is none to hold (request
 * rate mode): then only the achieved figures are computed.
 */
export function inFlightFigures(records: readonly RequestRecord[], nominal: number | null): InFlightFigures {
  const timeline = new TokenTimeline()
  for (const record of records) timeline.add(record)
  return accumulate(records, inFlightAccumulator(nominal, timeline))
}

/**
 * The same, fed record by record: it keeps each request's send and end (the records are not kept);
 * the steady window's tokens are read from the level's `timeline`, fed the same records.
 */
export function inFlightAccumulator(
  nominal: number | null,
  timeline: TokenTimeline,
): Accumulator<InFlightFigures> {
  const sends = new Samples()
  const ends = new Samples()
  let firstOk = Number.POSITIVE_INFINITY
  let firstAny = Number.POSITIVE_INFINITY
  return {
    add(r) {
      sends.push(r.sent_at)
      ends.push(Math.max(r.end_at, r.sent_at))
      firstAny = Math.min(firstAny, r.end_at)
      if (isOk(r)) firstOk = Math.min(firstOk, r.end_at)
    },
    result() {
      // The server is in its steady state once one request has gone all the way through (the
      // level's first successful request, its first failed one if none succeeded).
      const firstCompletion = Number.isFinite(firstOk) ? firstOk : firstAny
      return inFlightOf(sends.sorted(), ends.sorted(), timeline, firstCompletion, nominal)
    },
  }
}

/** Requests in flight over time: +1 at each send, -1 at each end, in time order. */
interface InFlightSteps {
  at: Float64Array
  delta: Int8Array
}

/**
 * Sends and ends merged in time order; at equal times ends go first, so a stream that sends its next
 * request the moment the previous one ends is not counted twice.
 */
function stepsOf(sends: Float64Array, ends: Float64Array): InFlightSteps {
  const at = new Float64Array(sends.length + ends.length)
  const delta = new Int8Array(at.length)
  let s = 0
  let e = 0
  for (let i = 0; i < at.length; i++) {
    const takeEnd = s >= sends.length || (e < ends.length && (ends[e] as number) <= (sends[s] as number))
    at[i] = takeEnd ? (ends[e++] as number) : (sends[s++] as number)
    delta[i] = takeEnd ? -1 : 1
  }
  return { at, delta }
}

function inFlightOf(
  sends: Float64Array,
  ends: Float64Array,
  timeline: TokenTimeline,
  firstCompletion: number,
  nominal: number | null,
): InFlightFigures {
  if (sends.length === 0)
    return {
      achieved: nominal === null ? { mean: 0, max: 0 } : { mean: 0, max: 0, streams: nominal },
      steady: null,
    }
  const steps = stepsOf(sends, ends)
  const first = steps.at[0] as number
  const last = steps.at[steps.at.length - 1] as number
  const threshold = nominal === null ? Number.POSITIVE_INFINITY : Math.max(1, STEADY_SHARE * nominal)
  let current = 0
  let max = 0
  let area = 0
  let previousAt = first
  let steadyStart: number | null = null
  let steadyEnd: number | null = null
  for (let i = 0; i < steps.at.length; i++) {
    const at = steps.at[i] as number
    area += current * (at - previousAt)
    previousAt = at
    const wasHolding = current >= threshold
    current += steps.delta[i] as number
    max = Math.max(max, current)
    if (current >= threshold && steadyStart === null) steadyStart = at
    if (wasHolding && current < threshold) steadyEnd = at
  }
  const span = last - first
  const achieved: AchievedConcurrency = { mean: span > 0 ? round(area / span, 2) : max, max }
  if (nominal !== null) achieved.streams = nominal
  if (steadyStart === null || steadyEnd === null || span <= 0) return { achieved, steady: null }
  // The server is in its steady state once one request has gone all the way through: before that,
  // a closed loop's synchronized start has it prefilling the whole first wave at once (few tokens
  // out), which would make a level look slower than it runs.
  steadyStart = Math.max(steadyStart, firstCompletion)
  if (steadyEnd - steadyStart < MIN_STEADY_SHARE_OF_WINDOW * span) return { achieved, steady: null }
  return { achieved, steady: steadyFigures(timeline, steps, first, steadyStart, steadyEnd) }
}

function steadyFigures(
  timeline: TokenTimeline,
  steps: InFlightSteps,
  origin: number,
  start: number,
  end: number,
): SteadyWindow {
  const seconds = (end - start) / 1000
  return {
    start_s: round((start - origin) / 1000, 3),
    end_s: round((end - origin) / 1000, 3),
    mean_in_flight: round(meanInFlight(steps, start, end), 2),
    output_tokens_per_s: round(timeline.within(start, end) / seconds, 2),
  }
}

function meanInFlight(steps: InFlightSteps, start: number, end: number): number {
  let current = 0
  let area = 0
  let previousAt = start
  for (let i = 0; i < steps.at.length; i++) {
    const at = steps.at[i] as number
    if (at > end) break
    if (at > start) {
      area += current * (at - previousAt)
      previousAt = at
    }
    current += steps.delta[i] as number
  }
  area += current * (end - previousAt)
  return end > start ? area / (end - start) : current
}
