import { loadTraceFile, TraceError, type TraceFile, type TraceFormat, type TraceRow } from './trace-file.js'

/**
 * The part of a trace a run replays: the rows inside a window of the trace's own clock, at most a
 * given number of them, each with its send offset. Offsets count from the first row replayed, so a
 * window that starts mid-trace does not open with a silent wait.
 */
export interface TraceWindow {
  /** Trace seconds after the trace's first row where the window opens. */
  start_s: number
  /** Trace seconds the window lasts; null = to the end. */
  duration_s: number | null
  /** The first this many rows of the window at most; null = all. */
  max_requests: number | null
}

export interface TraceReplay {
  file: string
  format: TraceFormat
  /** The rows replayed, in arrival order: row i is request i of every level. */
  rows: TraceRow[]
  /** Row i's send offset at speed 1, ms after row 0. */
  offsets_ms: Float64Array
  meta: TraceMeta
}

/** What the result says about the replay. */
export interface TraceMeta {
  file: string
  format: TraceFormat
  rows_in_file: number
  rows_used: number
  /** Rows the format marks unusable (BurstGPT's failed requests), left out before the window. */
  skipped: { count: number; reason: string } | null
  window: TraceWindow
  /** Trace seconds from the first row replayed to the last, at speed 1. */
  span_s: number
  /** One level per speed: each replays the window with its offsets divided by the speed. */
  speeds: number[]
}

export function loadTraceReplay(path: string, window: TraceWindow, speeds: readonly number[]): TraceReplay {
  return replayOf(loadTraceFile(path), window, speeds)
}

export function replayOf(trace: TraceFile, window: TraceWindow, speeds: readonly number[]): TraceReplay {
  // Stable: rows of the same instant keep their file order.
  const sorted = [...trace.rows].sort((a, b) => a.at_ms - b.at_ms)
  const origin = sorted[0]?.at_ms ?? 0
  const from = origin + window.start_s * 1000
  const until = window.duration_s === null ? Number.POSITIVE_INFINITY : from + window.duration_s * 1000
  let rows = sorted.filter((row) => row.at_ms >= from && row.at_ms < until)
  if (window.max_requests !== null) rows = rows.slice(0, window.max_requests)
  if (rows.length === 0)
    throw new TraceError(
      `trace ${trace.path}: no row in the window (${describeWindow(window)}); the trace spans ` +
        `${(((sorted.at(-1)?.at_ms ?? origin) - origin) / 1000).toFixed(3)} s`,
    )
  const first = (rows[0] as TraceRow).at_ms
  const offsets = Float64Array.from(rows, (row) => row.at_ms - first)
  return {
    file: trace.path,
    format: trace.format,
    rows,
    offsets_ms: offsets,
    meta: {
      file: trace.path,
      format: trace.format,
      rows_in_file: trace.rows.length + (trace.skipped?.count ?? 0),
      rows_used: rows.length,
      skipped: trace.skipped,
      window,
      span_s: Math.round(offsets[offsets.length - 1] as number) / 1000,
      speeds: [...speeds],
    },
  }
}

/** "from 10 s for 60 s, first 100 rows" */
export function describeWindow(window: TraceWindow): string {
  const span = window.duration_s === null ? 'to the end' : `for ${window.duration_s} s`
  const cap = window.max_requests === null ? '' : `, first ${window.max_requests} rows`
  return `from ${window.start_s} s ${span}${cap}`
}
