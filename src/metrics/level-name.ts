import type { LoadMode } from './summarize.js'

/** What a level value counts, from a run's meta: streams, requests per second, or a trace's replay speed. */
export interface LevelCounting {
  trace?: unknown
  load?: { mode: LoadMode }
}

/** What a level is called in tables and lines: streams, a request rate, or a trace's replay speed. */
export function levelName(meta: LevelCounting, value: number): string {
  if (meta.trace != null) return `speed ${value}x`
  return meta.load?.mode === 'request_rate' ? `rate ${value}/s` : `c=${value}`
}

/** A level value with what it counts, in words: "1 concurrent stream", "4 requests per second". */
export function levelInWords(meta: LevelCounting, value: number): string {
  if (meta.trace != null) return `replay speed ${value}x`
  const many = value !== 1
  return meta.load?.mode === 'request_rate'
    ? `${value} request${many ? 's' : ''} per second`
    : `${value} concurrent stream${many ? 's' : ''}`
}
