import type { BenchResult } from '../result/bench-result.js'

/** "Why: <the server figures that point at it>. Look at: <the setting>", under the saturation line; null without a knee. */
export function kneeCauseLine(result: BenchResult): string | null {
  const cause = result.saturation?.cause
  if (cause === undefined) return null
  if (cause.kind === 'no-server-data') return `Why: ${cause.evidence}. For an answer: ${cause.setting}`
  return `Why: ${cause.evidence}. Look at: ${cause.setting}`
}
