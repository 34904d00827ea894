import { LATE_MS } from '../metrics/workload-figures.js'
import type { BenchResult } from '../result/bench-result.js'
import { levelName } from '../result/level-name.js'
import { describeWindow } from '../workload/trace-replay.js'

/**
 * A trace replay's lines under the table: what was replayed, and per speed how late the client sent
 * (actual send minus the trace's intended time), so a client that could not keep up is seen. The
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
  for (const level of result.levels) {
    const schedule = level.schedule
    if (schedule == null) continue
    const ms = (value: number | null | undefined): string => (value == null ? '-' : `${value} ms`)
    lines.push(
      `${levelName(result.meta, level.value)}: sent late by p50 ${ms(schedule.lateness_p50_ms)}, ` +
        `p99 ${ms(schedule.lateness_p99_ms)}, max ${ms(schedule.lateness_max_ms)} ` +
        `(actual send minus the trace's time; ${schedule.late} over ${LATE_MS} ms, ${schedule.dropped} dropped)`,
    )
  }
  return lines
}
