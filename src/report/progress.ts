import { ttftMs } from '../metrics/derive.js'
import { percentileOfSorted } from '../metrics/distribution.js'
import type { RequestRecord } from '../records/types.js'

/** A running level as the progress line shows it. */
export interface LevelProgress {
  /** The level: streams, or requests per second in request_rate mode. */
  value: number
  /** Still in the warm-up round: nothing measured yet. */
  warming_up: boolean
  done: number
  /** Measured requests planned, or null when the level runs by duration. */
  total: number | null
  elapsed_s: number
  duration_s: number | null
  ttft_p50_ms: number | null
  output_tokens_per_s: number
  failed: number
}

/** Progress of a level from the records received so far (the last 200 for the live TTFT). */
export function levelProgress(
  value: number,
  warmingUp: boolean,
  measured: readonly RequestRecord[],
  startedAt: number,
  now: number,
  total: number | null,
  durationS: number | null,
): LevelProgress {
  const recent = measured
    .slice(-200)
    .map(ttftMs)
    .filter((v): v is number => v !== null)
    .sort((a, b) => a - b)
  const elapsed = Math.max((now - startedAt) / 1000, 0.001)
  let tokens = 0
  let failed = 0
  for (const record of measured) {
    if (record.error === null) tokens += record.output_tokens
    else failed++
  }
  return {
    value,
    warming_up: warmingUp,
    done: measured.length,
    total,
    elapsed_s: elapsed,
    duration_s: durationS,
    ttft_p50_ms: percentileOfSorted(recent, 50),
    output_tokens_per_s: tokens / elapsed,
    failed,
  }
}

export function formatProgress(p: LevelProgress): string {
  if (p.warming_up) return `level ${p.value}: warming up`
  const amount =
    p.total !== null
      ? `${p.done}/${p.total} requests`
      : `${p.elapsed_s.toFixed(0)}/${p.duration_s ?? '?'} s, ${p.done} requests`
  const ttft = p.ttft_p50_ms === null ? '-' : `${p.ttft_p50_ms.toFixed(0)} ms`
  return `level ${p.value}: ${amount}, TTFT p50 ${ttft}, ${p.output_tokens_per_s.toFixed(0)} tok/s, ${p.failed} errors`
}
