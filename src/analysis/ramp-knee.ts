import { Samples } from '../metrics/accumulator.js'
import { isOk, ttftMs } from '../metrics/derive.js'
import { type Distribution, round } from '../metrics/distribution.js'
import type { RequestRecord } from '../records/types.js'
import { findSaturation, type Saturation } from './saturation.js'
import type { ScalingFigures } from './scaling-step.js'

/**
 * The knee read on a continuous ramp (--ramp): the ramp's seconds cut into slices, each slice one
 * point of the curve with the streams it held as its value, and the stepped knee's own function
 * (saturation.ts's findSaturation, its rules and thresholds) run on those points. A slice's
 * throughput is the tokens that arrived inside it (whichever request carried them: requests
 * overlap slices), its TTFT that of the requests sent inside it, its achieved concurrency the
 * requests in flight over it, time-averaged. No interval is computed per slice, so the rules read
 * the point figures, as they do for results without intervals.
 */

/** The ramp as meta.load.ramp says it. */
export interface RampPlan {
  from: number
  to: number
  seconds: number
}

/** One slice of the ramp, as a level of the curve. */
export interface RampSlice extends ScalingFigures {
  /** Seconds from the ramp's first send: the slice's start and end. */
  start_s: number
  end_s: number
  /** Requests sent in the slice (successes and failures; cancelled ones are in no slice). */
  requests: number
  ttft_ms: Distribution
  achieved_concurrency: { mean: number; max: number }
}

export interface RampResult extends RampPlan {
  /** "ramp": the knee was read on a continuous ramp, not on steps. */
  kind: 'ramp'
  slices: RampSlice[]
  /** The knee on the slices (findSaturation), or null when none was placed. */
  saturation: Saturation | null
  /** In words: that it was a ramp, and where its knee is or why none was placed. */
  summary: string
}

/** At most this many slices: one per stream up to it, then several streams per slice. */
export const MAX_RAMP_SLICES = 12

interface Kept {
  sent: number
  end: number
  ok: boolean
  ttft: number | null
  tokensPerEvent: number
  times: Float64Array
}

/** Fed the ramp level's measured records; keeps each one's times (its token arrivals included). */
export class RampSamples {
  private readonly kept: Kept[] = []

  add(record: RequestRecord): void {
    if (record.phase !== 'measure' || record.cancelled !== undefined) return
    const ok = isOk(record)
    const events = record.token_times.length
    this.kept.push({
      sent: record.sent_at,
      end: record.end_at,
      ok,
      ttft: ok ? ttftMs(record) : null,
      tokensPerEvent: ok && events > 0 ? record.output_tokens / events : 0,
      times: ok ? Float64Array.from(record.token_times) : new Float64Array(0),
    })
  }

  /** The slices and the knee on them; null before any record. */
  result(plan: RampPlan, percentiles: readonly number[], ttftKey: string): RampResult | null {
    if (this.kept.length === 0) return null
    const start = Math.min(...this.kept.map((k) => k.sent))
    const count = Math.min(plan.to - plan.from + 1, MAX_RAMP_SLICES)
    const sliceMs = (plan.seconds * 1000) / count
    const slices: RampSlice[] = []
    for (let i = 0; i < count; i++) {
      const from = start + i * sliceMs
      slices.push(this.slice(plan, i, count, from, from + sliceMs, start, percentiles))
    }
    const saturation = findSaturation(slices, ttftKey, false, null)
    return { kind: 'ramp', ...plan, slices, saturation, summary: rampSummary(plan, count, saturation) }
  }

  private slice(
    plan: RampPlan,
    index: number,
    count: number,
    from: number,
    to: number,
    start: number,
    percentiles: readonly number[],
  ): RampSlice {
    let sent = 0
    let ok = 0
    let tokens = 0
    let busyMs = 0
    const ttft = new Samples()
    for (const k of this.kept) {
      if (k.sent >= from && k.sent < to) {
        sent++
        if (k.ok) {
          ok++
          ttft.pushFigure(k.ttft)
        }
      }
      busyMs += Math.max(0, Math.min(k.end, to) - Math.max(k.sent, from))
      if (k.tokensPerEvent > 0)
        for (const at of k.times) if (at >= from && at < to) tokens += k.tokensPerEvent
    }
    const seconds = (to - from) / 1000
    // The streams held by the slice's end: the ramp adds one every seconds / streams.
    const streams = plan.from + Math.round(((index + 1) * (plan.to - plan.from + 1)) / count) - 1
    return {
      value: streams,
      start_s: round((from - start) / 1000),
      end_s: round((to - start) / 1000),
      requests: sent,
      output_tokens_per_s: round(tokens / seconds, 2),
      ttft_ms: ttft.distribution(percentiles),
      success_rate: sent === 0 ? 1 : round(ok / sent, 4),
      achieved_concurrency: { mean: round(busyMs / (to - from), 3), max: streams },
    }
  }
}

function rampSummary(plan: RampPlan, slices: number, saturation: Saturation | null): string {
  const ramp = `ramp: streams rose linearly from ${plan.from} to ${plan.to} over ${plan.seconds} s, read in ${slices} slices`
  return saturation === null
    ? `${ramp}; no knee on the ramp (throughput kept growing, or latency did not grow with it)`
    : `${ramp}; knee on the ramp at ${saturation.value} streams: ${saturation.reason}`
}
