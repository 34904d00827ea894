import type { RunMeta } from './run-meta.js'

/** What a level is called in tables and lines: streams, or a request rate. */
export function levelName(meta: RunMeta, value: number): string {
  return meta.load?.mode === 'request_rate' ? `rate ${value}/s` : `c=${value}`
}
