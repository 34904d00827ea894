import { sendRequest } from '../client/stream-client.js'
import { closeTarget, type Endpoint, openTarget } from '../client/target.js'
import { e2eMs, tpotMs, ttftMs } from '../metrics/derive.js'
import { percentileOfSorted } from '../metrics/distribution.js'
import type { RequestRecord } from '../records/types.js'
import { buildBody } from '../workload/request-body.js'
import { completeTokenCounts } from '../workload/token-counts.js'
import { probeWatchFor } from './connection-policy.js'
import { probeBody } from './preflight.js'

/**
 * The time one request of the run takes, from a few warm probes instead of one cold request: a
 * single first request pays the connection, TLS, and the server's own warm-up (a cold TPOT read
 * 0.4–10.7 ms against a simulator that decodes at 10 ms), and the plan's request count, cost and
 * duration swung 2–6× between identical runs. One warm-up request on the connection, then
 * PROBES timed ones back to back on it; their median is the projection, their spread its range.
 */
export const WARMUP_PROBES = 1
export const TIMED_PROBES = 3
/** Enough tokens for a TPOT of a dozen intervals, few enough to cost nothing. */
export const PROBE_MAX_TOKENS = 16

export interface ProbeTiming {
  /** Timed probes that succeeded. */
  probes: number
  ttft_ms: { median: number; min: number; max: number } | null
  tpot_ms: { median: number; min: number; max: number } | null
  e2e_ms: { median: number; min: number; max: number }
}

/**
 * Sends the warm-up and the timed probes on one connection: every record (for the records file) and
 * the timing, null when no timed probe succeeded.
 */
export async function timeProbes(
  endpoint: Endpoint,
  interrupt?: AbortSignal,
  timed = TIMED_PROBES,
): Promise<{ records: RequestRecord[]; timing: ProbeTiming | null }> {
  const target = { ...openTarget(endpoint, 1, probeWatchFor(endpoint)), interrupt }
  const body = buildBody(probeBody(endpoint), 'Count from one to twenty.', PROBE_MAX_TOKENS)
  const records: RequestRecord[] = []
  try {
    for (let k = 0; k < WARMUP_PROBES + timed && interrupt?.aborted !== true; k++) {
      const record = completeTokenCounts(
        await sendRequest(target, {
          seq: -1,
          worker: 0,
          level: 0,
          phase: 'preflight',
          prompt_id: -1,
          scheduled_at: null,
          attempt: 1,
          body,
        }),
      )
      records.push(record)
    }
  } finally {
    await closeTarget(target)
  }
  const good = records.slice(WARMUP_PROBES).filter((record) => record.error === null)
  if (good.length === 0) return { records, timing: null }
  const timing: ProbeTiming = {
    probes: good.length,
    ttft_ms: spread(good.map(ttftMs)),
    tpot_ms: spread(good.map(tpotMs)),
    e2e_ms: spread(good.map(e2eMs)) as NonNullable<ReturnType<typeof spread>>,
  }
  return { records, timing }
}

function spread(values: (number | null)[]): { median: number; min: number; max: number } | null {
  const known = values.filter((value): value is number => value !== null).sort((a, b) => a - b)
  if (known.length === 0) return null
  return {
    median: percentileOfSorted(known, 50) as number,
    min: known[0] as number,
    max: known.at(-1) as number,
  }
}

/**
 * One planned request's seconds (TTFT + TPOT × the rest of the planned output), as the median and
 * the range the probes allow: the fastest probe's figures give the low end, the slowest's the high.
 */
export function projectedSeconds(
  timing: ProbeTiming,
  outputMean: number,
): { median: number; low: number; high: number } {
  const rest = Math.max(0, outputMean - 1)
  if (timing.ttft_ms === null) {
    const { median, min, max } = timing.e2e_ms
    return { median: median / 1000, low: min / 1000, high: max / 1000 }
  }
  const tpot = timing.tpot_ms ?? { median: 0, min: 0, max: 0 }
  return {
    median: (timing.ttft_ms.median + tpot.median * rest) / 1000,
    low: (timing.ttft_ms.min + tpot.min * rest) / 1000,
    high: (timing.ttft_ms.max + tpot.max * rest) / 1000,
  }
}

/** "TTFT 52 ms (48–61), TPOT 10.1 ms (10.0–10.3) over 3 warm probes" */
export function describeTiming(timing: ProbeTiming): string {
  const part = (name: string, s: ProbeTiming['ttft_ms'], digits: number): string =>
    s === null
      ? ''
      : `${name} ${s.median.toFixed(digits)} ms (${s.min.toFixed(digits)}–${s.max.toFixed(digits)}), `
  const figures =
    timing.ttft_ms === null
      ? part('latency', timing.e2e_ms, 0)
      : `${part('TTFT', timing.ttft_ms, 0)}${part('TPOT', timing.tpot_ms, 1)}`
  return `timing: ${figures}median (range) of ${timing.probes} warm probe${timing.probes === 1 ? '' : 's'} after ${WARMUP_PROBES} warm-up`
}

/** A trace's rows' span at speed 1, seconds; null without a trace. */
export function traceSpanSeconds(offsetsMs: Float64Array | null): number | null {
  if (offsetsMs === null || offsetsMs.length === 0) return null
  return (offsetsMs[offsetsMs.length - 1] as number) / 1000
}
