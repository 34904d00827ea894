import type { BenchResult } from '../result/bench-result.js'

/**
 * A ramp run (--ramp): that it was a ramp, where its knee is, and the slices it was read on
 * (streams, throughput, TTFT p50), so the curve can be read without the JSON. Nothing for steps.
 */
export function rampNotes(result: BenchResult): string[] {
  const ramp = result.ramp
  if (ramp === undefined) return []
  const slices = ramp.slices
    .map((slice) => {
      const ttft = slice.ttft_ms.p50 == null ? '-' : `${slice.ttft_ms.p50.toFixed(0)} ms`
      return `${slice.value}: ${slice.output_tokens_per_s.toFixed(1)} tok/s, TTFT p50 ${ttft}`
    })
    .join('; ')
  return [
    `Ramp ${ramp.summary.replace(/^ramp: /, '')}`,
    `Ramp slices (streams: output tok/s, TTFT p50): ${slices}`,
  ]
}
