import type { RequestRecord } from '../records/types.js'
import { type Accumulator, Samples } from './accumulator.js'
import { isOk } from './derive.js'
import { percentileOfSorted, round } from './distribution.js'
import { accumulator } from './figure.js'

/**
 * The fluidity index (Etalon, arXiv 2407.07000): how smoothly a stream's tokens arrived, as the share
 * of them that met their deadlines. Token 0 is due `prefill_ms` after the send, each later one
 * `decode_ms` after the one before; a token that misses re-bases the schedule at its own arrival, so
 * one stall costs one miss, not every later token, while a stream slower than the pace throughout
 * misses nearly every token. TTFT and TPOT percentiles average such stalls away; this does not.
 */

/** The deadlines of a run, the same at every level so that levels compare. */
export interface FluidityDeadlines {
  /** Send to the first token, ms. */
  prefill_ms: number
  /** Between two tokens, ms. */
  decode_ms: number
  /** Where they come from, in words (result meta). */
  basis: string
}

/** How much slower than the unloaded server a token may come before it is late. */
export const FLUIDITY_SLACK = 2

/**
 * The run's deadlines from its own unloaded server: the warm probes' median TTFT (at the planned
 * prompt length when one was probed) and median TPOT, each times the slack. Null without them.
 */
export function fluidityDeadlines(
  ttftMs: number | null,
  tpotMs: number | null,
  atLength: boolean,
): FluidityDeadlines | null {
  if (ttftMs === null || tpotMs === null || !(ttftMs > 0) || !(tpotMs > 0)) return null
  return {
    prefill_ms: round(ttftMs * FLUIDITY_SLACK),
    decode_ms: round(tpotMs * FLUIDITY_SLACK),
    basis: `${FLUIDITY_SLACK}x the warm probes' median TTFT${atLength ? ' at the planned prompt length' : ''} and median TPOT`,
  }
}

/** A request's fluidity index from its token arrival times (run clock), or null when it streamed no token. */
export function fluidityIndex(
  sentAt: number,
  tokenTimes: readonly number[],
  deadlines: Pick<FluidityDeadlines, 'prefill_ms' | 'decode_ms'>,
): number | null {
  if (tokenTimes.length === 0) return null
  let met = 0
  let due = sentAt + deadlines.prefill_ms
  for (const at of tokenTimes) {
    if (at <= due) {
      met++
      due += deadlines.decode_ms
    } else {
      // Late: the schedule starts again from this token, so one stall is one miss.
      due = at + deadlines.decode_ms
    }
  }
  return met / tokenTimes.length
}

/** A level's fluidity: over its requests, failed ones at 0 (they did not deliver their tokens). */
export interface FluidityFigures {
  requests: number
  mean: number | null
  p50: number | null
  /** The index 90% of requests reach or exceed (the 10th percentile from below). */
  p90: number | null
  /** Share of requests with every token on time. */
  all_on_time: number | null
}

export function fluidityAccumulator(
  deadlines: FluidityDeadlines | null,
): Accumulator<FluidityFigures | null> {
  const values = new Samples()
  let sum = 0
  let perfect = 0
  return accumulator(
    (record: RequestRecord) => {
      if (deadlines === null) return
      const index = requestFluidity(record, deadlines)
      if (index === null) return
      values.push(index)
      sum += index
      if (index === 1) perfect++
    },
    () => {
      if (deadlines === null || values.length === 0) return null
      const sorted = values.sorted()
      return {
        requests: values.length,
        mean: round(sum / values.length, 4),
        p50: round(percentileOfSorted(sorted, 50) ?? 0, 4),
        p90: round(percentileOfSorted(sorted, 10) ?? 0, 4),
        all_on_time: round(perfect / values.length, 4),
      }
    },
  )
}

/** A record's fluidity: its index when it succeeded, 0 when it failed, null when it streamed nothing to judge. */
export function requestFluidity(record: RequestRecord, deadlines: FluidityDeadlines): number | null {
  if (!isOk(record)) return 0
  return fluidityIndex(record.sent_at, record.token_times, deadlines)
}
