import type { RunMeta } from './run-meta.js'

/** What a level is called in tables and lines: streams, a request rate, or a trace's replay speed. */
export function levelName(meta: RunMeta, value: number): string {
  if (meta.trace != null) return `speed ${value}x`
  return meta.load?.mode === 'request_rate' ? `rate ${value}/s` : `c=${value}`
}
