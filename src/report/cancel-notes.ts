import { levelName } from '../metrics/level-name.js'
import type { BenchResult } from '../result/bench-result.js'

/**
 * One line per level that cancelled requests (--cancel-share): how many, when, and whether the
 * server freed their slots, or why that cannot be told. Under every surface's table, with the
 * workload's notes.
 */
export function cancelNotes(result: BenchResult): string[] {
  const lines: string[] = []
  for (const level of result.levels) {
    const cancellation = level.cancellation
    if (cancellation === undefined) continue
    const when =
      cancellation.after_events === 1 ? 'at the first token' : `after ${cancellation.after_events} tokens`
    const ttft =
      cancellation.ttft_ms.p50 == null ? '' : `, their TTFT p50 ${cancellation.ttft_ms.p50.toFixed(0)} ms`
    const slots = cancellation.slots
    const verdict =
      slots === undefined
        ? 'whether the server freed their slots cannot be told: its /metrics was not scraped'
        : slots.verdict === 'freed'
          ? `the server freed their slots: ${slots.reason}`
          : slots.verdict === 'not_freed'
            ? `the server did NOT free their slots: ${slots.reason}`
            : `whether the server freed their slots cannot be told: ${slots.reason}`
    lines.push(
      `${levelName(result.meta, level.value)}: ${cancellation.cancelled} request(s) cancelled ${when} ` +
        `(${(100 * cancellation.share).toFixed(0)}% of those sent; in no latency or throughput figure${ttft}); ${verdict}`,
    )
  }
  return lines
}
