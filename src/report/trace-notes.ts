import type { CacheShareBucket } from '../metrics/cache-effect.js'
import { levelName } from '../metrics/level-name.js'
import { LATE_MS } from '../metrics/workload-figures.js'
import type { BenchResult } from '../result/bench-result.js'
import { describeWindow } from '../workload/trace-replay.js'

/** A prompt served at least this share from the prefix cache "found its prompt cached". */
const CACHED_SHARE = 0.5

/**
 * A trace replay's lines under the table: what was replayed, what the warm-up sent, and per speed how
 * late the client sent (actual send minus the trace's intended time), so a client that could not
 * keep up is seen, and how many measured rows found their prompt in the server's prefix cache. The
 * latencies "from intended" already count from the trace's times.
 */
export function traceNotes(result: BenchResult): string[] {
  const trace = result.meta.trace
  if (trace == null) return []
  const skipped = trace.skipped === null ? '' : `; skipped ${trace.skipped.count}: ${trace.skipped.reason}`
  const lines = [
    `Trace ${trace.file} (${trace.format}): ${trace.rows_used} of ${trace.rows_in_file} rows, ` +
      `${describeWindow(trace.window)}, spanning ${trace.span_s} s of trace time (at speed 1)${skipped}`,
  ]
  const warmups = result.meta.load.warmup_requests
  if (warmups > 0)
    lines.push(
      `Warm-up: ${warmups} request${warmups === 1 ? '' : 's'} per speed with prompts of their own (the rows' lengths, ` +
        'an opening no row shares), so no measured row finds its prompt cached by the warm-up',
    )
  for (const level of result.levels) {
    const schedule = level.schedule
    if (schedule == null) continue
    const ms = (value: number | null | undefined): string => (value == null ? '-' : `${value} ms`)
    lines.push(
      `${levelName(result.meta, level.value)}: sent late by p50 ${ms(schedule.lateness_p50_ms)}, ` +
        `p99 ${ms(schedule.lateness_p99_ms)}, max ${ms(schedule.lateness_max_ms)} ` +
        `(actual send minus the trace's time; ${schedule.late} over ${LATE_MS} ms, ${schedule.dropped} dropped)`,
    )
    const cache = cacheLine(level.cache_effect)
    if (cache !== null) lines.push(`${levelName(result.meta, level.value)}: ${cache}`)
  }
  return lines
}

/**
 * How many measured requests the prefix cache served half their prompt or more, with their TTFT
 * against the least-cached ones': a replay's rows that repeat a prefix (Mooncake's shared blocks, an
 * earlier speed's same prompts) are served warm, and the latencies say so only beside this line.
 * Null when the server reported no cached tokens at all (cache_effect absent).
 */
export function cacheLine(buckets: readonly CacheShareBucket[] | undefined): string | null {
  if (buckets === undefined) return null
  const total = buckets.reduce((sum, b) => sum + b.requests, 0)
  const cached = buckets.filter((b) => b.from >= CACHED_SHARE)
  const hits = cached.reduce((sum, b) => sum + b.requests, 0)
  const coldest = buckets[0]
  const warmest = [...cached].reverse().find((b) => b.requests > 0)
  const ttft = (b: CacheShareBucket | undefined): string =>
    b?.ttft_p50_ms == null ? '-' : `${b.ttft_p50_ms} ms`
  const against =
    hits === 0 || warmest === undefined || coldest === undefined || coldest.requests === 0
      ? ''
      : ` (TTFT p50 ${ttft(warmest)} at ${Math.round(warmest.from * 100)}% or more cached, ` +
        `against ${ttft(coldest)} under ${Math.round(coldest.to * 100)}%)`
  return `prefix cache: ${hits} of ${total} measured requests found half or more of their prompt cached${against}`
}
