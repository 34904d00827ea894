import type { RequestRecord } from '../records/types.js'
import { isOk } from './derive.js'
import { round } from './distribution.js'

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
  if (records.length === 0)
    return {
      achieved: nominal === null ? { mean: 0, max: 0 } : { mean: 0, max: 0, streams: nominal },
      steady: null,
    }
  // +1 at each send, -1 at each end; at equal times ends go first, so a stream that sends its next
  // request the moment the previous one ends is not counted twice.
  const events: { at: number; delta: number }[] = []
  for (const r of records) {
    events.push({ at: r.sent_at, delta: 1 }, { at: Math.max(r.end_at, r.sent_at), delta: -1 })
  }
  events.sort((a, b) => a.at - b.at || a.delta - b.delta)
  const first = (events[0] as { at: number }).at
  const last = (events.at(-1) as { at: number }).at
  const threshold = nominal === null ? Number.POSITIVE_INFINITY : Math.max(1, STEADY_SHARE * nominal)
  let current = 0
  let max = 0
  let area = 0
  let previousAt = first
  let steadyStart: number | null = null
  let steadyEnd: number | null = null
  for (const event of events) {
    area += current * (event.at - previousAt)
    previousAt = event.at
    const wasHolding = current >= threshold
    current += event.delta
    max = Math.max(max, current)
    if (current >= threshold && steadyStart === null) steadyStart = event.at
    if (wasHolding && current < threshold) steadyEnd = event.at
  }
  const span = last - first
  const achieved: AchievedConcurrency = { mean: span > 0 ? round(area / span, 2) : max, max }
  if (nominal !== null) achieved.streams = nominal
  if (steadyStart === null || steadyEnd === null || span <= 0) return { achieved, steady: null }
  // The server is in its steady state once one request has gone all the way through: before that,
  // a closed loop's synchronized start has it prefilling the whole first wave at once (few tokens
  // out), which would make a level look slower than it runs.
  steadyStart = Math.max(steadyStart, firstCompletion(records))
  if (steadyEnd - steadyStart < MIN_STEADY_SHARE_OF_WINDOW * span) return { achieved, steady: null }
  return { achieved, steady: steadyFigures(records, events, first, steadyStart, steadyEnd) }
}

/** When the level's first successful request ended (its first failed one if none succeeded). */
function firstCompletion(records: readonly RequestRecord[]): number {
  let first = Number.POSITIVE_INFINITY
  let firstAny = Number.POSITIVE_INFINITY
  for (const r of records) {
    firstAny = Math.min(firstAny, r.end_at)
    if (isOk(r)) first = Math.min(first, r.end_at)
  }
  return Number.isFinite(first) ? first : firstAny
}

function steadyFigures(
  records: readonly RequestRecord[],
  events: readonly { at: number; delta: number }[],
  origin: number,
  start: number,
  end: number,
): SteadyWindow {
  let tokens = 0
  for (const r of records) {
    if (!isOk(r) || r.end_at <= start || r.sent_at >= end) continue
    tokens += tokensWithin(r, start, end)
  }
  const seconds = (end - start) / 1000
  return {
    start_s: round((start - origin) / 1000, 3),
    end_s: round((end - origin) / 1000, 3),
    mean_in_flight: round(meanInFlight(events, start, end), 2),
    output_tokens_per_s: round(tokens / seconds, 2),
  }
}

/**
 * A request's output tokens that arrived in (start, end]: its events there, each carrying an equal
 * share of its tokens; a response without token events (not streamed) delivers them all at its end.
 */
function tokensWithin(r: RequestRecord, start: number, end: number): number {
  if (r.token_times.length === 0) return r.end_at > start && r.end_at <= end ? r.output_tokens : 0
  let events = 0
  for (const t of r.token_times) if (t > start && t <= end) events++
  return (r.output_tokens * events) / r.token_times.length
}

function meanInFlight(events: readonly { at: number; delta: number }[], start: number, end: number): number {
  let current = 0
  let area = 0
  let previousAt = start
  for (const event of events) {
    if (event.at > end) break
    if (event.at > start) {
      area += current * (event.at - previousAt)
      previousAt = event.at
    }
    current += event.delta
  }
  area += current * (end - previousAt)
  return end > start ? area / (end - start) : current
}
