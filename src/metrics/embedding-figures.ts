/**
 * What a level of embeddings requests measured. An embeddings request generates nothing and is not
 * streamed: there is no first token, no TPOT or ITL and no output tokens/s. Its latency is the
 * whole request (e2e_ms), and its throughput is inputs embedded per second and the server's
 * usage.prompt_tokens per second.
 */

import type { RequestRecord } from '../records/types.js'
import { type Accumulator, accumulate } from './accumulator.js'
import { isOk } from './derive.js'

export interface EmbeddingFigures {
  /** Texts embedded per second by successful requests (one input per request). */
  inputs_per_s: number
  /** The server's usage.prompt_tokens of successful requests per second; null when it sent none. */
  input_tokens_per_s: number | null
}

/** Over the level's measured window, `durationS` (first send to last end), as the other rates are. */
export function embeddingFigures(records: readonly RequestRecord[], durationS: number): EmbeddingFigures {
  return accumulate(
    records,
    embeddingAccumulator(() => durationS),
  )
}

/** The same, fed record by record; the window is read when the result is. */
export function embeddingAccumulator(durationS: () => number): Accumulator<EmbeddingFigures> {
  let inputs = 0
  let tokens = 0
  let counted = 0
  return {
    add(record) {
      if (!isOk(record)) return
      inputs++
      if (record.input_tokens !== null) {
        tokens += record.input_tokens
        counted++
      }
    },
    result() {
      const seconds = durationS()
      const per = (n: number): number => (seconds > 0 ? Math.round((n / seconds) * 100) / 100 : 0)
      return { inputs_per_s: per(inputs), input_tokens_per_s: counted === 0 ? null : per(tokens) }
    },
  }
}
