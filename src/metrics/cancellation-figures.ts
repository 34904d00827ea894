import type { RequestRecord } from '../records/types.js'
import type { SlotCheck } from '../server-metrics/cancel-slots.js'
import { type Accumulator, Samples } from './accumulator.js'
import { ttftMs } from './derive.js'
import { type Distribution, round } from './distribution.js'

/**
 * A level's requests the client cancelled on purpose (--cancel-share): how many, when, and, from
 * the server's running count, whether the server let go of them (server-metrics/cancel-slots.ts
 * adds `slots`). Cancelled requests are in no other figure of the level: not successes, not
 * failures, and none of their latencies, which end where the client chose to stop.
 */
export interface CancellationFigures {
  /** Requests the client aborted mid-stream. */
  cancelled: number
  /** cancelled / (the level's requests + cancelled). */
  share: number
  /** The token-bearing events after which they were aborted (1 = at the first token): the largest seen. */
  after_events: number
  /** Their TTFT: the first token arrived before the abort, so this much of the reply is measured. */
  ttft_ms: Distribution
  /** Output tokens they received before the abort (not in output_tokens nor in throughput). */
  output_tokens: number
  /**
   * The tokens the abort spared: max_tokens asked less the tokens received, summed. A server that
   * decodes on for no one generates them anyway (server-metrics/cancel-slots.ts reads that). Null
   * when a record did not say what it asked (records of older versions).
   */
  forgone_tokens: number | null
  /** Whether the server freed their slots, from its running count; absent when no scrape fell in the level. */
  slots?: SlotCheck
}

/** Fed the level's cancelled records only (LevelSummarizer routes them here); `others` = its other requests. */
export function cancellationAccumulator(
  percentiles: readonly number[],
  others: () => number,
): Accumulator<CancellationFigures | null> {
  let cancelled = 0
  let afterEvents = 0
  let outputTokens = 0
  let forgone: number | null = 0
  const ttft = new Samples()
  return {
    add(record: RequestRecord) {
      if (record.cancelled === undefined) return
      cancelled++
      afterEvents = Math.max(afterEvents, record.cancelled.after_events)
      outputTokens += record.output_tokens
      const asked = record.requested_output_tokens
      forgone =
        asked === undefined || forgone === null ? null : forgone + Math.max(0, asked - record.output_tokens)
      ttft.pushFigure(ttftMs(record))
    },
    result() {
      if (cancelled === 0) return null
      return {
        cancelled,
        share: round(cancelled / (cancelled + others()), 4),
        after_events: afterEvents,
        ttft_ms: ttft.distribution(percentiles),
        output_tokens: outputTokens,
        forgone_tokens: forgone,
      }
    },
  }
}
