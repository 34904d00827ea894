import { ttftMs } from '../metrics/derive.js'
import { percentileOfSorted } from '../metrics/distribution.js'
import type { RequestRecord } from '../records/types.js'
import type { CalibrationPoint } from './calibration-design.js'

/** What a calibration point measured, read as the simulated closed loop reads its own (engine.ts). */
export interface PointMeasure {
  point: CalibrationPoint
  ok: number
  failed: number
  /** Output tokens/s from the last stream's first send to the first stream left with nothing to send. */
  outputTokensPerS: number | null
  ttftP50Ms: number | null
  /** Per request: (last token − first token) / (tokens − 1); its median. */
  tpotP50Ms: number | null
  /** Median of every token gap. */
  itlP50Ms: number | null
  /** Mean prompt tokens as the server counted them, and mean tokens streamed. */
  inputTokens: number | null
  outputTokens: number | null
  /** The most requests decoding at once (first to last token): the slots, once more streams than slots ran. */
  mostDecoding: number
}

export function measurePoint(point: CalibrationPoint, records: readonly RequestRecord[]): PointMeasure {
  const ok = records.filter((r) => r.error === null && r.token_times.length > 0)
  const ttfts = sorted(ok.map(ttftMs).filter((x): x is number => x !== null))
  const tpots = sorted(
    ok
      .filter((r) => r.token_times.length > 1)
      .map(
        (r) => ((r.token_times.at(-1) as number) - (r.token_times[0] as number)) / (r.token_times.length - 1),
      ),
  )
  const gaps = sorted(
    ok.flatMap((r) => r.token_times.slice(1).map((t, i) => t - (r.token_times[i] as number))),
  )
  const inputs = ok
    .map((r) => r.server_timings?.prompt_n ?? r.input_tokens)
    .filter((x): x is number => x !== null)
  return {
    point,
    ok: ok.length,
    failed: records.length - ok.length,
    outputTokensPerS: steadyRate(ok, point.concurrency),
    ttftP50Ms: percentileOfSorted(ttfts, 50),
    tpotP50Ms: percentileOfSorted(tpots, 50),
    itlP50Ms: percentileOfSorted(gaps, 50),
    inputTokens: inputs.length === 0 ? null : mean(inputs),
    outputTokens: ok.length === 0 ? null : mean(ok.map((r) => r.token_times.length)),
    mostDecoding: mostOverlapping(ok),
  }
}

/**
 * Tokens/s while every stream was busy, as engine.ts's simulateClosedLoop counts them: from the last
 * stream's first send to the first finish after the last request was sent; over the whole span when
 * that window holds no token.
 */
function steadyRate(records: readonly RequestRecord[], streams: number): number | null {
  if (records.length === 0) return null
  const sends = records.map((r) => r.sent_at).sort((a, b) => a - b)
  const from = sends[Math.min(streams, sends.length) - 1] as number
  const lastSend = sends.at(-1) as number
  const ends = records.map((r) => r.token_times.at(-1) as number).filter((end) => end > lastSend)
  const until = ends.length === 0 ? Number.POSITIVE_INFINITY : Math.min(...ends)
  const times = records.flatMap((r) => r.token_times)
  const inside = times.filter((t) => t > from && t <= until).length
  if (until > from && Number.isFinite(until) && inside > 0) return (inside * 1000) / (until - from)
  const span = Math.max(...times) - (sends[0] as number)
  return span > 0 ? (times.length * 1000) / span : null
}

/** The most decode windows (first token to last) open at once. */
export function mostOverlapping(records: readonly RequestRecord[]): number {
  const edges = records
    .filter((r) => r.token_times.length > 1)
    .flatMap((r) => [
      { at: r.token_times[0] as number, change: 1 },
      { at: r.token_times.at(-1) as number, change: -1 },
    ])
    // A window closing at the instant another opens does not overlap it.
    .sort((a, b) => a.at - b.at || a.change - b.change)
  let open = 0
  let most = 0
  for (const edge of edges) {
    open += edge.change
    most = Math.max(most, open)
  }
  return most
}

function sorted(values: readonly number[]): Float64Array {
  return Float64Array.from(values).sort()
}

function mean(values: readonly number[]): number {
  return values.reduce((a, b) => a + b, 0) / values.length
}
