import type { LoadMode } from './summarize.js'

/** What a level value counts, from a run's meta: streams, requests per second, or a trace's replay speed. */
export interface LevelCounting {
  trace?: unknown
  load?: { mode: LoadMode }
  /** A job run's levels count jobs in flight (--jobs), not streams. */
  workload?: { jobs?: unknown }
}

/** What a level is called in tables and lines: streams, a request rate, or a trace's replay speed. */
export function levelName(meta: LevelCounting, value: number): string {
  if (meta.trace != null) return `speed ${value}x`
  return meta.load?.mode === 'request_rate' ? `rate ${value}/s` : `c=${value}`
}

/** A level value with what it counts, in words: "1 concurrent stream", "4 requests per second", "3 concurrent jobs". */
export function levelInWords(meta: LevelCounting, value: number): string {
  if (meta.trace != null) return `replay speed ${value}x`
  const many = value !== 1
  if (meta.load?.mode === 'request_rate') return `${value} request${many ? 's' : ''} per second`
  return meta.workload?.jobs != null
    ? `${value} concurrent job${many ? 's' : ''}`
    : `${value} concurrent stream${many ? 's' : ''}`
}
