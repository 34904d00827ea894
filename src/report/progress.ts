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
  /** --precision: the named figures' precision so far ("ttft_p95 ±6.2% (target 5%)"); absent without it. */
  precision?: string
  /** The whole run: seconds since its load began, and an estimate of the seconds left (null = unknown). */
  run?: { elapsed_s: number; remaining_s: number | null }
  /** --repeat: which run of the level this is (index from 0) of how many. */
  repeat?: { index: number; of: number }
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
  const tally = new ProgressTally()
  for (const record of measured) tally.add(record)
  return tally.progress(value, warmingUp, startedAt, now, total, durationS)
}

/** How many recent requests the live TTFT p50 is taken over. */
const RECENT = 200

/**
 * A running level's progress, fed its measured records as they arrive: counts, tokens and the last
 * RECENT TTFTs in a ring, so each half-second line costs the same however long the level runs.
 */
export class ProgressTally {
  private done = 0
  private tokens = 0
  private failed = 0
  /** The TTFT of each of the last RECENT requests (NaN: it had none), oldest overwritten first. */
  private readonly recent = new Float64Array(RECENT)

  add(record: RequestRecord): void {
    this.recent[this.done % RECENT] = ttftMs(record) ?? Number.NaN
    this.done++
    if (record.error === null) this.tokens += record.output_tokens
    else this.failed++
  }

  progress(
    value: number,
    warmingUp: boolean,
    startedAt: number,
    now: number,
    total: number | null,
    durationS: number | null,
  ): LevelProgress {
    const recent = this.recent
      .slice(0, Math.min(this.done, RECENT))
      .filter((ttft) => !Number.isNaN(ttft))
      .sort()
    const elapsed = Math.max((now - startedAt) / 1000, 0.001)
    return {
      value,
      warming_up: warmingUp,
      done: this.done,
      total,
      elapsed_s: elapsed,
      duration_s: durationS,
      ttft_p50_ms: percentileOfSorted(recent, 50),
      output_tokens_per_s: this.tokens / elapsed,
      failed: this.failed,
    }
  }
}

export function formatProgress(p: LevelProgress): string {
  const clock = p.run === undefined ? '' : `${runClock(p.run)} `
  const level = `level ${p.value}${p.repeat === undefined ? '' : ` (run ${p.repeat.index + 1} of ${p.repeat.of})`}`
  if (p.warming_up) return `${clock}${level}: warming up`
  const amount =
    p.total !== null
      ? `${p.done}/${p.total} requests`
      : p.duration_s !== null && p.elapsed_s > p.duration_s
        ? // The window is over; the requests still in flight finish (a timed level's drain).
          `${p.duration_s}/${p.duration_s} s, draining for ${(p.elapsed_s - p.duration_s).toFixed(0)} s, ${p.done} requests`
        : `${p.elapsed_s.toFixed(0)}/${p.duration_s ?? '?'} s, ${p.done} requests`
  const ttft = p.ttft_p50_ms === null ? '-' : `${p.ttft_p50_ms.toFixed(0)} ms`
  // --precision: the count is a floor, not a total, and the figures' precision says how far off the end is.
  const sized =
    p.precision === undefined ? amount : `${p.done} requests (at least ${p.total ?? '?'}), ${p.precision}`
  return `${clock}${level}: ${sized}, TTFT p50 ${ttft}, ${p.output_tokens_per_s.toFixed(0)} tok/s, ${p.failed} errors`
}

/** "[1:02, ~3:10 left]": the run's elapsed time and the estimate of the rest. */
function runClock(run: NonNullable<LevelProgress['run']>): string {
  const left = run.remaining_s === null ? '' : `, ~${minutes(run.remaining_s)} left`
  return `[${minutes(run.elapsed_s)}${left}]`
}

/** "0:07", "12:45", "1:02:03" */
export function minutes(seconds: number): string {
  const s = Math.max(0, Math.round(seconds))
  const mm = String(Math.floor((s % 3600) / 60))
  const ss = String(s % 60).padStart(2, '0')
  return s >= 3600 ? `${Math.floor(s / 3600)}:${mm.padStart(2, '0')}:${ss}` : `${mm}:${ss}`
}
